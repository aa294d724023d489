// The simulated job controller, after kube 1.30's pkg/controller/job: a Job's pods are created
// (`<job>-<random>`), counted when they succeed or fail, replaced while failures stay within
// spec.backoffLimit, and the Job ends Complete, or Failed with BackoffLimitExceeded or
// DeadlineExceeded (spec.activeDeadlineSeconds), its remaining pods deleted.
import { systemWrite, type ApiCore } from '../api/core.js';
import { jsonEqual } from '../api/object-json.js';
import { text, type JsonObject } from '../../shared/kube/json.js';
import type { Clock } from './clock.js';
import { metadataOf, obj, ownerRef, podsOf, recordEvent, tolerate } from './workload-objects.js';

/** Reasons of a Job's Failed condition, as kube's job controller writes them. */
export const jobFailureReasons = {
  backoffLimitExceeded: 'BackoffLimitExceeded',
  deadlineExceeded: 'DeadlineExceeded',
} as const;

/** One of the Failed condition's reasons. */
export type JobFailureReason = (typeof jobFailureReasons)[keyof typeof jobFailureReasons];

const failureMessages: Record<JobFailureReason, string> = {
  BackoffLimitExceeded: 'Job has reached the specified backoff limit',
  DeadlineExceeded: 'Job was active longer than specified deadline',
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

/** A finished condition as kube 1.30 writes it (Complete has no reason or message). */
function finishedCondition(
  type: 'Complete' | 'Failed',
  now: string,
  reason?: JobFailureReason,
): JsonObject {
  const condition: JsonObject = {
    type,
    status: 'True',
    lastProbeTime: now,
    lastTransitionTime: now,
  };
  if (reason !== undefined) {
    condition['reason'] = reason;
    condition['message'] = failureMessages[reason];
  }
  return condition;
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
  const previous = obj(job['status']);
  const now = core.timestamp();
  const status: JsonObject = structuredClone(previous);
  const suspended = spec['suspend'] === true;
  if (!suspended && typeof status['startTime'] !== 'string') status['startTime'] = now;

  const podType = core.typeOf('', 'pods');
  const pods = podsOf(core, job).filter((p) => metadataOf(p)['deletionTimestamp'] === undefined);
  const succeeded = Math.max(
    numberAt(previous, 'succeeded', 0),
    pods.filter((p) => phaseOf(p) === 'Succeeded').length,
  );
  // Counts only grow, as kube's (which tracks pods with a finalizer until counted).
  let failed = Math.max(
    numberAt(previous, 'failed', 0),
    pods.filter((p) => phaseOf(p) === 'Failed').length,
  );
  let active = pods.filter((p) => phaseOf(p) !== 'Succeeded' && phaseOf(p) !== 'Failed');
  const completions = numberAt(spec, 'completions', 1);
  const parallelism = numberAt(spec, 'parallelism', 1);
  const backoffLimit = numberAt(spec, 'backoffLimit', 6);
  const deadline = spec['activeDeadlineSeconds'];

  let failure: JobFailureReason | undefined;
  if (failed > backoffLimit) failure = jobFailureReasons.backoffLimitExceeded;
  else if (typeof deadline === 'number' && typeof status['startTime'] === 'string' && !suspended) {
    const left = Date.parse(status['startTime']) + deadline * 1000 - clock.now().getTime();
    if (left <= 0) failure = jobFailureReasons.deadlineExceeded;
    else requeue(key, left);
  }

  const deleteActive = (countAsFailed: boolean): void => {
    for (const pod of active) {
      tolerate(() =>
        core.delete(podType, namespace, text(metadataOf(pod)['name']), { dryRun: false }),
      );
    }
    // Pods deleted when the job fails count as failed, as kube's controller counts them.
    if (countAsFailed) failed += active.length;
    active = [];
  };

  if (failure !== undefined) {
    deleteActive(true);
    status['conditions'] = [finishedCondition('Failed', now, failure)];
  } else if (succeeded >= completions) {
    deleteActive(false);
    status['conditions'] = [finishedCondition('Complete', now)];
    status['completionTime'] = now;
    recordEvent(core, job, 'job-controller', 'Completed', 'Job completed');
  } else if (suspended) {
    deleteActive(false);
  } else {
    const wanted = Math.min(parallelism, completions - succeeded) - active.length;
    for (let i = 0; i < wanted; i++) {
      const created = createPod(core, job, namespace, name);
      if (created) active.push(created);
    }
  }

  status['active'] = active.length;
  status['succeeded'] = succeeded;
  status['failed'] = failed;
  status['terminating'] = 0;
  status['ready'] = active.filter((p) => isPodReady(p)).length;
  status['uncountedTerminatedPods'] = {};
  for (const counter of ['active', 'succeeded', 'failed'] as const)
    if (status[counter] === 0) delete status[counter];
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

function createPod(
  core: ApiCore,
  job: JsonObject,
  namespace: string,
  name: string,
): JsonObject | undefined {
  const template = obj(obj(job['spec'])['template']);
  const body: JsonObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...structuredClone(obj(template['metadata'])),
      generateName: `${name}-`,
      namespace,
      ownerReferences: [ownerRef(job, 'Job', 'batch/v1')],
    },
    spec: structuredClone(obj(template['spec'])),
  };
  let created: JsonObject | undefined;
  tolerate(() => {
    created = core.create(core.typeOf('', 'pods'), namespace, body, systemWrite('job-controller'));
  });
  if (created !== undefined) {
    recordEvent(
      core,
      job,
      'job-controller',
      'SuccessfulCreate',
      `Created pod: ${text(metadataOf(created)['name'])}`,
    );
  }
  return created;
}
