// Copies and comparisons of objects as JSON, tuned for the write path: every write copies the
// object it builds on and compares the result with what was stored.
import {
  copyJson,
  isJsonObject,
  jsonEqual,
  type JsonObject,
  type JsonValue,
} from '../../shared/kube/json.js';

export { jsonEqual };

/** An object's metadata, created empty when it has none. */
export function metadataOf(object: JsonObject): JsonObject {
  const value = object['metadata'];
  if (isJsonObject(value)) return value;
  const fresh: JsonObject = {};
  object['metadata'] = fresh;
  return fresh;
}

/** A deep copy. */
export function clone<T extends JsonValue>(value: T): T {
  return copyJson(value);
}

/** Whether two objects are equal as JSON when the keys in `skip` are left out of both. */
function jsonEqualExcept(a: JsonObject, b: JsonObject, skip: readonly string[]): boolean {
  let counted = 0;
  for (const k in a) {
    if (!Object.hasOwn(a, k) || skip.includes(k)) continue;
    counted++;
    if (!(k in b) || !jsonEqual(a[k], b[k])) return false;
  }
  for (const k in b) if (Object.hasOwn(b, k) && !skip.includes(k)) counted--;
  return counted === 0;
}

/**
 * Whether two versions of an object differ only in bookkeeping: metadata.resourceVersion and
 * the times of managedFields entries (compared without building copies: this runs every write).
 */
export function sameButBookkeeping(a: JsonObject, b: JsonObject): boolean {
  if (!jsonEqualExcept(a, b, ['metadata'])) return false;
  const ma = metadataOf(a);
  const mb = metadataOf(b);
  if (!jsonEqualExcept(ma, mb, ['resourceVersion', 'managedFields'])) return false;
  const fa = ma['managedFields'];
  const fb = mb['managedFields'];
  if (!Array.isArray(fa) || !Array.isArray(fb)) return Array.isArray(fa) === Array.isArray(fb);
  if (fa.length !== fb.length) return false;
  for (let i = 0; i < fa.length; i++) {
    const x = fa[i];
    const y = fb[i];
    const same =
      isJsonObject(x) && isJsonObject(y) ? jsonEqualExcept(x, y, ['time']) : jsonEqual(x, y);
    if (!same) return false;
  }
  return true;
}

/** A shallow copy without `keys`. */
export function withoutKeys(object: JsonObject, keys: readonly string[]): JsonObject {
  const copy: JsonObject = { ...object };
  for (const k of keys) delete copy[k];
  return copy;
}

/**
 * A deep copy of an object to build a write on, except metadata.managedFields, which it shares
 * with `object`: the field manager replaces that list whole and never changes it in place, and a
 * shared list is recognised as unchanged without comparing it (it is most of a small object).
 * Key order is kept, so the written object serialises as the copied one did.
 */
export function writableCopy(value: JsonValue): JsonValue {
  if (!isJsonObject(value) || !isJsonObject(value['metadata'])) return clone(value);
  const metadata = value['metadata'];
  const out: JsonObject = {};
  for (const key in value) {
    const child = value[key];
    if (child === undefined || !Object.hasOwn(value, key)) continue;
    out[key] = key === 'metadata' ? {} : clone(child);
  }
  const metadataCopy = out['metadata'] as JsonObject;
  for (const key in metadata) {
    const child = metadata[key];
    if (child === undefined || !Object.hasOwn(metadata, key)) continue;
    metadataCopy[key] = key === 'managedFields' ? child : clone(child);
  }
  return out;
}
