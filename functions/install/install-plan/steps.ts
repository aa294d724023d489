// Which steps of a plan still need work, and the cluster object each one names.
import type { InstallPlanStatus, Step } from '../../../shared/api/installplan.js';
import type { ObjectRef } from '../../../shared/kube/client.js';
import { apiVersionOf, objectKindOf, stepKinds } from '../../../shared/install-plan/index.js';

/** Step statuses that need no more work. */
export const done: ReadonlySet<Step['status']> = new Set<Step['status']>(['Present', 'Created']);

/** The cluster object a step names (for loading), or undefined when its manifest is unreadable. */
export function stepObjectRef(step: Step, namespace: string): ObjectRef | undefined {
  const kind = stepKinds[step.resource.kind];
  return {
    apiVersion: apiVersionOf(step.resource),
    kind: objectKindOf(step.resource),
    namespace: kind === undefined || kind.namespaced ? namespace : undefined,
    name: step.resource.name,
  };
}

/** Steps whose cluster object the decision needs (not yet done, or CRDs being checked). */
export function stepsToRead(status: InstallPlanStatus | undefined): number[] {
  return (status?.plan ?? []).flatMap((step, i) => (done.has(step.status) ? [] : [i]));
}
