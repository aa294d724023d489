// Plain JSON values as the API server stores and exchanges them.
export type JsonPrimitive = null | boolean | number | string;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Deep copy of a JSON value. A plain recursive copy: several times cheaper than
 * structuredClone for the small objects of every write, which is on the hot path.
 */
export function copyJson<T extends JsonValue>(value: T): T {
  return copyValue(value) as T;
}

function copyValue(value: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: JsonValue[] = new Array<JsonValue>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyValue(value[i] as JsonValue);
    return out;
  }
  const out: JsonObject = {};
  for (const key in value) {
    const child = value[key];
    // Own enumerable keys only, as JSON has; undefined can appear in objects built in code.
    if (child !== undefined && Object.hasOwn(value, key)) out[key] = copyValue(child);
  }
  return out;
}

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

/** Whether two JSON values are equal (objects by their keys, in any order). */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!(k in b) || !jsonEqual(a[k], b[k])) return false;
  return true;
}

/** JSON with object keys sorted (undefined members left out): equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
