// JSON of stored objects, encoded once: a write's response, its watch events and the lists that
// include the object share the same UTF-8 bytes.
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import { memoized } from './memo.js';

const textSlot = Symbol('jsonText');
const bytesSlot = Symbol('jsonBytes');

const stringify = (value: object): string => JSON.stringify(value);
const encode = (value: object): Buffer => Buffer.from(JSON.stringify(value));

/**
 * JSON text of an object, kept on the object. Only valid because stored objects are never
 * mutated once stored (the core and controllers clone before changing anything).
 */
export function jsonText(value: JsonValue): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return JSON.stringify(value);
  return memoized(value, textSlot, stringify);
}

/**
 * UTF-8 JSON of an object, kept on the object (as jsonText: stored objects only change by
 * being replaced). Bytes rather than text: what every answer and watch line needs, and kept out
 * of the JavaScript heap the garbage collector walks.
 */
export function jsonBytes(value: JsonValue): Buffer {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return Buffer.from(JSON.stringify(value));
  return memoized(value, bytesSlot, encode);
}

const comma = Buffer.from(',');

/**
 * UTF-8 JSON of a list: `head` (kind, apiVersion, metadata) followed by `items`, each item's
 * bytes taken from its memo, so listing stored objects reuses what their writes already encoded.
 * The same JSON JSON.stringify gives for `{ ...head, items }`.
 */
export function listJsonBytes(head: JsonObject, items: readonly JsonObject[]): Buffer {
  const start = JSON.stringify(head);
  const parts: Buffer[] = [
    Buffer.from(`${start.length > 2 ? `${start.slice(0, -1)},` : '{'}"items":[`),
  ];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) parts.push(comma);
    parts.push(jsonBytes(items[i] as JsonObject));
  }
  parts.push(Buffer.from(']}'));
  return Buffer.concat(parts);
}
