// The plan status after a pass: step statuses from what the writes did, the retry window,
// Failed and Complete with their Installed condition. Pure.
import type { InstallPlanCondition, InstallPlanStatus } from '../../../shared/api/installplan.js';
import { done } from './steps.js';
import type { PlanOutcome, PlanWrites } from './types.js';
import { kubeTime } from '../../../shared/kube/time.js';

/** How long a failing plan keeps retrying before it Failed (upstream's install-plan-retry-timeout: 1 minute). */
export const defaultPlanRetryWindowMs = 60_000;

/** Sets the condition of `next`'s type (its transition time kept while its status stays). */
export function setCondition(
  conditions: readonly InstallPlanCondition[] | undefined,
  next: InstallPlanCondition,
): InstallPlanCondition[] {
  const rest = (conditions ?? []).filter((c) => c.type !== next.type);
  const previous = (conditions ?? []).find((c) => c.type === next.type);
  const transition =
    previous !== undefined &&
    previous.status === next.status &&
    previous.lastTransitionTime !== undefined
      ? previous.lastTransitionTime
      : next.lastUpdateTime;
  return [
    ...rest,
    { ...next, ...(transition === undefined ? {} : { lastTransitionTime: transition }) },
  ];
}

/** Pure: `status` Failed with `message`, as upstream fails a plan (Installed=False, InstallComponentFailed). */
export function failedPlanStatus(
  status: InstallPlanStatus,
  message: string,
  now: Date,
): InstallPlanStatus {
  const { message: _message, ...rest } = status;
  return {
    ...rest,
    phase: 'Failed',
    message,
    conditions: setCondition(status.conditions, {
      type: 'Installed',
      status: 'False',
      reason: 'InstallComponentFailed',
      message,
      lastUpdateTime: kubeTime(now, 'millis'),
    }),
  };
}

/** Pure: the plan status after a pass, given what the writes did. */
export function settlePlan(
  writes: PlanWrites,
  outcome: PlanOutcome,
  now: Date,
  retryWindowMs = defaultPlanRetryWindowMs,
): InstallPlanStatus | undefined {
  if (writes.status === undefined) return undefined;
  const status = structuredClone(writes.status);
  const steps = status.plan ?? [];
  for (const w of writes.steps.slice(0, outcome.succeeded)) {
    const step = steps[w.step];
    if (step !== undefined) step.status = w.status;
  }
  const error = writes.error ?? outcome.error;
  const at = kubeTime(now, 'millis');
  if (error !== undefined) {
    const step = error.step === undefined ? undefined : steps[error.step];
    if (step !== undefined && error.stepStatus !== undefined) step.status = error.stepStatus;
    const started = Date.parse(status.startTime ?? at);
    if (error.forbidden || now.getTime() - started < retryWindowMs) {
      return {
        ...status,
        phase: 'Installing',
        message: `retrying execution due to error: ${error.message}`,
      };
    }
    return failedPlanStatus(status, error.message, now);
  }
  const { message: _message, ...rest } = status;
  if (steps.every((step) => done.has(step.status))) {
    return {
      ...rest,
      phase: 'Complete',
      conditions: setCondition(status.conditions, {
        type: 'Installed',
        status: 'True',
        lastUpdateTime: at,
      }),
    };
  }
  return { ...rest, phase: 'Installing' };
}

/** Whether two statuses differ in what matters (not timestamps of unchanged conditions). */
export function statusChanged(
  before: InstallPlanStatus | undefined,
  after: InstallPlanStatus | undefined,
): boolean {
  return JSON.stringify(before ?? null) !== JSON.stringify(after ?? null);
}
