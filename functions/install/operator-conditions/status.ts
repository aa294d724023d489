// An OperatorCondition's status: spec.conditions mirrored into status.conditions with
// observedGeneration, as upstream's controller does. Pure.
import { kubeTimestamp } from '../certificates.js';
import type { ConditionEntry, ServedOperatorCondition } from './types.js';

/** upstream's meta.SetStatusCondition onto a copy of `conditions`. */
function setCondition(
  conditions: readonly ConditionEntry[],
  entry: ConditionEntry,
  now: Date,
): ConditionEntry[] {
  const at = kubeTimestamp(now);
  const i = conditions.findIndex((c) => c.type === entry.type);
  const current = conditions[i];
  if (current === undefined)
    return [...conditions, { ...entry, lastTransitionTime: entry.lastTransitionTime ?? at }];
  const next: ConditionEntry = {
    ...current,
    status: entry.status,
    ...(entry.reason === undefined ? {} : { reason: entry.reason }),
    ...(entry.message === undefined ? {} : { message: entry.message }),
    ...(entry.observedGeneration === undefined
      ? {}
      : { observedGeneration: entry.observedGeneration }),
  };
  if (current.status !== entry.status) next.lastTransitionTime = entry.lastTransitionTime ?? at;
  return conditions.map((c, j) => (j === i ? next : c));
}

/** The condition's status with spec.conditions mirrored (observedGeneration set), or undefined when current. */
export function mirroredStatus(
  condition: ServedOperatorCondition,
  now: Date,
): ServedOperatorCondition['status'] | undefined {
  const generation = condition.metadata.generation ?? 0;
  let conditions = condition.status?.conditions ?? [];
  let changed = false;
  for (const wanted of condition.spec?.conditions ?? []) {
    const have = conditions.find((c) => c.type === wanted.type);
    if (have?.status === wanted.status && have.observedGeneration === generation) continue;
    conditions = setCondition(conditions, { ...wanted, observedGeneration: generation }, now);
    changed = true;
  }
  return changed ? { ...condition.status, conditions } : undefined;
}
