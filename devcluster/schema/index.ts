// Public surface of the schema room: OpenAPI v3 structural schemas of CustomResourceDefinitions,
// validation of objects against them, defaulting and pruning, as kube-apiserver does.
// CONTRACT (owned by the schema helper; bodies are filled in on its branch).
import type { JsonObject, JsonValue } from '../json.js';

/** A Kubernetes StatusCause (Status.details.causes[]). */
export interface FieldCause {
  type:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueNotSupported'
    | 'FieldValueTypeInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueDuplicate'
    | 'FieldValueTooLong'
    | 'FieldValueTooMany'
    | 'FieldValueNotFound';
  /** Path as Kubernetes prints it, e.g. "spec.installModes[0].type". */
  field: string;
  message: string;
}

/**
 * Validates a CustomResourceDefinition object as kube-apiserver does on create/update:
 * names (plural.group), scope, versions (exactly one storage, served), structural schemas
 * per version, printer column JSON paths, subresources. Empty when valid.
 */
export declare function validateCustomResourceDefinition(crd: JsonObject): FieldCause[];

/** Structural-schema violations of one openAPIV3Schema, reported under `path`. Empty when structural. */
export declare function structuralIssues(schema: JsonValue, path: string): FieldCause[];

/** Validates a custom object against its version's openAPIV3Schema. Empty when valid. */
export declare function validateAgainstSchema(object: JsonValue, schema: JsonObject): FieldCause[];

/** Applies `default` values of the schema (returns a new value; input untouched). */
export declare function applyDefaults(object: JsonValue, schema: JsonObject): JsonValue;

/**
 * Removes fields the schema does not declare (unless x-kubernetes-preserve-unknown-fields or
 * embedded resources). Returns the pruned value and the dotted paths removed, for
 * fieldValidation=Strict ("unknown field \"spec.foo\"") and Warn.
 */
export declare function prune(
  object: JsonValue,
  schema: JsonObject,
): { value: JsonValue; unknownFields: string[] };
