// Plain JSON value operations shared by the patch formats and server-side apply.
import type { JsonValue } from '../../shared/kube/json.js';
import { copyJson, isJsonObject, jsonEqual } from '../../shared/kube/json.js';

export { jsonEqual };

/** Deep copy of a JSON value. */
export function cloneJson<T extends JsonValue>(value: T): T {
  return copyJson(value);
}

/** JSON text with object keys sorted and <, >, & escaped, as Go's encoder writes keys of FieldsV1. */
export function canonicalJson(value: JsonValue): string {
  return sortedJson(value).replace(
    /[<>&\u2028\u2029]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function sortedJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (isJsonObject(value)) {
    const parts = Object.keys(value)
      .sort(compareStrings)
      .map((k) => `${JSON.stringify(k)}:${sortedJson(value[k] ?? null)}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Byte-wise string order (Go's strings.Compare for ASCII and BMP text). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// Rank of each JSON kind in the total order structured-merge-diff uses to sort values.
function kindRank(value: JsonValue): number {
  if (typeof value === 'number') return 0;
  if (typeof value === 'string') return 1;
  if (typeof value === 'boolean') return 2;
  if (Array.isArray(value)) return 3;
  if (value === null) return 5;
  return 4;
}

/** Total order over JSON values: numbers < strings < booleans < lists < maps < null. */
export function compareJson(a: JsonValue, b: JsonValue): number {
  const ra = kindRank(a);
  const rb = kindRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareJson(a[i] ?? null, b[i] ?? null);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const ka = Object.keys(a).sort(compareStrings);
    const kb = Object.keys(b).sort(compareStrings);
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
      const na = ka[i] ?? '';
      const nb = kb[i] ?? '';
      const c = compareStrings(na, nb) || compareJson(a[na] ?? null, b[nb] ?? null);
      if (c !== 0) return c;
    }
    return ka.length - kb.length;
  }
  return 0;
}
