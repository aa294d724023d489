// Performs a plan pass: each step write in order, runs of one kind at once (as the
// OperatorGroup's service account for a scoped install), the API warnings each step drew recorded as upstream does, then the plan
// status that follows from what the writes did.
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { KubeClient, KubeObject } from '../../../shared/kube/client.js';
import { isConflict } from '../../../shared/kube/errors.js';
import {
  executeWrite,
  executeWrites,
  type Write,
  type WriteObserver,
} from '../../../shared/kube/executor.js';
import type { ApiWarning } from '../../../shared/kube/warnings.js';
import { StaleDecisionError } from '../../../shared/runtime/function-host.js';
import { installFieldManager, updateStatusOrStale } from '../kube-writes.js';
import type { ScopedClients } from '../scope.js';
import { planErrorOf } from './errors.js';
import { appliedWithWarningsEvent, planFailedEvent } from './events.js';
import { settlePlan, statusChanged } from './settle.js';
import type { ServedInstallPlan, PlanError, PlanWrites, StepWrite } from './types.js';

/** What applying a plan pass uses besides its writes. */
export interface PlanApplyContext {
  client: KubeClient;
  scoped: ScopedClients;
  now: () => Date;
  log: Logger;
  /** Counts one step that drew warnings (installplan_warnings_total). */
  countWarnings: () => void;
  /** How long a failing plan retries before it is Failed (default upstream's minute). */
  retryWindowMs?: number;
  /** Hears of the plan's status write and the resourceVersion it left (own-writes.ts). */
  observe?: WriteObserver;
}

// Events are best effort, as upstream's recorder: a failure is logged, never fails the pass.
async function recordPlanEvent(
  client: KubeClient,
  event: KubeObject,
  c: PlanApplyContext,
): Promise<void> {
  try {
    await executeWrites(client, [{ op: 'event', object: event }], installFieldManager);
  } catch (e) {
    c.log.warn({ err: e, reason: event['reason'] }, 'recording an InstallPlan Event failed');
  }
}

// Upstream: one Event and one installplan_warnings_total count per step that drew warnings.
async function recordWarnings(
  plan: ServedInstallPlan,
  step: number,
  warnings: readonly string[],
  c: PlanApplyContext,
): Promise<void> {
  c.countWarnings();
  const event = appliedWithWarningsEvent(plan, step, warnings, c.now());
  c.log.info({ step, warnings }, 'install plan step applied with warnings');
  await recordPlanEvent(c.client, event, c);
}

/**
 * Writes the plan status a pass led to. When the write conflicts only because the plan's
 * metadata moved on (the Operator API labels it, a user annotates it) — spec and status as this
 * pass read them — it is written again on the fresh plan: deciding again would find the objects
 * this pass created and report them Present rather than Created (upstream's behaviour when its
 * status write conflicts, which olmq avoids).
 */
async function writePlanStatus(
  client: KubeClient,
  plan: ServedInstallPlan,
  status: NonNullable<ServedInstallPlan['status']>,
): Promise<string | undefined> {
  try {
    const answer = await client.updateStatus({ ...plan, status }, { answer: 'metadata' });
    return answer.metadata.resourceVersion;
  } catch (error) {
    if (!isConflict(error)) throw error;
    const fresh = await client.get<ServedInstallPlan>({
      apiVersion: plan.apiVersion,
      kind: plan.kind,
      namespace: plan.metadata.namespace,
      name: plan.metadata.name ?? '',
    });
    const unchanged =
      fresh !== undefined &&
      fresh.metadata.uid === plan.metadata.uid &&
      isDeepStrictEqual(fresh.spec, plan.spec) &&
      isDeepStrictEqual(fresh.status, plan.status);
    if (!unchanged) {
      throw new StaleDecisionError(`InstallPlan status: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return updateStatusOrStale(client, { ...fresh, status }, 'InstallPlan');
  }
}

/** The kind a step writes. */
const kindOf = (w: StepWrite): string => ('object' in w.write ? w.write.object : w.write.ref).kind;

/**
 * The steps in runs of one kind, in order: nothing orders, say, a bundle's CRDs among
 * themselves, so each run is written at once (a plan pass is on every install's path), while
 * the kinds keep upstream's order.
 */
function batchesOf(steps: readonly StepWrite[]): StepWrite[][] {
  const batches: StepWrite[][] = [];
  for (const step of steps) {
    const last = batches.at(-1);
    const first = last?.[0];
    if (last !== undefined && first !== undefined && kindOf(first) === kindOf(step))
      last.push(step);
    else batches.push([step]);
  }
  return batches;
}

/**
 * `w`'s write with its owner reference pointing at the uid its CSV's create answered (a CSV
 * created earlier in the pass). Without one the CSV create did not answer as it should: the pass
 * is decided again on what the API has.
 */
function withOwnerUid(w: StepWrite, created: ReadonlyMap<string, string>): Write {
  if (w.ownerCsv === undefined || !('object' in w.write)) return w.write;
  const uid = created.get(w.ownerCsv);
  if (uid === undefined || uid === '')
    throw new StaleDecisionError(`the uid of ClusterServiceVersion ${w.ownerCsv} is unknown`);
  const object = structuredClone(w.write.object);
  for (const ref of object.metadata.ownerReferences ?? [])
    if (ref.kind === 'ClusterServiceVersion' && ref.name === w.ownerCsv && ref.uid === '')
      ref.uid = uid;
  return { ...w.write, object };
}

/** Writes the steps of `writes` (runs of one kind at once), then the plan status they lead to. */
export async function applyPlan(writes: PlanWrites, c: PlanApplyContext): Promise<void> {
  if (writes.plan === undefined || writes.status === undefined) return;
  const { client } = c;
  const scopedClient =
    writes.status.attenuatedServiceAccountRef === undefined
      ? client
      : c.scoped.clientFor(
          client,
          writes.plan.metadata.namespace ?? '',
          writes.status.attenuatedServiceAccountRef.name ?? '',
        );
  let succeeded = 0;
  let error: PlanError | undefined;
  // The uid of each CSV this pass created, by name: the objects it owns point at it.
  const created = new Map<string, string>();
  for (const batch of batchesOf(writes.steps)) {
    // API warnings (HTTP 299) are attributed to the step whose writes drew them.
    const outcomes = await Promise.all(
      batch.map(async (w) => {
        const warnings: string[] = [];
        const collect = (warning: ApiWarning): void => {
          if (warning.code === 299) warnings.push(warning.text);
        };
        const writer = (w.scoped ? scopedClient : client).withWarningHandler(collect);
        try {
          const answer = await executeWrite(writer, withOwnerUid(w, created), installFieldManager);
          if (kindOf(w) === 'ClusterServiceVersion' && answer?.metadata.uid !== undefined)
            created.set(answer.metadata.name ?? '', answer.metadata.uid);
          return { w, warnings, failure: undefined };
        } catch (e) {
          return { w, warnings, failure: { e } };
        }
      }),
    );
    // In step order: the plan's status counts the steps written before the first that failed.
    for (const { w, warnings, failure } of outcomes) {
      if (warnings.length > 0) await recordWarnings(writes.plan, w.step, warnings, c);
      if (failure === undefined) {
        succeeded++;
        continue;
      }
      const e = failure.e;
      if (e instanceof StaleDecisionError || isConflict(e)) throw e; // re-read and decide again
      error = planErrorOf(e, {
        step: w.step,
        ...('object' in w.write ? { object: w.write.object } : {}),
      });
      c.log.info({ step: w.step, err: e }, 'install plan step failed');
      break;
    }
    if (error !== undefined) break;
  }
  const status = settlePlan(
    writes,
    { succeeded, ...(error === undefined ? {} : { error }) },
    c.now(),
    c.retryWindowMs,
  );
  if (status === undefined || !statusChanged(writes.plan.status, status)) return;
  const version = await writePlanStatus(client, writes.plan, status);
  c.observe?.({ op: 'updateStatus', object: { ...writes.plan, status } }, version, true);
  if (status.phase === 'Failed' && writes.plan.status?.phase !== 'Failed')
    await recordPlanEvent(client, planFailedEvent(writes.plan, status.message ?? '', c.now()), c);
}
