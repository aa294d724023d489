// Public surface of the patch room: the four PATCH content types the API server accepts and
// the field ownership (managedFields) bookkeeping of server-side apply.
export type { ListRule, MergeRules } from './types.js';
export { PatchError, ApplyConflictError } from './errors.js';
export type { ApplyConflict } from './errors.js';
export { applyJsonPatch, applyMergePatch } from './json-patch.js';
export { applyStrategicMergePatch } from './strategic.js';
export { serverSideApply, recordUpdate } from './apply.js';
export { applyWithLastApplied } from './last-applied.js';
export type { ApplyOptions } from './apply.js';
export { builtinMergeRules, mergeRulesFromSchema } from './rules.js';
