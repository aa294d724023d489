// Public surface of the schema room: OpenAPI v3 structural schemas of CustomResourceDefinitions,
// validation of objects against them, defaulting and pruning, as kube-apiserver does.
// Compiled schemas are cached per schema object: pass the same (unmutated) schema object on
// every call to validate, default and prune in time proportional to the object, not the schema.
import type { JsonObject, JsonValue } from '../json.js';
import { compileSchema } from './compiled.js';
import { crdIssues } from './crd-validation.js';
import { defaultNode } from './defaulting.js';
import { pruneValue } from './pruning.js';
import { schemaIssues } from './schema-issues.js';
import type { FieldCause } from './types.js';
import { validateValue } from './value-validation.js';

export { formatCause } from './cause.js';
export type { FieldCause } from './types.js';

/**
 * Validates a CustomResourceDefinition object as kube-apiserver does on create/update:
 * names (plural.group), scope, versions (exactly one storage, served), structural schemas
 * per version, printer column JSON paths, subresources. Empty when valid.
 * Like kube, schemas/subresources/columns identical across versions are reported under
 * spec.validation / spec.subresources / spec.additionalPrinterColumns.
 */
export function validateCustomResourceDefinition(crd: JsonObject): FieldCause[] {
  return crdIssues(crd);
}

/**
 * Structural-schema violations of one openAPIV3Schema, reported under `path`. Empty when structural.
 * Includes kube's keyword rules (no $ref, no uniqueItems, list types...) and, once structural,
 * that every default validates and is already pruned.
 */
export function structuralIssues(schema: JsonValue, path: string): FieldCause[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    return [
      { type: 'FieldValueRequired', field: path, message: 'Required value: schemas are required' },
    ];
  }
  return schemaIssues(schema, path);
}

/**
 * Validates a custom object against its version's openAPIV3Schema. Empty when valid.
 * Errors about the object as a whole (anyOf/oneOf/allOf/not summaries) carry the field "<nil>", as in kube.
 */
export function validateAgainstSchema(object: JsonValue, schema: JsonObject): FieldCause[] {
  return validateValue(compileSchema(schema), object);
}

/**
 * Applies `default` values of the schema (returns a new value; input untouched).
 * Nulls of non-nullable fields are dropped or replaced by their default, as kube does.
 * Unchanged subtrees are shared with the input rather than copied.
 */
export function applyDefaults(object: JsonValue, schema: JsonObject): JsonValue {
  return defaultNode(compileSchema(schema), object);
}

/**
 * Removes fields the schema does not declare (unless x-kubernetes-preserve-unknown-fields or
 * embedded resources). Returns the pruned value and the dotted paths removed, for
 * fieldValidation=Strict ("unknown field \"spec.foo\"") and Warn.
 * Paths are kube's, without a leading dot and sorted: "spec.foo", "spec.items[0].bar".
 * The input is untouched; unchanged subtrees are shared with it.
 */
export function prune(
  object: JsonValue,
  schema: JsonObject,
): { value: JsonValue; unknownFields: string[] } {
  return pruneValue(compileSchema(schema), object, true);
}
