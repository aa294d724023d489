// JSON text of stored objects, computed once: a write's response and its watch events share it.
import type { JsonObject, JsonValue } from './json.js';

const texts = new WeakMap<JsonObject, string>();

/**
 * JSON text of an object, cached by identity. Only valid because stored objects are never
 * mutated once stored (the core and controllers clone before changing anything).
 */
export function jsonText(value: JsonValue): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return JSON.stringify(value);
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    texts.set(value, text);
  }
  return text;
}
