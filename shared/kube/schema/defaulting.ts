// Structural defaulting as kube-apiserver applies it on write and on read of stored objects.
// Unchanged subtrees are shared with the input instead of deep-copied; only the objects and
// arrays on the way to a change are copied, so the input is never mutated.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import type { SchemaNode } from './compiled.js';

function isNonNullableNull(value: JsonValue | undefined, node: SchemaNode): boolean {
  return value === null && !node.nullable;
}

function defaultObject(node: SchemaNode, value: JsonObject): JsonObject {
  let out: JsonObject | undefined;
  const writable = (): JsonObject => (out ??= { ...value });

  if (node.properties !== undefined) {
    for (const [key, prop] of node.properties) {
      if (prop.defaultValue === undefined) continue;
      const current = value[key];
      if (current === undefined || isNonNullableNull(current, prop)) {
        writable()[key] = structuredClone(prop.defaultValue.value);
      }
    }
  }
  const additional =
    typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
  const source = out ?? value;
  for (const key of Object.keys(source)) {
    const sub = node.properties?.get(key) ?? additional;
    if (sub === undefined) continue;
    let current = source[key] ?? null;
    if (isNonNullableNull(current, sub)) {
      // kube drops nulls of non-nullable fields, or replaces them by the default.
      if (sub.defaultValue === undefined) {
        delete writable()[key];
        continue;
      }
      current = structuredClone(sub.defaultValue.value);
      writable()[key] = current;
    }
    const next = defaultNode(sub, current);
    if (next !== source[key]) writable()[key] = next;
  }
  return out ?? value;
}

function defaultArray(items: SchemaNode, value: JsonValue[]): JsonValue[] {
  let out: JsonValue[] | undefined;
  for (let i = 0; i < value.length; i++) {
    let current = value[i] ?? null;
    if (isNonNullableNull(current, items) && items.defaultValue !== undefined) {
      current = structuredClone(items.defaultValue.value);
    }
    const next = defaultNode(items, current);
    if (next !== value[i]) (out ??= [...value])[i] = next;
  }
  return out ?? value;
}

/** Applies the defaults of `node` below `value`; returns `value` itself when nothing changed. */
export function defaultNode(node: SchemaNode, value: JsonValue): JsonValue {
  if (isJsonObject(value)) return defaultObject(node, value);
  if (Array.isArray(value) && node.items !== undefined) return defaultArray(node.items, value);
  return value;
}
