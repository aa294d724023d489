// Pods and the kinds holding pod templates (Deployment, ReplicaSet, Job, CronJob), as kube
// 1.30's ValidatePod, ValidateDeployment, ValidateReplicaSet, ValidateJob and ValidateCronJob.
import {
  isJsonObject,
  jsonEqual,
  type JsonObject,
  type JsonValue,
} from '../../../shared/kube/json.js';
import {
  labelSelectorFromObject,
  matchesLabelSelector,
  SelectorError,
} from '../../../shared/kube/selectors.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import { forbidden, goStringMap, invalid, notSupported, required } from './field.js';
import { goLabelSelector, isEmptySelector, validateLabelSelector } from './meta.js';
import { validatePodSpec, validatePodTemplate } from './pod-spec.js';
import { validateJobModes } from './job-modes.js';
import { validateCronJobSchedule } from './cronjob-schedule.js';

function specOf(object: JsonObject): JsonObject | undefined {
  return isJsonObject(object['spec']) ? object['spec'] : undefined;
}

/** ValidateNonnegativeField for each given integer field of `spec`. */
function nonNegative(spec: JsonObject, path: string, keys: readonly string[]): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const key of keys) {
    const value = spec[key];
    if (typeof value === 'number' && value < 0)
      causes.push(invalid(`${path}.${key}`, value, 'must be greater than or equal to 0'));
  }
  return causes;
}

/** The selector checks of Deployments and ReplicaSets, and the template labels it must match. */
function selectorCauses(spec: JsonObject, kindWord: string): StatusCause[] {
  const selector = spec['selector'];
  if (!isJsonObject(selector)) return [required('spec.selector')];
  const causes = validateLabelSelector(selector, 'spec.selector');
  if (isEmptySelector(selector)) {
    causes.push(
      invalid(
        'spec.selector',
        goLabelSelector(selector),
        `empty selector is invalid for ${kindWord}`,
      ),
    );
    return causes;
  }
  const template = isJsonObject(spec['template']) ? spec['template'] : {};
  const metadata = isJsonObject(template['metadata']) ? template['metadata'] : {};
  const labels = isJsonObject(metadata['labels']) ? metadata['labels'] : undefined;
  try {
    const requirements = labelSelectorFromObject(selector);
    if (!matchesLabelSelector(requirements, (labels ?? {}) as Record<string, string>)) {
      causes.push(
        invalid(
          'spec.template.metadata.labels',
          { goSyntax: goStringMap(labels) },
          '`selector` does not match template `labels`',
        ),
      );
    }
  } catch (error) {
    if (!(error instanceof SelectorError)) throw error;
    causes.push(invalid('spec.selector', goLabelSelector(selector), 'invalid label selector'));
  }
  return causes;
}

/** ValidatePodTemplateSpecForReplicaSet's extra rules beside the template's own. */
function replicaSetTemplateCauses(spec: JsonObject): StatusCause[] {
  const causes = validatePodTemplate(spec['template'], 'spec.template', ['Always']);
  const template = isJsonObject(spec['template']) ? spec['template'] : {};
  const podSpec = isJsonObject(template['spec']) ? template['spec'] : {};
  if (podSpec['activeDeadlineSeconds'] !== undefined) {
    causes.push(
      forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        'activeDeadlineSeconds in ReplicaSet is not Supported',
      ),
    );
  }
  return causes;
}

/** ValidateDeployment (spec part). */
export function validateDeployment(object: JsonObject): StatusCause[] {
  const spec = specOf(object);
  if (spec === undefined) return [required('spec.selector')];
  const causes = nonNegative(spec, 'spec', ['replicas']);
  causes.push(...selectorCauses(spec, 'deployment'));
  causes.push(...replicaSetTemplateCauses(spec));
  causes.push(...strategyCauses(spec['strategy']));
  causes.push(...nonNegative(spec, 'spec', ['minReadySeconds', 'revisionHistoryLimit']));
  const deadline = spec['progressDeadlineSeconds'];
  if (typeof deadline === 'number') {
    causes.push(...nonNegative(spec, 'spec', ['progressDeadlineSeconds']));
    const minReady = typeof spec['minReadySeconds'] === 'number' ? spec['minReadySeconds'] : 0;
    if (deadline <= minReady)
      causes.push(
        invalid('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds'),
      );
  }
  return causes;
}

/** ValidateDeploymentStrategy: Recreate has no rollingUpdate; both maxes may not be 0. */
function strategyCauses(strategy: JsonValue | undefined): StatusCause[] {
  if (!isJsonObject(strategy)) return [];
  const type = strategy['type'];
  const rolling = strategy['rollingUpdate'];
  if (type === 'Recreate') {
    return rolling === undefined || rolling === null
      ? []
      : [
          forbidden(
            'spec.strategy.rollingUpdate',
            "may not be specified when strategy `type` is 'Recreate'",
          ),
        ];
  }
  if (type === 'RollingUpdate') {
    if (!isJsonObject(rolling))
      return [required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil')];
    const zero = (value: JsonValue | undefined): boolean => value === 0 || value === '0%';
    if (zero(rolling['maxUnavailable']) && zero(rolling['maxSurge'])) {
      return [
        invalid(
          'spec.strategy.rollingUpdate.maxUnavailable',
          { goSyntax: 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}' },
          'may not be 0 when `maxSurge` is 0',
        ),
      ];
    }
    return [];
  }
  return [
    notSupported('spec.strategy.type', typeof type === 'string' ? type : '', [
      'Recreate',
      'RollingUpdate',
    ]),
  ];
}

/** ValidateReplicaSet (spec part). */
export function validateReplicaSet(object: JsonObject): StatusCause[] {
  const spec = specOf(object);
  if (spec === undefined) return [required('spec.selector')];
  return [
    ...nonNegative(spec, 'spec', ['replicas', 'minReadySeconds']),
    ...selectorCauses(spec, 'deployment'),
    ...replicaSetTemplateCauses(spec),
  ];
}

/** The apps/v1 strategies' update rule: spec.selector is immutable. */
export function selectorImmutable(object: JsonObject, old: JsonObject): StatusCause[] {
  const selector = specOf(object)?.['selector'];
  const previous = specOf(old)?.['selector'];
  if (jsonEqual(selector ?? null, previous ?? null)) return [];
  return [invalid('spec.selector', goLabelSelector(selector), 'field is immutable')];
}

/** ValidatePod (spec part). */
export function validatePod(object: JsonObject): StatusCause[] {
  return validatePodSpec(object['spec'], 'spec');
}

/** ValidateJob (spec part): counts, and a template restarting OnFailure or Never. */
export function validateJob(object: JsonObject): StatusCause[] {
  return jobSpecCauses(specOf(object), 'spec');
}

function jobSpecCauses(spec: JsonObject | undefined, path: string): StatusCause[] {
  if (spec === undefined) return [required(`${path}.template`)];
  const causes = nonNegative(spec, path, [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
  ]);
  causes.push(...validateLabelSelector(spec['selector'], `${path}.selector`));
  causes.push(...validatePodTemplate(spec['template'], `${path}.template`, ['OnFailure', 'Never']));
  if (path === 'spec') causes.push(...validateJobModes(spec));
  return causes;
}

/** ValidateCronJob (spec part): a schedule and a job template, validated as a Job's spec. */
export function validateCronJob(object: JsonObject): StatusCause[] {
  const spec = specOf(object);
  if (spec === undefined) return [required('spec.schedule')];
  const causes: StatusCause[] = [];
  if (typeof spec['schedule'] !== 'string' || spec['schedule'] === '')
    causes.push(required('spec.schedule'));
  const policy = spec['concurrencyPolicy'];
  if (typeof policy === 'string' && !['Allow', 'Forbid', 'Replace'].includes(policy)) {
    causes.push(notSupported('spec.concurrencyPolicy', policy, ['Allow', 'Forbid', 'Replace']));
  }
  const jobTemplate = spec['jobTemplate'];
  if (!isJsonObject(jobTemplate)) {
    causes.push(required('spec.jobTemplate'));
    return causes;
  }
  const jobSpec = isJsonObject(jobTemplate['spec']) ? jobTemplate['spec'] : undefined;
  causes.push(...jobSpecCauses(jobSpec, 'spec.jobTemplate.spec'));
  causes.push(...validateCronJobSchedule(object));
  return causes;
}
