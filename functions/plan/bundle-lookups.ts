// Bundles that come from their image (no olm.bundle.object in the catalog): the lookups an
// InstallPlan records in status.bundleLookups, whether they are done, still pending, or failed,
// and the OperatorGroup annotations that time them. Pure.
//
// Upstream runs an unpack Job per bundle and waits for it; olmq pulls the image while it plans
// (milliseconds), so a lookup is pending only while the registry cannot be reached (or, with
// a minimum retry interval set, while a failing unpack is retried), until the timeout.
import type { InstallPlan, OperatorGroup, SubscriptionCondition } from '../../shared/api/index.js';
import { codes } from '../../shared/api/index.js';
import type { BundleLookup } from '../../shared/api/installplan.js';
import { withCondition, withoutCondition } from '../../shared/api/conditions.js';
import type { RecordedBundle } from '../../shared/resolver/record.js';

/** OperatorGroup annotation: how long a bundle may take to unpack (Go duration; default 10m). */
export const unpackTimeoutAnnotation = 'operatorframework.io/bundle-unpack-timeout';
/**
 * OperatorGroup annotation: the least time between two unpack attempts (Go duration). When set,
 * a failed unpack is retried at this interval until the timeout, as upstream recreates a
 * failed unpack Job; when unset, only an unreachable registry is retried.
 */
export const unpackRetryAnnotation = 'operatorframework.io/bundle-unpack-min-retry-interval';

/** Upstream's default unpack timeout (the catalog operator's --bundle-unpack-timeout). */
export const defaultUnpackTimeoutMs = 10 * 60_000;
/** How soon a pending lookup is tried again (upstream requeues the namespace after 5 s). */
export const defaultUnpackRetryMs = 5_000;

/** What the load found for one bundle that comes from its image. */
export interface BundleImageRead {
  /** The bundle image reference. */
  image: string;
  /** Why it could not be unpacked; absent when it was. */
  problem?: { message: string; retryable: boolean };
}

/** The unpack timing of a namespace. */
export interface UnpackTiming {
  timeoutMs: number;
  /** Set when the OperatorGroup asks for failed unpacks to be retried. */
  minRetryMs?: number;
}

const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A Go duration ("10m", "1m30s", "500ms") in ms, or undefined when it is not one. */
export function goDurationMs(text: string): number | undefined {
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) return text === '0' ? 0 : undefined;
  let total = 0;
  for (const [, amount = '0', , unit = 's'] of text.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(amount) * (unitMs[unit] ?? 0);
  }
  return total;
}

/**
 * The timing the namespace's OperatorGroup asks for. As upstream, only a single OperatorGroup
 * is read, and an unset, malformed or negative timeout means the default.
 */
export function unpackTimingOf(operatorGroups: readonly OperatorGroup[]): UnpackTiming {
  const annotations =
    operatorGroups.length === 1 ? operatorGroups[0]?.metadata.annotations : undefined;
  const timeout = goDurationMs(annotations?.[unpackTimeoutAnnotation] ?? '');
  const retry = goDurationMs(annotations?.[unpackRetryAnnotation] ?? '');
  return {
    timeoutMs: timeout === undefined || timeout <= 0 ? defaultUnpackTimeoutMs : timeout,
    ...(retry === undefined || retry <= 0 ? {} : { minRetryMs: retry }),
  };
}

/** Where a plan's lookups stand. */
export type LookupVerdict =
  | { kind: 'ready'; lookups: BundleLookup[] }
  | { kind: 'pending'; lookups: BundleLookup[]; retryAfterMs: number }
  | { kind: 'failed'; lookups: BundleLookup[]; message: string };

const { BundleLookupConditionType: Cond, BundleLookupReason: Reason } = codes;

/** Upstream's Subscription message for a failed lookup, also the failed plan's message. */
export function unpackFailedMessage(reason: string, message: string): string {
  return `bundle unpacking failed. Reason: ${reason}, and Message: ${message}`;
}

/** Judges the lookups of `plan` for the bundles of its group that come from images. */
export function judgeLookups(input: {
  plan: InstallPlan;
  bundles: readonly RecordedBundle[];
  reads: ReadonlyMap<string, BundleImageRead>;
  timing: UnpackTiming;
  now: string;
}): LookupVerdict {
  const { plan, timing, now } = input;
  const started = Date.parse(plan.metadata.creationTimestamp ?? now);
  const elapsed = Math.max(0, Date.parse(now) - started);
  const previous = new Map((plan.status?.bundleLookups ?? []).map((l) => [l.identifier, l]));
  const lookups: BundleLookup[] = [];
  let failed: string | undefined;
  let pending = false;
  for (const bundle of input.bundles) {
    const read = input.reads.get(bundle.name);
    if (read === undefined) continue;
    const lookup: BundleLookup = {
      path: read.image,
      identifier: bundle.name,
      replaces: bundle.replaces ?? '',
      catalogSourceRef: {
        kind: 'CatalogSource',
        namespace: bundle.catalog.namespace,
        name: bundle.catalog.name,
      },
      properties: JSON.stringify({ properties: bundle.properties }),
    };
    const problem = read.problem;
    if (problem !== undefined) {
      const retried = problem.retryable || timing.minRetryMs !== undefined;
      const condition =
        !retried || elapsed >= timing.timeoutMs
          ? {
              type: Cond.BundleLookupFailed,
              reason: retried ? Reason.DeadlineExceeded : Reason.JobFailed,
              message: retried
                ? `bundle unpack did not finish within the timeout (${timing.timeoutMs / 1000}s): ${problem.message}`
                : problem.message,
            }
          : {
              type: Cond.BundleLookupPending,
              reason: Reason.JobIncomplete,
              message: `unpack job not completed: ${problem.message}`,
            };
      const old = previous.get(bundle.name)?.conditions?.find((c) => c.type === condition.type);
      lookup.conditions = [
        {
          ...condition,
          status: 'True',
          lastUpdateTime: now,
          lastTransitionTime: old?.status === 'True' ? (old.lastTransitionTime ?? now) : now,
        },
      ];
      if (condition.type === Cond.BundleLookupFailed) {
        failed ??= unpackFailedMessage(condition.reason, condition.message);
      } else pending = true;
    }
    lookups.push(lookup);
  }
  if (failed !== undefined) return { kind: 'failed', lookups, message: failed };
  if (pending) {
    const wait = timing.minRetryMs ?? defaultUnpackRetryMs;
    return {
      kind: 'pending',
      lookups,
      retryAfterMs: Math.max(1, Math.min(wait, timing.timeoutMs - elapsed)),
    };
  }
  return { kind: 'ready', lookups };
}

/**
 * A Subscription's unpack conditions from the plan it follows: BundleUnpacking while a lookup
 * is pending, BundleUnpackFailed (upstream's reason and message) once one failed; when neither,
 * BundleUnpackFailed is removed and a BundleUnpacking left over turns False, as upstream does.
 */
export function unpackConditions(
  conditions: readonly SubscriptionCondition[],
  plan: InstallPlan | undefined,
  now: string,
): SubscriptionCondition[] {
  const { SubscriptionConditionType: Type, SubscriptionConditionReason: SubReason } = codes;
  const all = (plan?.status?.bundleLookups ?? []).flatMap((l) => l.conditions ?? []);
  const failed = all.find((c) => c.type === Cond.BundleLookupFailed && c.status === 'True');
  const pending = all.some((c) => c.type === Cond.BundleLookupPending && c.status === 'True');
  let out = [...conditions];
  if (failed !== undefined) {
    out = withoutCondition(out, Type.BundleUnpacking);
    return withCondition(
      out,
      {
        type: Type.BundleUnpackFailed,
        status: 'True',
        reason: SubReason.BundleUnpackFailed,
        message: unpackFailedMessage(failed.reason ?? '', failed.message ?? ''),
      },
      now,
    );
  }
  out = withoutCondition(out, Type.BundleUnpackFailed);
  if (pending) {
    return withCondition(
      out,
      { type: Type.BundleUnpacking, status: 'True', reason: SubReason.UnpackingInProgress },
      now,
    );
  }
  if (out.some((c) => c.type === Type.BundleUnpacking)) {
    out = withCondition(out, { type: Type.BundleUnpacking, status: 'False' }, now);
  }
  return out;
}
