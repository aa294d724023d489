// Structural pruning as kube-apiserver does it on write: fields the schema does not specify are
// dropped, except below x-kubernetes-preserve-unknown-fields and the apiVersion/kind/metadata of
// the object root and of embedded resources. Copies only the objects on the way to a removal.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import type { SchemaNode } from './compiled.js';
import { childPath, indexPath } from './cause.js';

/** Collects the paths of removed fields, as kube prints them ("spec.foo", "spec.list[0].bar"). */
interface PruneRun {
  readonly unknown: string[];
}

function keepsMetaField(key: string, value: JsonValue): boolean {
  if (key === 'apiVersion' || key === 'kind') return typeof value === 'string';
  if (key === 'metadata') return isJsonObject(value);
  return false;
}

function pruneObject(
  node: SchemaNode | undefined,
  value: JsonObject,
  path: string,
  asResource: boolean,
  run: PruneRun,
): JsonObject {
  let out: JsonObject | undefined;
  for (const [key, sub] of Object.entries(value)) {
    const subPath = childPath(path, key);
    if (node !== undefined && (asResource || node.embeddedResource) && keepsMetaField(key, sub))
      continue;
    const prop = node?.properties?.get(key);
    if (prop !== undefined || (node !== undefined && node.additionalProperties !== undefined)) {
      const subNode =
        prop ??
        (typeof node?.additionalProperties === 'object' ? node.additionalProperties : undefined);
      const next = pruneNode(subNode, sub, subPath, false, run);
      if (next !== sub) (out ??= { ...value })[key] = next;
    } else {
      run.unknown.push(subPath);
      delete (out ??= { ...value })[key];
    }
  }
  return out ?? value;
}

function pruneArray(
  items: SchemaNode | undefined,
  value: JsonValue[],
  path: string,
  run: PruneRun,
): JsonValue[] {
  let out: JsonValue[] | undefined;
  for (let i = 0; i < value.length; i++) {
    const item = value[i] ?? null;
    const next = pruneNode(items, item, indexPath(path, i), false, run);
    if (next !== item) (out ??= [...value])[i] = next;
  }
  return out ?? value;
}

/** Below preserve-unknown-fields: unknown keys stay, known ones are still pruned inside. */
function skipPrune(
  node: SchemaNode | undefined,
  value: JsonValue,
  path: string,
  asResource: boolean,
  run: PruneRun,
): JsonValue {
  if (node === undefined) return value;
  if (Array.isArray(value)) {
    let out: JsonValue[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i] ?? null;
      const next = skipPrune(node.items, item, indexPath(path, i), false, run);
      if (next !== item) (out ??= [...value])[i] = next;
    }
    return out ?? value;
  }
  if (!isJsonObject(value)) return value;
  let out: JsonObject | undefined;
  for (const [key, sub] of Object.entries(value)) {
    if ((asResource || node.embeddedResource) && keepsMetaField(key, sub)) continue;
    const prop = node.properties?.get(key);
    if (prop === undefined && node.additionalProperties === undefined) continue;
    const subNode =
      prop ??
      (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
    const next = pruneNode(subNode, sub, childPath(path, key), false, run);
    if (next !== sub) (out ??= { ...value })[key] = next;
  }
  return out ?? value;
}

/** Prunes `value` against `node` (undefined: nothing is specified below here). */
export function pruneNode(
  node: SchemaNode | undefined,
  value: JsonValue,
  path: string,
  asResource: boolean,
  run: PruneRun,
): JsonValue {
  if (node?.preserveUnknownFields === true) return skipPrune(node, value, path, asResource, run);
  if (isJsonObject(value)) return pruneObject(node, value, path, asResource, run);
  if (Array.isArray(value)) return pruneArray(node?.items, value, path, run);
  return value;
}

/** Prunes a whole object (the resource root keeps apiVersion, kind and metadata). */
export function pruneValue(
  node: SchemaNode,
  value: JsonValue,
  isResourceRoot: boolean,
): { value: JsonValue; unknownFields: string[] } {
  const run: PruneRun = { unknown: [] };
  const pruned = pruneNode(node, value, '', isResourceRoot, run);
  return { value: pruned, unknownFields: run.unknown.sort() };
}
