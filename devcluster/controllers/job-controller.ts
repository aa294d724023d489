// The simulated job controller, after kube 1.30's pkg/controller/job: a Job's pods are created
// (at most spec.parallelism at once; per completion index for Indexed Jobs), counted when they
// succeed or fail (failed pods judged by spec.podFailurePolicy), replaced while failures stay
// within spec.backoffLimit (and backoffLimitPerIndex), and the Job ends Complete, or Failed with
// one of jobFailureReasons, its remaining pods deleted.
import { systemWrite, type ApiCore } from '../api/core.js';
import { jsonEqual } from '../api/object-json.js';
import { text, type JsonObject } from '../../shared/kube/json.js';
import type { Clock } from './clock.js';
import { judgeFailedPod, podFailurePolicyActions } from './job-failure-policy.js';
import { formatIndexes, indexOf, parseIndexes } from './job-indexes.js';
import { createJobPod } from './job-pods.js';
import { metadataOf, obj, podsOf, recordEvent, tolerate } from './workload-objects.js';

/** Reasons of a Job's Failed condition, as kube's job controller writes them. */
export const jobFailureReasons = {
  backoffLimitExceeded: 'BackoffLimitExceeded',
  deadlineExceeded: 'DeadlineExceeded',
  podFailurePolicy: 'PodFailurePolicy',
  failedIndexes: 'FailedIndexes',
  maxFailedIndexesExceeded: 'MaxFailedIndexesExceeded',
} as const;

/** One of the Failed condition's reasons. */
export type JobFailureReason = (typeof jobFailureReasons)[keyof typeof jobFailureReasons];

const failureMessages: Record<JobFailureReason, string> = {
  BackoffLimitExceeded: 'Job has reached the specified backoff limit',
  DeadlineExceeded: 'Job was active longer than specified deadline',
  // The pod failure policy's message names the pod and the rule (job-failure-policy.ts).
  PodFailurePolicy: '',
  FailedIndexes: 'Job has failed indexes',
  MaxFailedIndexesExceeded: 'Job has exceeded the specified maximal number of failed indexes',
};

function numberAt(spec: JsonObject, key: string, fallback: number): number {
  const value = spec[key];
  return typeof value === 'number' ? value : fallback;
}

function finished(job: JsonObject): boolean {
  const conditions = obj(job['status'])['conditions'];
  return (
    Array.isArray(conditions) &&
    conditions.some(
      (c) =>
        (obj(c)['type'] === 'Complete' || obj(c)['type'] === 'Failed') &&
        obj(c)['status'] === 'True',
    )
  );
}

function phaseOf(pod: JsonObject): string {
  return text(obj(pod['status'])['phase'] ?? '');
}

/** A condition as kube 1.30 writes it (Complete has no reason or message). */
function jobCondition(
  type: 'Complete' | 'Failed' | 'FailureTarget',
  now: string,
  failure?: { reason: JobFailureReason; message: string },
): JsonObject {
  const condition: JsonObject = {
    type,
    status: 'True',
    lastProbeTime: now,
    lastTransitionTime: now,
  };
  if (failure !== undefined) {
    condition['reason'] = failure.reason;
    condition['message'] = failure.message;
  }
  return condition;
}

/** What a Job's pods add up to. */
interface PodCounts {
  active: JsonObject[];
  succeeded: number;
  failed: number;
  /** Indexed Jobs: indexes that succeeded, and those given up (backoffLimitPerIndex). */
  succeededIndexes: Set<number>;
  failedIndexes: Set<number>;
  /** Per index: failures counted, and failures the pod failure policy ignored. */
  failuresOf: Map<number, { counted: number; ignored: number }>;
  /** The first pod failure matching a FailJob rule, with kube's message. */
  failJob: string | undefined;
}

function countPods(job: JsonObject, pods: JsonObject[]): PodCounts {
  const spec = obj(job['spec']);
  const previous = obj(job['status']);
  const completions = numberAt(spec, 'completions', 1);
  const perIndex = spec['backoffLimitPerIndex'];
  const indexed = spec['completionMode'] === 'Indexed';
  const succeededIndexes = parseIndexes(previous['completedIndexes'], completions);
  const failedIndexes = parseIndexes(previous['failedIndexes'], completions);
  const failuresOf = new Map<number, { counted: number; ignored: number }>();
  let succeeded = 0;
  let counted = 0;
  let failJob: string | undefined;
  for (const pod of pods) {
    const phase = phaseOf(pod);
    const index = indexOf(pod);
    if (phase === 'Succeeded') {
      succeeded++;
      if (index !== undefined && index < completions) succeededIndexes.add(index);
    }
    if (phase !== 'Failed') continue;
    const verdict = judgeFailedPod(spec['podFailurePolicy'], pod);
    if (verdict.counts) counted++;
    if (verdict.action === podFailurePolicyActions.failJob) failJob ??= verdict.message;
    if (index === undefined || index >= completions) continue;
    const failures = failuresOf.get(index) ?? { counted: 0, ignored: 0 };
    if (verdict.counts) failures.counted++;
    else failures.ignored++;
    failuresOf.set(index, failures);
    const overLimit = typeof perIndex === 'number' && failures.counted > perIndex;
    if (verdict.action === podFailurePolicyActions.failIndex || overLimit) failedIndexes.add(index);
  }
  for (const index of succeededIndexes) failedIndexes.delete(index);
  return {
    active: pods.filter((p) => phaseOf(p) !== 'Succeeded' && phaseOf(p) !== 'Failed'),
    // Counts only grow, as kube's (which tracks pods with a finalizer until counted).
    succeeded: Math.max(
      numberAt(previous, 'succeeded', 0),
      indexed ? succeededIndexes.size : succeeded,
    ),
    failed: Math.max(numberAt(previous, 'failed', 0), counted),
    succeededIndexes,
    failedIndexes,
    failuresOf,
    failJob,
  };
}

/** Why the Job fails now, if it does (kube's order: pod failure policy, limits, deadline). */
function failureOf(
  spec: JsonObject,
  counts: PodCounts,
  startTime: unknown,
  nowMs: number,
): { reason: JobFailureReason; message: string; left?: number } | undefined {
  const fail = (reason: JobFailureReason): { reason: JobFailureReason; message: string } => ({
    reason,
    message: failureMessages[reason],
  });
  if (counts.failJob !== undefined)
    return { reason: jobFailureReasons.podFailurePolicy, message: counts.failJob };
  const perIndex = typeof spec['backoffLimitPerIndex'] === 'number';
  const backoffLimit = numberAt(spec, 'backoffLimit', perIndex ? 2147483647 : 6);
  if (counts.failed > backoffLimit) return fail(jobFailureReasons.backoffLimitExceeded);
  const maxFailed = spec['maxFailedIndexes'];
  if (typeof maxFailed === 'number' && counts.failedIndexes.size > maxFailed)
    return fail(jobFailureReasons.maxFailedIndexesExceeded);
  const deadline = spec['activeDeadlineSeconds'];
  if (typeof deadline === 'number' && typeof startTime === 'string' && spec['suspend'] !== true) {
    const left = Date.parse(startTime) + deadline * 1000 - nowMs;
    if (left <= 0) return fail(jobFailureReasons.deadlineExceeded);
    return { ...fail(jobFailureReasons.deadlineExceeded), left };
  }
  return undefined;
}

/** The indexes of an Indexed Job that have no pod running and are neither done nor given up. */
function pendingIndexes(completions: number, counts: PodCounts): number[] {
  const running = new Set(counts.active.map(indexOf));
  const pending: number[] = [];
  for (let i = 0; i < completions; i++)
    if (!counts.succeededIndexes.has(i) && !counts.failedIndexes.has(i) && !running.has(i))
      pending.push(i);
  return pending;
}

/**
 * Reconciles the Job `namespace/name`; `requeue` looks at it again after a delay (for the
 * active deadline).
 */
export function reconcileJob(
  core: ApiCore,
  key: string,
  clock: Clock,
  requeue: (key: string, delayMs: number) => void,
): void {
  const [namespace = '', name = ''] = key.split('/');
  const job = core.store.get('jobs.batch', namespace, name);
  if (!job || metadataOf(job)['deletionTimestamp'] !== undefined || finished(job)) return;
  const spec = obj(job['spec']);
  const now = core.timestamp();
  const status: JsonObject = structuredClone(obj(job['status']));
  const suspended = spec['suspend'] === true;
  if (!suspended && typeof status['startTime'] !== 'string') status['startTime'] = now;

  const podType = core.typeOf('', 'pods');
  const pods = podsOf(core, job).filter((p) => metadataOf(p)['deletionTimestamp'] === undefined);
  const counts = countPods(job, pods);
  const completions = numberAt(spec, 'completions', 1);
  const parallelism = numberAt(spec, 'parallelism', 1);
  const indexed = spec['completionMode'] === 'Indexed';
  const perIndexLimit = typeof spec['backoffLimitPerIndex'] === 'number';

  const deleteActive = (countAsFailed: boolean): void => {
    for (const pod of counts.active) {
      tolerate(() =>
        core.delete(podType, namespace, text(metadataOf(pod)['name']), { dryRun: false }),
      );
    }
    // Pods deleted when the job fails count as failed, as kube's controller counts them.
    if (countAsFailed) counts.failed += counts.active.length;
    counts.active = [];
  };

  let failure = failureOf(spec, counts, status['startTime'], clock.now().getTime());
  if (failure?.left !== undefined) {
    requeue(key, failure.left);
    failure = undefined;
  }
  const allIndexesDone =
    indexed && counts.succeededIndexes.size + counts.failedIndexes.size >= completions;
  if (failure === undefined && allIndexesDone && counts.failedIndexes.size > 0)
    failure = { reason: jobFailureReasons.failedIndexes, message: failureMessages.FailedIndexes };

  if (failure !== undefined) {
    deleteActive(true);
    // A pod failure policy's verdict is first a FailureTarget, then Failed (kube 1.30).
    status['conditions'] =
      failure.reason === jobFailureReasons.podFailurePolicy
        ? [jobCondition('FailureTarget', now, failure), jobCondition('Failed', now, failure)]
        : [jobCondition('Failed', now, failure)];
  } else if (counts.succeeded >= completions) {
    deleteActive(false);
    status['conditions'] = [jobCondition('Complete', now)];
    status['completionTime'] = now;
    recordEvent(core, job, 'job-controller', 'Completed', 'Job completed');
  } else if (suspended) {
    deleteActive(false);
  } else if (indexed) {
    const room = parallelism - counts.active.length;
    for (const index of pendingIndexes(completions, counts).slice(0, Math.max(0, room))) {
      const failures = counts.failuresOf.get(index) ?? { counted: 0, ignored: 0 };
      const created = createJobPod(
        core,
        job,
        { index, failures: failures.counted, ignoredFailures: failures.ignored },
        perIndexLimit,
      );
      if (created) counts.active.push(created);
    }
  } else {
    const wanted = Math.min(parallelism, completions - counts.succeeded) - counts.active.length;
    for (let i = 0; i < wanted; i++) {
      const created = createJobPod(core, job, undefined, false);
      if (created) counts.active.push(created);
    }
  }

  status['active'] = counts.active.length;
  status['succeeded'] = counts.succeeded;
  status['failed'] = counts.failed;
  status['terminating'] = 0;
  status['ready'] = counts.active.filter((p) => isPodReady(p)).length;
  status['uncountedTerminatedPods'] = {};
  if (indexed) status['completedIndexes'] = formatIndexes(counts.succeededIndexes);
  if (perIndexLimit) status['failedIndexes'] = formatIndexes(counts.failedIndexes);
  for (const counter of ['active', 'succeeded', 'failed'] as const)
    if (status[counter] === 0) delete status[counter];
  if (status['completedIndexes'] === '') delete status['completedIndexes'];
  if (jsonEqual(status, job['status'] ?? {})) return;
  const copy = structuredClone(job);
  copy['status'] = status;
  tolerate(() =>
    core.update(
      core.typeOf('batch', 'jobs'),
      namespace,
      name,
      copy,
      systemWrite('job-controller'),
      'status',
    ),
  );
}

function isPodReady(pod: JsonObject): boolean {
  const conditions = obj(pod['status'])['conditions'];
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => obj(c)['type'] === 'Ready' && obj(c)['status'] === 'True')
  );
}
