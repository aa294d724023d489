// The status subresource (and namespaces' finalize): a write through /status changes only the
// status, one through the main resource never does (for kinds with a status subresource);
// /finalize changes only a namespace's spec.finalizers.
import { clone } from './object-json.js';
import { isJsonObject, type JsonObject } from '../../shared/kube/json.js';
import type { ResourceType } from '../resources/types.js';

/** A create through the main resource cannot set the status: it is the controllers' to write. */
export function dropStatusOnCreate(type: ResourceType, body: JsonObject): void {
  // kube's node strategy keeps it: a kubelet registers its Node with the status it reports.
  if (type.group === '' && type.kind === 'Node') return;
  if (type.statusSubresource) delete body['status'];
}

/** An update of the main resource keeps the stored status. */
export function keepStoredStatus(
  type: ResourceType,
  object: JsonObject,
  previous: JsonObject,
): void {
  if (!type.statusSubresource) return;
  if (previous['status'] !== undefined) object['status'] = previous['status'];
  else delete object['status'];
}

/** What a write through /status or /finalize makes of the stored object; undefined for other subresources. */
export function subresourceWrite(
  subresource: string,
  previous: JsonObject,
  body: JsonObject,
): JsonObject | undefined {
  if (subresource === 'status') {
    const object: JsonObject = { ...clone(previous), status: body['status'] ?? {} };
    if (body['status'] === undefined) delete object['status'];
    return object;
  }
  if (subresource === 'finalize') {
    const spec = isJsonObject(body['spec']) ? body['spec'] : {};
    const object = clone(previous);
    const oldSpec = isJsonObject(object['spec']) ? object['spec'] : {};
    object['spec'] = { ...oldSpec, finalizers: spec['finalizers'] ?? [] };
    return object;
  }
  return undefined;
}
