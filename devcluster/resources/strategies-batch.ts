// Defaults and validation of batch/v1, policy/v1 and networking.k8s.io/v1 kinds, as kube 1.30's
// defaulting functions (pkg/apis/*/v1/defaults.go) and registry strategies apply them.
import { randomUUID } from 'node:crypto';
import type { StatusCause } from '../../shared/kube/status.js';
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';
import { defaultPodSpec, objectAt, required, validateContainers } from './pod-defaults.js';
import { validateCronJobSchedule } from './cronjob-validation.js';
import { validateJobModes } from './job-validation.js';
import type { Strategy } from './types.js';

/** Labels kube's job strategy puts on a Job's selector and pod template. */
export const jobLabels = {
  controllerUid: 'batch.kubernetes.io/controller-uid',
  jobName: 'batch.kubernetes.io/job-name',
  legacyControllerUid: 'controller-uid',
  legacyJobName: 'job-name',
} as const;

/** Job defaults (SetDefaults_Job), on create and update. */
function defaultJob(object: JsonObject): void {
  const spec = objectAt(object, 'spec');
  if (spec['completions'] === undefined && spec['parallelism'] === undefined) {
    spec['completions'] = 1;
    spec['parallelism'] = 1;
  }
  spec['parallelism'] ??= 1;
  // A per-index limit makes the global one unlimited unless given (SetDefaults_Job).
  spec['backoffLimit'] ??= spec['backoffLimitPerIndex'] === undefined ? 6 : 2147483647;
  spec['completionMode'] ??= 'NonIndexed';
  spec['suspend'] ??= false;
  spec['podReplacementPolicy'] ??=
    spec['podFailurePolicy'] === undefined ? 'TerminatingOrFailed' : 'Failed';
  const template = objectAt(spec, 'template');
  if (isJsonObject(template['spec'])) defaultPodSpec(template['spec']);
}

/**
 * The selector kube's job strategy generates on create unless spec.manualSelector:
 * `batch.kubernetes.io/controller-uid=<uid>`, with the four job labels on the template.
 */
function generateJobSelector(object: JsonObject): void {
  const metadata = objectAt(object, 'metadata');
  const spec = objectAt(object, 'spec');
  const template = objectAt(spec, 'template');
  if (spec['manualSelector'] === true) return;
  // The uid is the selector's value, so the job gets it here (the core keeps a uid set by a strategy).
  const uid = randomUUID();
  metadata['uid'] = uid;
  const name = text(metadata['name']);
  spec['selector'] = { matchLabels: { [jobLabels.controllerUid]: uid } };
  const labels = objectAt(objectAt(template, 'metadata'), 'labels');
  labels[jobLabels.controllerUid] = uid;
  labels[jobLabels.jobName] = name;
  labels[jobLabels.legacyControllerUid] = uid;
  labels[jobLabels.legacyJobName] = name;
}

function validateJob(object: JsonObject): StatusCause[] {
  const spec = object['spec'];
  if (!isJsonObject(spec)) return [required('spec')];
  const template = spec['template'];
  if (!isJsonObject(template)) return [required('spec.template')];
  const causes = validateContainers(template['spec'], 'spec.template.spec');
  const podSpec = isJsonObject(template['spec']) ? template['spec'] : {};
  const policy = podSpec['restartPolicy'];
  if (policy !== 'OnFailure' && policy !== 'Never') {
    causes.push({
      type: 'FieldValueNotSupported',
      field: 'spec.template.spec.restartPolicy',
      message: `Unsupported value: ${JSON.stringify(text(policy ?? ''))}: supported values: "OnFailure", "Never"`,
    });
  }
  for (const key of ['backoffLimit', 'completions', 'parallelism', 'activeDeadlineSeconds']) {
    const value = spec[key];
    if (typeof value === 'number' && value < (key === 'activeDeadlineSeconds' ? 1 : 0)) {
      causes.push({
        type: 'FieldValueInvalid',
        field: `spec.${key}`,
        message: `Invalid value: ${value}: must be greater than or equal to ${key === 'activeDeadlineSeconds' ? 1 : 0}`,
      });
    }
  }
  causes.push(...validateJobModes(spec));
  return causes;
}

function defaultPolicyPorts(rules: unknown): void {
  for (const rule of Array.isArray(rules) ? rules : []) {
    if (!isJsonObject(rule)) continue;
    for (const port of Array.isArray(rule['ports']) ? rule['ports'] : []) {
      if (isJsonObject(port)) port['protocol'] ??= 'TCP';
    }
  }
}

/** SetDefaults_NetworkPolicy: policyTypes [Ingress] (plus Egress with egress rules), ports TCP. */
function defaultNetworkPolicy(object: JsonObject): void {
  const spec = objectAt(object, 'spec');
  spec['podSelector'] ??= {};
  defaultPolicyPorts(spec['ingress']);
  defaultPolicyPorts(spec['egress']);
  const types = spec['policyTypes'];
  if (!Array.isArray(types) || types.length === 0) {
    const egress = spec['egress'];
    spec['policyTypes'] =
      Array.isArray(egress) && egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

/** The strategies of these kinds, keyed `<group>/<Kind>`. */
export const batchStrategies: Record<string, Strategy> = {
  'batch/Job': {
    defaults: defaultJob,
    prepareCreate(object) {
      generateJobSelector(object);
      object['status'] = {};
    },
    validate: validateJob,
  },
  'batch/CronJob': {
    defaults(object) {
      const spec = objectAt(object, 'spec');
      spec['concurrencyPolicy'] ??= 'Allow';
      spec['suspend'] ??= false;
      spec['successfulJobsHistoryLimit'] ??= 3;
      spec['failedJobsHistoryLimit'] ??= 1;
      const template = objectAt(objectAt(objectAt(spec, 'jobTemplate'), 'spec'), 'template');
      if (isJsonObject(template['spec'])) defaultPodSpec(template['spec']);
    },
    prepareCreate(object) {
      object['status'] = {};
    },
    validate(object) {
      const spec = object['spec'];
      if (!isJsonObject(spec)) return [required('spec')];
      const causes: StatusCause[] = [];
      if (typeof spec['schedule'] !== 'string' || spec['schedule'] === '')
        causes.push(required('spec.schedule'));
      if (!isJsonObject(spec['jobTemplate'])) causes.push(required('spec.jobTemplate'));
      causes.push(...validateCronJobSchedule(object));
      return causes;
    },
  },
  'policy/PodDisruptionBudget': {
    prepareCreate(object) {
      // The strategy resets status; its counters have no omitempty.
      object['status'] = {
        disruptionsAllowed: 0,
        currentHealthy: 0,
        desiredHealthy: 0,
        expectedPods: 0,
      };
    },
  },
  'networking.k8s.io/NetworkPolicy': {
    defaults: defaultNetworkPolicy,
  },
  'networking.k8s.io/Ingress': {
    prepareCreate(object) {
      object['status'] = { loadBalancer: {} };
    },
  },
};
