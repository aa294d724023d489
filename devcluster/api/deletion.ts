// Deletion as kube-apiserver does it: preconditions (uid, resourceVersion), then either removal at
// once or a mark — deletionTimestamp, the propagation policy's finalizer (foregroundDeletion,
// orphan), a Terminating namespace, a CRD's cleanup finalizer — with the object removed once no
// finalizer holds it.
import { conflict, refOf } from './errors.js';
import { clone, metadataOf } from './object-json.js';
import type { DeleteOptions } from './types.js';
import { isJsonObject, stringItems, text, type JsonObject } from '../../shared/kube/json.js';
import { crdCleanupFinalizer } from '../resources/crds.js';
import type { ResourceType } from '../resources/types.js';

function isCrd(type: ResourceType): boolean {
  return type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition';
}

/** 409 when a delete's preconditions do not hold for the stored object's metadata. */
export function checkPreconditions(
  type: ResourceType,
  name: string,
  stored: JsonObject,
  options: DeleteOptions,
): void {
  const pre = options.preconditions;
  if (pre?.uid !== undefined && pre.uid !== stored['uid']) {
    throw conflict(
      refOf(type, name),
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${text(stored['uid'])}`,
    );
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== stored['resourceVersion']) {
    throw conflict(
      refOf(type, name),
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${text(stored['resourceVersion'])}`,
    );
  }
}

/**
 * The finalizer a propagation policy adds (Foreground: foregroundDeletion, Orphan: orphan). A
 * batch/v1 Job deleted without a policy orphans its pods (its strategy's default policy in kube).
 */
function policyFinalizer(type: ResourceType, options: DeleteOptions): string | undefined {
  const policy =
    options.propagationPolicy ??
    (type.group === 'batch' && type.kind === 'Job' ? 'Orphan' : undefined);
  return policy === 'Foreground'
    ? 'foregroundDeletion'
    : policy === 'Orphan'
      ? 'orphan'
      : undefined;
}

/**
 * Whether a delete only marks the object: finalizers hold it, the policy adds one, or it is a
 * namespace or a CRD (kube-apiserver's CRD storage adds its cleanup finalizer on the first delete).
 */
export function needsMark(type: ResourceType, stored: JsonObject, options: DeleteOptions): boolean {
  const isNamespace = type.group === '' && type.kind === 'Namespace';
  return (
    stringItems(stored['finalizers']).length > 0 ||
    policyFinalizer(type, options) !== undefined ||
    isNamespace ||
    isCrd(type)
  );
}

/**
 * The object marked for deletion (a copy of `presented`): deletionTimestamp set once, the
 * policy's finalizer (replacing the other policy's), a namespace's phase Terminating. Undefined
 * when it was marked so already.
 */
export function markedForDeletion(
  type: ResourceType,
  presented: JsonObject,
  options: DeleteOptions,
  now: () => string,
): JsonObject | undefined {
  let finalizers = stringItems((presented['metadata'] as JsonObject)['finalizers']);
  const extra = policyFinalizer(type, options);
  const isNamespace = type.group === '' && type.kind === 'Namespace';
  const object = clone(presented);
  const m = metadataOf(object);
  let changed = false;
  // As kube's CRD storage: the cleanup finalizer is put on a CRD by its first delete (not when
  // it is created), so that its custom resources go before it does.
  if (
    isCrd(type) &&
    m['deletionTimestamp'] === undefined &&
    !finalizers.includes(crdCleanupFinalizer)
  ) {
    finalizers = [...finalizers, crdCleanupFinalizer];
    m['finalizers'] = finalizers;
    changed = true;
  }
  if (m['deletionTimestamp'] === undefined) {
    m['deletionTimestamp'] = now();
    m['deletionGracePeriodSeconds'] = 0;
    changed = true;
  }
  if (extra !== undefined && !finalizers.includes(extra)) {
    const kept =
      extra === 'orphan'
        ? finalizers.filter((f) => f !== 'foregroundDeletion')
        : finalizers.filter((f) => f !== 'orphan');
    m['finalizers'] = [...kept, extra];
    changed = true;
  }
  if (isNamespace && object['status'] !== undefined) {
    const status = isJsonObject(object['status']) ? object['status'] : {};
    if (status['phase'] !== 'Terminating') {
      object['status'] = { ...status, phase: 'Terminating' };
      changed = true;
    }
  }
  return changed ? object : undefined;
}

/** Whether a marked object can go: no finalizers left (a namespace's spec.finalizers included). */
export function readyToRemove(type: ResourceType, object: JsonObject): boolean {
  const m = object['metadata'] as JsonObject;
  if (m['deletionTimestamp'] === undefined) return false;
  if (stringItems(m['finalizers']).length > 0) return false;
  if (type.group === '' && type.kind === 'Namespace') {
    const spec = isJsonObject(object['spec']) ? object['spec'] : {};
    if (stringItems(spec['finalizers']).length > 0) return false;
  }
  return true;
}
