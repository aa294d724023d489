// Contract types of the patch room: how lists and maps merge, per kind.
import type { JsonPrimitive } from '../../shared/kube/json.js';

/** How one list merges, shared by strategic merge patch and server-side apply. */
export type ListRule =
  | {
      type: 'map';
      /** Fields identifying an item (SMP merge key = keys[0]; server-side apply uses all). */
      keys: readonly string[];
      /** Values standing in for absent key fields (schema defaults, e.g. protocol "TCP"). */
      keyDefaults?: Readonly<Record<string, JsonPrimitive>>;
      /** Merged by key under SMP but atomic for server-side apply (patchMergeKey without listType). */
      applyAtomic?: boolean;
    }
  | {
      // primitive items merged as a set
      type: 'set';
      /** Merged as a set under SMP but atomic for server-side apply (patchStrategy merge without listType). */
      applyAtomic?: boolean;
    }
  | { type: 'atomic' }; // replaced whole

/**
 * Merge rules of one kind: list rules keyed by field path, with list items written "[]",
 * e.g. "spec.template.spec.containers[].env". Paths absent from the map are atomic lists.
 */
export interface MergeRules {
  lists: ReadonlyMap<string, ListRule>;
  /** Maps replaced and owned whole by server-side apply (structType / x-kubernetes-map-type atomic), e.g. "spec.selector". */
  atomicMaps?: ReadonlySet<string>;
  /**
   * Fields every object of the kind has even when empty (Go non-pointer structs, lists without
   * omitempty), e.g. "spec": an Update never records them as added (no "." entry), as on a real cluster.
   */
  structs?: ReadonlySet<string>;
}
