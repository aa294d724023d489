// Typed reads of the loosely-typed JSON of a CustomResourceDefinition.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';

/** The value if it is an object. */
export function objectAt(value: JsonValue | undefined): JsonObject | undefined {
  return isJsonObject(value) ? value : undefined;
}

/** The value if it is a string, else empty (kube's zero value). */
export function stringAt(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

/** The string entries of a list. */
export function stringsAt(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
