// Public surface of the patch room: the four PATCH content types the API server accepts and
// the field ownership (managedFields) bookkeeping of server-side apply.
// CONTRACT (owned by the patch helper; bodies are filled in on its branch).
import type { JsonObject, JsonValue } from '../json.js';

/** How one list merges, shared by strategic merge patch and server-side apply. */
export type ListRule =
  | { type: 'map'; keys: readonly string[] } // items identified by keys (SMP merge key = keys[0])
  | { type: 'set' } // primitive items merged as a set
  | { type: 'atomic' }; // replaced whole

/**
 * Merge rules of one kind: list rules keyed by field path, with list items written "[]",
 * e.g. "spec.template.spec.containers[].env". Paths absent from the map are atomic lists.
 */
export interface MergeRules {
  lists: ReadonlyMap<string, ListRule>;
  /** Maps whose keys are a fixed schema (structs) versus free-form maps; both merge key-wise. */
}

/** A patch that cannot be parsed or applied. `reason` is the Kubernetes Status reason to answer with. */
export class PatchError extends Error {
  constructor(
    message: string,
    readonly reason: 'BadRequest' | 'Invalid' | 'UnsupportedMediaType',
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'PatchError';
  }
}

/** One field an apply would take from another manager. */
export interface ApplyConflict {
  manager: string;
  /** Field path in kubectl's words, e.g. ".spec.replicas". */
  field: string;
}

/** Server-side apply refused because other managers own fields it sets (HTTP 409). */
export class ApplyConflictError extends Error {
  constructor(readonly conflicts: readonly ApplyConflict[]) {
    super(`Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}`);
    this.name = 'ApplyConflictError';
  }
}

/** RFC 6902 JSON patch (application/json-patch+json). Throws PatchError. */
export declare function applyJsonPatch(target: JsonValue, patch: unknown): JsonValue;

/** RFC 7386 JSON merge patch (application/merge-patch+json). */
export declare function applyMergePatch(target: JsonValue, patch: JsonValue): JsonValue;

/** Strategic merge patch (application/strategic-merge-patch+json) with $patch/$retainKeys/$setElementOrder/$deleteFromPrimitiveList directives. */
export declare function applyStrategicMergePatch(
  target: JsonObject,
  patch: JsonObject,
  rules: MergeRules,
): JsonObject;

export interface ApplyOptions {
  manager: string;
  force: boolean;
  rules: MergeRules;
  /** apiVersion recorded in managedFields entries. */
  apiVersion: string;
  /** RFC 3339 time recorded in managedFields entries. */
  now: string;
  /** "status" when applied through the /status subresource. */
  subresource?: string;
}

/**
 * Server-side apply (application/apply-patch+yaml, already parsed to JSON): merges `applied`
 * into `live` (undefined = create), removes fields this manager applied before but no longer
 * does, and returns the new object with metadata.managedFields updated. Throws
 * ApplyConflictError unless `force`.
 */
export declare function serverSideApply(
  live: JsonObject | undefined,
  applied: JsonObject,
  options: ApplyOptions,
): JsonObject;

/**
 * Records a non-apply write (create, update, patch) in managedFields: the manager takes
 * ownership (operation "Update") of every field it changed. Returns `after` with updated
 * metadata.managedFields.
 */
export declare function recordUpdate(
  before: JsonObject | undefined,
  after: JsonObject,
  options: Omit<ApplyOptions, 'force'>,
): JsonObject;

/** Merge rules of the built-in kinds the devcluster serves, keyed by "group/kind" ("/Pod" for core). */
export declare function builtinMergeRules(group: string, kind: string): MergeRules;

/** Merge rules derived from a CRD version's openAPIV3Schema (x-kubernetes-list-type / list-map-keys). */
export declare function mergeRulesFromSchema(schema: JsonObject): MergeRules;
