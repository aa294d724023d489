// The checks kube 1.30's batch validation (pkg/apis/batch/validation) makes of the Job fields the
// devcluster's job controller acts on: completion mode and the per-index limits, and
// spec.podFailurePolicy (its rules, and restartPolicy Never in the template).
import type { StatusCause } from '../../shared/kube/status.js';
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';

const actions = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const operators = ['In', 'NotIn'];
const conditionStatuses = ['False', 'True', 'Unknown'];

function quoted(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

/** Go's %q of a string slice. */
function goQuoted(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}

function invalid(field: string, value: string, message: string): StatusCause {
  return { type: 'FieldValueInvalid', field, message: `Invalid value: ${value}: ${message}` };
}

function required(field: string, detail: string): StatusCause {
  return { type: 'FieldValueRequired', field, message: `Required value: ${detail}` };
}

function notSupported(field: string, value: JsonValue | undefined, supported: readonly string[]) {
  return {
    type: 'FieldValueNotSupported',
    field,
    message: `Unsupported value: ${JSON.stringify(text(value ?? ''))}: supported values: ${quoted(supported)}`,
  } satisfies StatusCause;
}

function objects(value: JsonValue | undefined): JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

/** Completion mode, backoffLimitPerIndex and maxFailedIndexes (validateJobSpec). */
function validateCompletionMode(spec: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const mode = spec['completionMode'];
  const perIndex = spec['backoffLimitPerIndex'];
  const maxFailed = spec['maxFailedIndexes'];
  for (const [key, value] of [
    ['backoffLimitPerIndex', perIndex],
    ['maxFailedIndexes', maxFailed],
  ] as const) {
    if (typeof value === 'number' && value < 0)
      causes.push(invalid(`spec.${key}`, String(value), 'must be greater than or equal to 0'));
  }
  if (maxFailed !== undefined && perIndex === undefined)
    causes.push(required('spec.backoffLimitPerIndex', 'when maxFailedIndexes is specified'));
  if (mode !== undefined && mode !== 'NonIndexed' && mode !== 'Indexed')
    causes.push(notSupported('spec.completionMode', mode, ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed') {
    const completions = spec['completions'];
    if (completions === undefined || completions === null)
      causes.push(required('spec.completions', 'when completion mode is Indexed'));
    if (typeof maxFailed === 'number' && typeof completions === 'number' && maxFailed > completions)
      causes.push(
        invalid(
          'spec.maxFailedIndexes',
          String(maxFailed),
          'must be less than or equal to completions',
        ),
      );
  } else {
    if (perIndex !== undefined)
      causes.push(
        invalid('spec.backoffLimitPerIndex', text(perIndex), 'requires indexed completion mode'),
      );
    if (maxFailed !== undefined)
      causes.push(
        invalid('spec.maxFailedIndexes', text(maxFailed), 'requires indexed completion mode'),
      );
  }
  return causes;
}

function validateExitCodes(
  requirement: JsonObject,
  path: string,
  containerNames: Set<string>,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const operator = requirement['operator'];
  if (operator === undefined || operator === '')
    causes.push(required(`${path}.operator`, `valid values: ${goQuoted(operators)}`));
  else if (!operators.includes(text(operator)))
    causes.push(notSupported(`${path}.operator`, operator, operators));
  const container = requirement['containerName'];
  if (typeof container === 'string' && !containerNames.has(container)) {
    const message = 'must be one of the container or initContainer names in the pod template';
    causes.push(invalid(`${path}.containerName`, JSON.stringify(container), message));
  }
  const values = Array.isArray(requirement['values']) ? requirement['values'] : [];
  const valuesText = `[]int32{${values.map((v) => text(v)).join(', ')}}`;
  if (values.length === 0)
    causes.push(invalid(`${path}.values`, valuesText, 'at least one value is required'));
  const seen = new Set<JsonValue>();
  let ordered = true;
  values.forEach((value, j) => {
    if (operator === 'In' && value === 0)
      causes.push(invalid(`${path}.values[${j}]`, '0', 'must not be 0 for the In operator'));
    if (seen.has(value))
      causes.push({
        type: 'FieldValueDuplicate',
        field: `${path}.values[${j}]`,
        message: `Duplicate value: ${text(value)}`,
      });
    seen.add(value);
    const before = values[j - 1];
    if (j > 0 && typeof before === 'number' && typeof value === 'number' && before > value)
      ordered = false;
  });
  if (!ordered) causes.push(invalid(`${path}.values`, valuesText, 'must be ordered'));
  return causes;
}

/** spec.podFailurePolicy (validatePodFailurePolicy) and the restartPolicy it needs. */
function validatePodFailurePolicy(spec: JsonObject): StatusCause[] {
  const policy = spec['podFailurePolicy'];
  if (!isJsonObject(policy)) return [];
  const causes: StatusCause[] = [];
  const podSpec = isJsonObject(spec['template']) ? spec['template']['spec'] : undefined;
  const pod = isJsonObject(podSpec) ? podSpec : {};
  const restartPolicy = pod['restartPolicy'];
  if (restartPolicy === 'OnFailure') {
    const message = 'only "Never" is supported when podFailurePolicy is specified';
    causes.push(invalid('spec.template.spec.restartPolicy', '"OnFailure"', message));
  }
  const replacement = spec['podReplacementPolicy'];
  if (replacement !== undefined && replacement !== 'Failed')
    causes.push(notSupported('spec.podReplacementPolicy', replacement, ['Failed']));
  const containerNames = new Set(
    [...objects(pod['containers']), ...objects(pod['initContainers'])].map((c) => text(c['name'])),
  );
  const rules = objects(policy['rules']);
  if (rules.length > 20)
    causes.push({
      type: 'FieldValueTooMany',
      field: 'spec.podFailurePolicy.rules',
      message: `Too many: ${rules.length}: must have at most 20 items`,
    });
  rules.forEach((rule, i) => {
    const path = `spec.podFailurePolicy.rules[${i}]`;
    const action = rule['action'];
    if (action === undefined || action === '')
      causes.push(required(`${path}.action`, `valid values: ${goQuoted(actions)}`));
    else if (action === 'FailIndex') {
      if (spec['backoffLimitPerIndex'] === undefined)
        causes.push(
          invalid(`${path}.action`, '"FailIndex"', 'requires the backoffLimitPerIndex to be set'),
        );
    } else if (!actions.includes(text(action)))
      causes.push(notSupported(`${path}.action`, action, actions));
    const exitCodes = rule['onExitCodes'];
    const conditions = objects(rule['onPodConditions']);
    if (isJsonObject(exitCodes))
      causes.push(...validateExitCodes(exitCodes, `${path}.onExitCodes`, containerNames));
    conditions.forEach((pattern, j) => {
      const field = `${path}.onPodConditions[${j}].status`;
      const status = pattern['status'];
      if (status === undefined || status === '')
        causes.push(required(field, `valid values: ${goQuoted(conditionStatuses)}`));
      else if (!conditionStatuses.includes(text(status)))
        causes.push(notSupported(field, status, conditionStatuses));
    });
    if (isJsonObject(exitCodes) && conditions.length > 0)
      causes.push({
        type: 'FieldValueInvalid',
        field: path,
        message: 'Invalid value: specifying both OnExitCodes and OnPodConditions is not supported',
      });
    if (!isJsonObject(exitCodes) && conditions.length === 0)
      causes.push({
        type: 'FieldValueInvalid',
        field: path,
        message: 'Invalid value: specifying one of OnExitCodes and OnPodConditions is required',
      });
  });
  return causes;
}

/** The checks of the Indexed mode and pod failure policy fields of a Job's spec. */
export function validateJobModes(spec: JsonObject): StatusCause[] {
  return [...validateCompletionMode(spec), ...validatePodFailurePolicy(spec)];
}
