// When the host gives up on an InstallPlan's work (an error that says retrying cannot help, or
// too many failures in a row), the plan must not stay Installing with nothing said: it fails as
// upstream fails a plan whose execution errors past its retry window — phase Failed, message
// and Installed=False InstallComponentFailed with the error — and the Warning Event says why.
import { executeWrites } from '../../../shared/kube/executor.js';
import type { DeadWork, WorkContext } from '../../../shared/runtime/types.js';
import type { NamespacedName } from '../../../shared/runtime/work-keys.js';
import { installFieldManager, updateStatusOrStale } from '../kube-writes.js';
import { planFailedEvent } from './events.js';
import { failedPlanStatus } from './settle.js';
import type { ServedInstallPlan } from './types.js';

// Phases a plan is done in: dead work there changes nothing the plan says.
const settled = new Set(['Complete', 'Failed']);

/** Fails the plan `work` names with the error the host gave up on (best effort: the host logs). */
export async function failPlanOnDeadWork(
  work: WorkContext<NamespacedName>,
  dead: DeadWork,
): Promise<void> {
  const plan = await work.client.get<ServedInstallPlan>({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'InstallPlan',
    namespace: work.key.namespace,
    name: work.key.name,
  });
  // No status yet: the planner has not handed it over, nothing was attempted.
  if (plan?.status === undefined || settled.has(plan.status.phase)) return;
  const now = work.now();
  const status = failedPlanStatus(plan.status, dead.message, now);
  await updateStatusOrStale(work.client, { ...plan, status }, 'InstallPlan');
  await executeWrites(
    work.client,
    [{ op: 'event', object: planFailedEvent(plan, dead.message, now) }],
    installFieldManager,
  );
}
