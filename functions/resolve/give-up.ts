// When the host gives up on a namespace's resolution, its Subscriptions say so as upstream says
// an error prevented resolution: ResolutionFailed True, reason ErrorPreventedResolution, the
// error as message; and the Warning Event ResolutionFailed on the Namespace (in `default`, as
// upstream records it). The next resolution that succeeds removes the condition.
import type { Subscription } from '../../shared/api/index.js';
import { coreEvent } from '../../shared/kube/events.js';
import { executeWrites, type Write } from '../../shared/kube/executor.js';
import { kubeTime } from '../../shared/kube/time.js';
import type { DeadWork, WorkContext } from '../../shared/runtime/types.js';
import { subscriptionStatusWrite, withResolutionFailed } from './subscription-status.js';

const fieldManager = 'olmq-resolve';

/** Pure: the writes saying `message` prevented resolving `namespace`'s Subscriptions. */
export function deadResolutionWrites(
  namespace: string,
  subscriptions: readonly Subscription[],
  message: string,
  now: Date,
): Write[] {
  const writes: Write[] = [];
  for (const sub of subscriptions) {
    const before = sub.status?.conditions ?? [];
    const conditions = withResolutionFailed(before, {
      kind: 'failed',
      reason: 'ErrorPreventedResolution',
      message,
    });
    if (JSON.stringify(conditions) === JSON.stringify(before)) continue;
    const status = { ...(sub.status ?? {}), conditions, lastUpdated: kubeTime(now) };
    writes.push(subscriptionStatusWrite(sub, status));
  }
  if (subscriptions.length > 0)
    writes.push({
      op: 'event',
      object: coreEvent(
        { apiVersion: 'v1', kind: 'Namespace', name: namespace },
        { type: 'Warning', reason: 'ResolutionFailed', message },
        now,
      ),
    });
  return writes;
}

/** Records the dead work on the Subscriptions of the namespace `work` names (best effort). */
export async function failResolutionOnDeadWork(
  work: WorkContext<{ namespace: string }>,
  dead: DeadWork,
): Promise<void> {
  const { items } = await work.client.list({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    namespace: work.key.namespace,
  });
  const subscriptions = items as unknown as Subscription[];
  const writes = deadResolutionWrites(work.key.namespace, subscriptions, dead.message, work.now());
  await executeWrites(work.client, writes, fieldManager);
}
