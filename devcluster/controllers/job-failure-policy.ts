// A Job's spec.podFailurePolicy applied to a failed pod, after kube 1.30's
// pkg/controller/job/pod_failure_policy.go: the first rule whose onExitCodes (a terminated
// container with a non-zero exit code, In or NotIn the values, optionally one container) or
// onPodConditions (a condition of that type and status) matches decides; no match counts.
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import { metadataOf, obj } from './workload-objects.js';

/** What a rule does with a failed pod. */
export const podFailurePolicyActions = {
  failJob: 'FailJob',
  failIndex: 'FailIndex',
  ignore: 'Ignore',
  count: 'Count',
} as const;

/** One of the actions. */
export type PodFailurePolicyAction =
  (typeof podFailurePolicyActions)[keyof typeof podFailurePolicyActions];

/** The verdict on one failed pod. */
export interface PodFailureVerdict {
  /** The matched rule's action; Count when no rule matched. */
  action: PodFailurePolicyAction;
  /** Whether the failure counts towards backoffLimit (and backoffLimitPerIndex). */
  counts: boolean;
  /** For FailJob: the Failed condition's message, as kube words it. */
  message?: string;
}

function items(value: JsonValue | undefined): JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

/** The first terminated container (then init container) matching the requirement. */
function matchExitCodes(status: JsonObject, requirement: JsonObject): JsonObject | undefined {
  const values = Array.isArray(requirement['values']) ? requirement['values'] : [];
  const container = requirement['containerName'];
  for (const list of [status['containerStatuses'], status['initContainerStatuses']]) {
    for (const containerStatus of items(list)) {
      const terminated = obj(containerStatus['state'])['terminated'];
      if (!isJsonObject(terminated)) continue;
      if (typeof container === 'string' && container !== containerStatus['name']) continue;
      const code = terminated['exitCode'];
      if (typeof code !== 'number' || code === 0) continue;
      const listed = values.includes(code);
      const operator = requirement['operator'];
      if ((operator === 'In' && listed) || (operator === 'NotIn' && !listed))
        return containerStatus;
    }
  }
  return undefined;
}

function matchConditions(status: JsonObject, patterns: JsonObject[]): JsonObject | undefined {
  for (const condition of items(status['conditions']))
    for (const pattern of patterns)
      if (condition['type'] === pattern['type'] && condition['status'] === pattern['status'])
        return condition;
  return undefined;
}

/** Judges a failed pod by the Job's pod failure policy (absent: every failure counts). */
export function judgeFailedPod(policy: JsonValue | undefined, pod: JsonObject): PodFailureVerdict {
  const count: PodFailureVerdict = { action: podFailurePolicyActions.count, counts: true };
  if (!isJsonObject(policy)) return count;
  const status = obj(pod['status']);
  const m = metadataOf(pod);
  const podRef = `${text(m['namespace'])}/${text(m['name'])}`;
  for (const [index, rule] of items(policy['rules']).entries()) {
    const action = rule['action'];
    let message: string | undefined;
    if (isJsonObject(rule['onExitCodes'])) {
      const container = matchExitCodes(status, rule['onExitCodes']);
      if (container === undefined) continue;
      const code = text(obj(obj(container['state'])['terminated'])['exitCode']);
      message = `Container ${text(container['name'])} for pod ${podRef} failed with exit code ${code} matching ${text(action)} rule at index ${index}`;
    } else if (Array.isArray(rule['onPodConditions'])) {
      const condition = matchConditions(status, items(rule['onPodConditions']));
      if (condition === undefined) continue;
      message = `Pod ${podRef} has condition ${text(condition['type'])} matching ${text(action)} rule at index ${index}`;
    } else continue;
    switch (action) {
      case 'Ignore':
        return { action: podFailurePolicyActions.ignore, counts: false };
      case 'FailIndex':
        return { action: podFailurePolicyActions.failIndex, counts: true };
      case 'Count':
        return count;
      case 'FailJob':
        return { action: podFailurePolicyActions.failJob, counts: true, message };
    }
  }
  return count;
}
