// Metadata rules of writes, as kube-apiserver applies them: apiVersion/kind of the body, names
// (generateName included), labels, owner references, the fields only the server sets, the
// generation (bumped when anything but metadata and status changes) and finalizers (none added
// once deletion has started).
import { invalid, badRequest, refOf } from './errors.js';
import { jsonEqual, withoutKeys } from './object-json.js';
import {
  isJsonObject,
  stringItems,
  text,
  type JsonObject,
  type JsonValue,
} from '../../shared/kube/json.js';
import { validateAnnotations, validateLabels } from '../resources/validation/index.js';
import type { StatusCause } from '../../shared/kube/status.js';
import { apiVersionOf } from '../resources/registry.js';
import { nameFromGenerateName, nameRuleOf, validateName } from '../resources/names.js';
import type { ResourceType } from '../resources/types.js';
import { kubeTime } from '../../shared/kube/time.js';

/** RFC 3339 time without fractions, as metav1.Time serialises. */
export function rfc3339(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastStamp = kubeTime(date);
  }
  return lastStamp;
}

// Formatting dates is a visible cost at thousands of writes per second: reuse it per second.
let lastSecond = Number.NaN;
let lastStamp = '';

/** Normalises apiVersion/kind of a request body against the endpoint's type. */
export function checkTypeMeta(type: ResourceType, body: JsonObject): void {
  const apiVersion = apiVersionOf(type.group, type.version);
  if (body['apiVersion'] !== undefined && body['apiVersion'] !== apiVersion) {
    throw badRequest(
      `the API version in the data (${text(body['apiVersion'])}) does not match the expected API version (${apiVersion})`,
    );
  }
  if (body['kind'] !== undefined && body['kind'] !== type.kind) {
    throw badRequest(
      `the kind in the data (${text(body['kind'])}) does not match the expected kind (${type.kind})`,
    );
  }
  body['apiVersion'] = apiVersion;
  body['kind'] = type.kind;
}

/**
 * Sets where an object is stored, the one place its identity is derived from: the request's
 * namespace for namespaced kinds; none for cluster-scoped kinds, whatever the body says (as
 * kube-apiserver clears it — upstream OLM's InstallPlan sends ClusterRoleBindings with one).
 */
export function placeObject(type: ResourceType, metadata: JsonObject, namespace: string): void {
  if (type.namespaced) metadata['namespace'] = namespace;
  else delete metadata['namespace'];
}

/**
 * The namespace and name of a new object, set in its metadata: the request's namespace (400 when
 * the body names another; none for cluster-scoped kinds), and its name or one made from
 * generateName (422 when it has neither).
 */
export function nameNewObject(type: ResourceType, namespace: string, metadata: JsonObject): string {
  if (type.namespaced) {
    if (
      metadata['namespace'] !== undefined &&
      metadata['namespace'] !== '' &&
      metadata['namespace'] !== namespace
    ) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
  }
  placeObject(type, metadata, namespace);
  let name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
  if (
    name === '' &&
    typeof metadata['generateName'] === 'string' &&
    metadata['generateName'] !== ''
  ) {
    name = nameFromGenerateName(metadata['generateName']);
    metadata['name'] = name;
  }
  if (name === '') {
    throw invalid(refOf(type, ''), [
      {
        type: 'FieldValueRequired',
        field: 'metadata.name',
        message: 'Required value: name or generateName is required',
      },
    ]);
  }
  return name;
}

/** Drops what a create body may not set: the fields the server owns. */
export function clearServerFields(metadata: JsonObject): void {
  for (const k of [
    'resourceVersion',
    'uid',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'generation',
    'selfLink',
  ]) {
    delete metadata[k];
  }
}

/** An update keeps the server-owned fields of the stored object, whatever the body says. */
export function keepServerFields(metadata: JsonObject, stored: JsonObject): void {
  for (const k of [
    'uid',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'generation',
  ]) {
    if (stored[k] !== undefined) metadata[k] = stored[k];
    else delete metadata[k];
  }
}

/** Causes for malformed metadata.ownerReferences (empty fields, more than one controller). */
function ownerReferenceCauses(value: JsonValue | undefined): StatusCause[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    return [
      {
        type: 'FieldValueInvalid',
        field: 'metadata.ownerReferences',
        message: 'Invalid value: must be a list',
      },
    ];
  }
  const causes: StatusCause[] = [];
  const required: [string, string][] = [
    ['apiVersion', 'version must not be empty'],
    ['kind', 'kind must not be empty'],
    ['name', 'name must not be empty'],
    ['uid', 'uid must not be empty'],
  ];
  let controllers = 0;
  for (const ref of value) {
    const entry = isJsonObject(ref) ? ref : {};
    for (const [field, message] of required) {
      if (typeof entry[field] !== 'string' || entry[field] === '') {
        causes.push({
          type: 'FieldValueInvalid',
          field: `metadata.ownerReferences.${field}`,
          message: `Invalid value: "": ${message}`,
        });
      }
    }
    if (entry['controller'] === true) controllers++;
  }
  if (controllers > 1) {
    causes.push({
      type: 'FieldValueInvalid',
      field: 'metadata.ownerReferences',
      message: 'Invalid value: Only one reference can have Controller set to true',
    });
  }
  return causes;
}

export function validateMetadata(type: ResourceType, metadata: JsonObject, name: string): void {
  const causes: StatusCause[] = [...validateName(name, nameRuleOf(type.group, type.kind))];
  const labels = metadata['labels'];
  if (labels !== undefined && labels !== null && !isJsonObject(labels)) {
    causes.push({
      type: 'FieldValueInvalid',
      field: 'metadata.labels',
      message: 'Invalid value: must be a map of strings',
    });
  }
  causes.push(...validateLabels(labels, 'metadata.labels'));
  causes.push(...validateAnnotations(metadata['annotations'], 'metadata.annotations'));
  causes.push(...ownerReferenceCauses(metadata['ownerReferences']));
  if (causes.length > 0) throw invalid(refOf(type, name), causes);
}

/** 422 when an update adds finalizers to an object being deleted (they may only be removed). */
export function checkNoFinalizersAdded(
  type: ResourceType,
  name: string,
  stored: JsonObject,
  metadata: JsonObject,
): void {
  if (stored['deletionTimestamp'] === undefined) return;
  const oldFinalizers = stringItems(stored['finalizers']);
  const added = stringItems(metadata['finalizers']).filter((f) => !oldFinalizers.includes(f));
  if (added.length > 0) {
    throw invalid(refOf(type, name), [
      {
        type: 'FieldValueForbidden',
        field: 'metadata.finalizers',
        message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
      },
    ]);
  }
}

/** The generation after an update: one more when anything but metadata (and a status subresource's status) changed. */
export function nextGeneration(
  type: ResourceType,
  object: JsonObject,
  previous: JsonObject,
  stored: JsonObject,
): number {
  const ignored = type.statusSubresource ? ['metadata', 'status'] : ['metadata'];
  const changed = !jsonEqual(withoutKeys(object, ignored), withoutKeys(previous, ignored));
  return (typeof stored['generation'] === 'number' ? stored['generation'] : 1) + (changed ? 1 : 0);
}
