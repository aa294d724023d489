// rbac-sweep: a group vanished; removes the olm.operatorgroup.uid labels of groups that no
// longer exist from every namespace of the cluster. No trigger: the groups decision hands it
// on when it deletes a vanished group's aggregated roles.
import { OlmLabelPrefix } from '../../shared/api/codes.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import type { FunctionDefinition } from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { applyWrites } from './io.js';
import { sweepKey } from './keys.js';
import type { RbacContext } from './types.js';

/** What the sweep decides from. */
export interface SweepSnapshot {
  /** Every namespace of the cluster, from the API. */
  namespaces: readonly KubeObject[];
  /** Uids of the groups the mirror shows. */
  liveGroupUids: ReadonlySet<string>;
}

/** Pure: a label patch for each namespace carrying the label of a group not live. */
export function decideSweep(s: SweepSnapshot): Write[] {
  const writes: Write[] = [];
  for (const ns of s.namespaces) {
    const stale = Object.keys(ns.metadata.labels ?? {}).filter(
      (k) =>
        k.startsWith(OlmLabelPrefix.OperatorGroupUid) &&
        !s.liveGroupUids.has(k.slice(OlmLabelPrefix.OperatorGroupUid.length)),
    );
    if (stale.length === 0) continue;
    writes.push({
      op: 'patch',
      ref: { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata.name },
      type: 'merge',
      patch: { metadata: { labels: Object.fromEntries(stale.map((k) => [k, null])) } },
    });
  }
  return writes;
}

/** The rbac-sweep definition. */
export function sweepDefinition(
  context: RbacContext,
): FunctionDefinition<FieldKey<never>, SweepSnapshot, Write[]> {
  return {
    key: sweepKey,
    triggers: [],
    async load(work) {
      // Namespaces first: a label is written by a namespace reconcile that read its group from
      // the mirror, so every label listed belongs to a group mirrored before the listing, which
      // the view read afterwards shows unless the group is gone.
      const namespaces = await work.client.list({ apiVersion: 'v1', kind: 'Namespace' });
      const groups = await context.groups.list(work.cluster);
      return {
        namespaces: namespaces.items,
        liveGroupUids: new Set(groups.map((g) => g.metadata.uid ?? '')),
      };
    },
    decide: (s) => ({ writes: decideSweep(s) }),
    apply: (writes, work) => applyWrites(context, writes, work),
  };
}
