// Status conditions as OLM keeps them: one per type; lastTransitionTime moves only when the
// status does, and an unchanged condition is left as it is (so unchanged input writes nothing).
import type { SubscriptionCondition } from './subscription.js';

/** Sets (or replaces) the condition of `condition.type`, keeping lastTransitionTime when the status holds. */
export function withCondition(
  conditions: readonly SubscriptionCondition[],
  condition: SubscriptionCondition,
  now: string,
): SubscriptionCondition[] {
  const old = conditions.find((c) => c.type === condition.type);
  if (
    old !== undefined &&
    old.status === condition.status &&
    old.reason === condition.reason &&
    old.message === condition.message
  ) {
    return [...conditions];
  }
  const next: SubscriptionCondition = {
    ...condition,
    lastTransitionTime:
      old !== undefined && old.status === condition.status ? (old.lastTransitionTime ?? now) : now,
  };
  return [...conditions.filter((c) => c.type !== condition.type), next];
}

/** Removes the condition of `type`. */
export function withoutCondition(
  conditions: readonly SubscriptionCondition[],
  type: string,
): SubscriptionCondition[] {
  return conditions.filter((c) => c.type !== type);
}
