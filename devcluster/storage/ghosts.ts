// Journals written before cluster-scoped objects lost metadata.namespace on every write may hold
// "ghosts": a cluster-scoped object stored under a namespace. On recovery each ghost is merged
// into the one cluster-scoped copy (the newer resourceVersion wins) and dropped.
import type { JsonObject } from '../../shared/kube/json.js';
import type { ObjectStore } from './store.js';

/** One namespaced copy of a cluster-scoped object found on recovery. */
export interface GhostObject {
  /** Storage key of the resource, e.g. `clusterroles.rbac.authorization.k8s.io`. */
  key: string;
  /** The namespace the copy was stored under. */
  namespace: string;
  name: string;
  /** `ghost`: the copy was newer and became the object; `stored`: the cluster-scoped copy stayed. */
  kept: 'ghost' | 'stored';
}

function resourceVersionOf(object: JsonObject | undefined): number {
  const metadata = object?.['metadata'] as JsonObject | undefined;
  return Number(metadata?.['resourceVersion'] ?? 0);
}

/**
 * Merges and drops the namespaced copies of objects whose resource `clusterScoped` says is
 * cluster-scoped, without events (the store is not yet serving); returns what was found.
 */
export function mergeNamespacedGhosts(
  store: ObjectStore,
  clusterScoped: (key: string) => boolean,
): GhostObject[] {
  const found: GhostObject[] = [];
  for (const key of store.keys().filter(clusterScoped)) {
    for (const object of store.list(key)) {
      const metadata = object['metadata'] as JsonObject;
      const namespace = metadata['namespace'];
      if (typeof namespace !== 'string' || namespace === '') continue;
      const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
      const stored = store.get(key, '', name);
      const kept = resourceVersionOf(object) > resourceVersionOf(stored) ? 'ghost' : 'stored';
      store.restoreRemoval(key, namespace, name, 0);
      // Restoring the kept copy also points its uid back at it (the removal forgot the uid).
      if (kept === 'ghost') {
        const { namespace: _dropped, ...rest } = metadata;
        store.restore(key, { ...object, metadata: rest });
      } else if (stored !== undefined) store.restore(key, stored);
      found.push({ key, namespace, name, kept });
    }
  }
  return found;
}
