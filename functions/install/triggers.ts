// Work keys the install reconcilers share: a namespace's key, from any change in it.
import type { WorkKey } from '../../shared/bus/subjects.js';
import type { ObjectChange, Trigger } from '../../shared/runtime/function-host.js';

/** Whether a change is of a namespaced object (cluster-scoped ones have namespace "" or "-"). */
export const namespaced = (change: ObjectChange): boolean =>
  change.ref.namespace !== '' && change.ref.namespace !== '-';

/** The key of the changed object's namespace; none for cluster-scoped objects. */
export const namespaceKeys = (c: ObjectChange): WorkKey[] =>
  namespaced(c) ? [[c.ref.namespace]] : [];

/** Every change of `kind` concerns its namespace. */
export const namespaceTrigger = (kind: string): Trigger => ({ kind, workKeys: namespaceKeys });
