// Reading plain JSON values as text without "[object Object]" surprises.
import type { JsonValue } from '../shared/kube/json.js';

/** The string entries of a JSON list; none when the value is not a list. */
export function stringItems(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** A JSON value as text: strings as they are, numbers and booleans printed, null/absent as "", objects as JSON. */
export function text(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
