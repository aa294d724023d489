// JSON text of stored objects, computed once: a write's response and its watch events share it.
import type { JsonValue } from '../shared/kube/json.js';
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
