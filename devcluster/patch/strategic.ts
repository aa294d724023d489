// Strategic merge patch (application/strategic-merge-patch+json) as kube-apiserver applies
// it: maps merge, lists merge by their patchMergeKey or as primitive sets or are replaced,
// null deletes, and the $patch / $retainKeys / $setElementOrder / $deleteFromPrimitiveList
// directives kubectl writes into its three-way patches.
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import { PatchError } from './errors.js';
import type { ListRule, MergeRules } from './types.js';
import { fieldRulePath, itemRulePath, patchListRule } from './rules.js';
import { cloneJson, jsonEqual } from './values.js';

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE = '$deleteFromPrimitiveList/';

function badRequest(message: string): PatchError {
  return new PatchError(message, 'BadRequest');
}

/** Strategic merge patch with $patch/$retainKeys/$setElementOrder/$deleteFromPrimitiveList directives. */
export function applyStrategicMergePatch(
  target: JsonObject,
  patch: JsonObject,
  rules: MergeRules,
): JsonObject {
  return mergeMap(cloneJson(target), patch, '', rules);
}

// Merges `patch` into `original` (owned, mutated).
function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  path: string,
  rules: MergeRules,
): JsonObject {
  const directive = patch[PATCH];
  if (directive !== undefined) {
    // As kube-apiserver: "delete" empties the map, "replace" takes the patch map as it is.
    if (directive === 'delete') return {};
    if (directive === 'replace') {
      const rest: JsonObject = { ...patch };
      delete rest[PATCH];
      return mergeMap({}, rest, path, rules);
    }
    throw badRequest(`unknown patch type: ${goString(directive)} in map: ${goString(patch)}`);
  }

  const retainKeys = patch[RETAIN_KEYS];
  if (retainKeys !== undefined) {
    if (!Array.isArray(retainKeys) || !retainKeys.every((k) => typeof k === 'string')) {
      throw badRequest('invalid patch format of retainKeys');
    }
    const retained = new Set(retainKeys);
    for (const key of Object.keys(patch)) {
      // Nulls delete, so kubectl may send them for keys the retain list drops.
      if (!key.startsWith('$') && patch[key] !== null && !retained.has(key)) {
        throw new PatchError("patch content doesn't match retainKeys list", 'Invalid');
      }
    }
    for (const key of Object.keys(original)) if (!retained.has(key)) delete original[key];
  }

  // $setElementOrder places server-only items by their position in the stored list.
  const stored = new Map<string, JsonValue[]>();
  for (const key of Object.keys(patch)) {
    const value = key.startsWith(SET_ORDER) ? original[key.slice(SET_ORDER.length)] : undefined;
    if (Array.isArray(value)) stored.set(key.slice(SET_ORDER.length), [...value]);
  }

  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(DELETE_FROM_PRIMITIVE)) continue;
    const field = key.slice(DELETE_FROM_PRIMITIVE.length);
    if (!Array.isArray(value)) throw badRequest('invalid patch format of primitive list');
    const current = original[field];
    if (Array.isArray(current)) {
      original[field] = current.filter((item) => !value.some((gone) => jsonEqual(gone, item)));
    }
  }

  for (const [key, value] of Object.entries(patch)) {
    if (
      key === PATCH ||
      key === RETAIN_KEYS ||
      key.startsWith(SET_ORDER) ||
      key.startsWith(DELETE_FROM_PRIMITIVE)
    )
      continue;
    const childPath = fieldRulePath(path, key);
    if (value === null) {
      delete original[key];
      continue;
    }
    original[key] = mergeValue(original[key], value, childPath, rules);
  }

  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const field = key.slice(SET_ORDER.length);
    if (!Array.isArray(order)) throw badRequest('invalid patch format of setElementOrder list');
    const current = original[field];
    if (Array.isArray(current)) {
      const rule = patchListRule(rules, fieldRulePath(path, field));
      original[field] = reorder(current, order, rule, stored.get(field) ?? []);
    }
  }
  return original;
}

function mergeValue(
  original: JsonValue | undefined,
  patch: JsonValue,
  path: string,
  rules: MergeRules,
): JsonValue {
  if (isJsonObject(patch)) {
    return mergeMap(isJsonObject(original) ? original : {}, patch, path, rules);
  }
  if (Array.isArray(patch)) {
    return mergeList(Array.isArray(original) ? original : [], patch, path, rules);
  }
  return patch;
}

function mergeList(
  original: JsonValue[],
  patch: JsonValue[],
  path: string,
  rules: MergeRules,
): JsonValue[] {
  const rule = patchListRule(rules, path);
  const itemPath = itemRulePath(path);
  if (rule.type === 'set') {
    const out = [...original];
    for (const item of patch)
      if (!out.some((existing) => jsonEqual(existing, item))) out.push(cloneJson(item));
    return out;
  }
  if (rule.type === 'atomic') {
    // A replaced list still goes through directive handling for its map items.
    return patch.map((item) =>
      isJsonObject(item) ? mergeMap({}, item, itemPath, rules) : cloneJson(item),
    );
  }
  const mergeKey = rule.keys[0] ?? 'name';
  const keyOf = (item: JsonObject): JsonValue => {
    const key = item[mergeKey];
    if (key === undefined) {
      throw badRequest(`map: ${goString(item)} does not contain declared merge key: ${mergeKey}`);
    }
    return key;
  };
  // Directive items first, as kube-apiserver does: deletions, then a whole-list replace.
  let out: JsonValue[] = [...original];
  let replace = false;
  const items: JsonObject[] = [];
  for (const item of patch) {
    if (!isJsonObject(item)) {
      throw badRequest(
        `the list ${path} merges by ${mergeKey}, so its patch items must be maps, got ${goString(item)}`,
      );
    }
    const directive = item[PATCH];
    if (directive === undefined) {
      items.push(item);
    } else if (directive === 'delete') {
      const key = keyOf(item);
      out = out.filter(
        (existing) => !(isJsonObject(existing) && jsonEqual(existing[mergeKey], key)),
      );
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw badRequest('merging lists cannot yet be specified in the patch');
    } else {
      throw badRequest(`unknown patch type: ${goString(directive)} in map: ${goString(item)}`);
    }
  }
  if (replace) return items.map((item) => mergeMap({}, item, itemPath, rules));
  for (const item of items) {
    const key = keyOf(item);
    const at = out.findIndex(
      (existing) => isJsonObject(existing) && jsonEqual(existing[mergeKey], key),
    );
    const base = at >= 0 ? out[at] : undefined;
    const merged = mergeMap(isJsonObject(base) ? cloneJson(base) : {}, item, itemPath, rules);
    if (at >= 0) out[at] = merged;
    else out.push(merged);
  }
  return out;
}

/** A value as Go's %v prints it in kube-apiserver's messages: map[a:1 b:[x y]]. */
function goString(value: JsonValue): string {
  if (value === null) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goString).join(' ')}]`;
  if (isJsonObject(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${k}:${goString(value[k] ?? null)}`);
    return `map[${entries.join(' ')}]`;
  }
  return String(value);
}

/**
 * Applies $setElementOrder: items named in `order` take that order; items it does not name
 * (server-only items) are slotted in before the first ordered item that came after them in
 * the stored list. Ordered items the server never had are not compared, so they go first.
 */
function reorder(
  list: JsonValue[],
  order: JsonValue[],
  rule: ListRule,
  server: readonly JsonValue[],
): JsonValue[] {
  const keyOf = (item: JsonValue): JsonValue | undefined => {
    if (rule.type !== 'map') return item;
    const mergeKey = rule.keys[0] ?? 'name';
    return isJsonObject(item) ? item[mergeKey] : undefined;
  };
  const indexIn = (items: readonly JsonValue[], item: JsonValue): number => {
    const key = keyOf(item);
    return key === undefined ? -1 : items.findIndex((other) => jsonEqual(keyOf(other), key));
  };
  const ordered = list
    .filter((item) => indexIn(order, item) >= 0)
    .sort((a, b) => indexIn(order, a) - indexIn(order, b));
  const serverOnly = list.filter((item) => indexIn(order, item) < 0);
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < ordered.length) {
    const left = serverOnly[i];
    const right = ordered[j];
    if (left === undefined) {
      if (right !== undefined) out.push(right);
      j++;
    } else if (right === undefined) {
      out.push(left);
      i++;
    } else {
      const l = indexIn(server, left);
      const r = indexIn(server, right);
      if (l >= 0 && r >= 0 && l < r) {
        out.push(left);
        i++;
      } else {
        out.push(right);
        j++;
      }
    }
  }
  return out;
}
