// Triggers the install reconcilers share: a change in a namespace concerns that namespace.
import type { ObjectChange, Trigger, WorkItem, WorkKeyType } from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';

/** Whether a change is of a namespaced object (cluster-scoped ones have namespace "" or "-"). */
export const namespaced = (change: ObjectChange): boolean =>
  change.ref.namespace !== '' && change.ref.namespace !== '-';

/** The item of `key` for the changed object's namespace; none for cluster-scoped objects. */
export const namespaceItems =
  (key: WorkKeyType<FieldKey<'namespace'>>) =>
  (c: ObjectChange): WorkItem[] =>
    namespaced(c) ? [key.of({ namespace: c.ref.namespace })] : [];

/** Every change of `kind` concerns its namespace's `key`. */
export const namespaceTrigger =
  (key: WorkKeyType<FieldKey<'namespace'>>) =>
  (kind: string): Trigger => ({ kind, workKeys: namespaceItems(key) });
