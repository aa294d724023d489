// JSON text of stored objects, computed once: a write's response and its watch events share it.
import type { JsonObject, JsonValue } from '../shared/kube/json.js';
import { memoized } from './memo.js';

const textSlot = Symbol('jsonText');

const stringify = (value: object): string => JSON.stringify(value);

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
 * JSON text of a list: `head` (kind, apiVersion, metadata) followed by `items`, each item's text
 * taken from its memo, so listing stored objects reuses what their writes already serialised.
 * The same text JSON.stringify gives for `{ ...head, items }`.
 */
export function listJsonText(head: JsonObject, items: readonly JsonObject[]): string {
  const start = JSON.stringify(head);
  const parts = new Array<string>(items.length);
  for (let i = 0; i < items.length; i++) parts[i] = jsonText(items[i] as JsonObject);
  return `${start.length > 2 ? `${start.slice(0, -1)},` : '{'}"items":[${parts.join(',')}]}`;
}
