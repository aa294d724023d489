// Namespace lifecycle, as kube's admission plugin of that name: nothing new in a namespace that
// does not exist (404) or is being terminated (403 NamespaceTerminating).
import { ApiError, notFound } from './errors.js';
import type { JsonObject } from '../../shared/kube/json.js';
import type { ResourceType } from '../resources/types.js';
import type { ObjectStore } from '../storage/store.js';

/** Throws unless an object of `type` may be created in `namespace`. */
export function checkNamespaceOpen(
  store: ObjectStore,
  type: ResourceType,
  namespace: string,
  name: string,
): void {
  if (!type.namespaced) return;
  const ns = store.get('namespaces', '', namespace);
  if (!ns)
    throw notFound({ group: '', resource: 'namespaces', kind: 'Namespace', name: namespace });
  if ((ns['metadata'] as JsonObject)['deletionTimestamp'] !== undefined) {
    const message = `unable to create new content in namespace ${namespace} because it is being terminated`;
    throw new ApiError(
      'Forbidden',
      `${type.group === '' ? type.resource : `${type.resource}.${type.group}`} "${name}" is forbidden: ${message}`,
      {
        name,
        group: type.group,
        kind: type.resource,
        causes: [{ type: 'NamespaceTerminating', field: 'metadata.namespace', message }],
      },
    );
  }
}
