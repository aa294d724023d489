// Strategic merge patch (application/strategic-merge-patch+json) as kube-apiserver applies
// it: maps merge, lists merge by their patchMergeKey or as primitive sets or are replaced,
// null deletes, and the $patch / $retainKeys / $setElementOrder / $deleteFromPrimitiveList
// directives kubectl writes into its three-way patches.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import { PatchError } from './errors.js';
import type { ListRule, MergeRules } from './index.js';
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
  return mergeMap(cloneJson(target), patch, '', rules) ?? {};
}

// Merges `patch` into `original` (owned, mutated). Undefined means "$patch: delete".
function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  path: string,
  rules: MergeRules,
): JsonObject | undefined {
  const directive = patch[PATCH];
  if (directive !== undefined) {
    if (directive === 'delete') return undefined;
    if (directive === 'replace') {
      const rest: JsonObject = { ...patch };
      delete rest[PATCH];
      return mergeMap({}, rest, path, rules);
    }
    if (directive !== 'merge')
      throw badRequest(
        `Unknown patch type: ${String(JSON.stringify(directive))} in map: ${JSON.stringify(patch)}`,
      );
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
    const merged = mergeValue(original[key], value, childPath, rules);
    if (merged === undefined) delete original[key];
    else original[key] = merged;
  }

  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const field = key.slice(SET_ORDER.length);
    if (!Array.isArray(order)) throw badRequest('invalid patch format of setElementOrder list');
    const current = original[field];
    if (Array.isArray(current))
      original[field] = reorder(current, order, patchListRule(rules, fieldRulePath(path, field)));
  }
  return original;
}

function mergeValue(
  original: JsonValue | undefined,
  patch: JsonValue,
  path: string,
  rules: MergeRules,
): JsonValue | undefined {
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
      isJsonObject(item) ? (mergeMap({}, item, itemPath, rules) ?? {}) : cloneJson(item),
    );
  }
  const mergeKey = rule.keys[0] ?? 'name';
  // An item {"$patch": "replace"} replaces the whole list with the other items of the patch.
  if (patch.some((item) => isJsonObject(item) && item[PATCH] === 'replace')) {
    return patch
      .filter((item) => !(isJsonObject(item) && item[PATCH] === 'replace'))
      .map((item) =>
        isJsonObject(item) ? (mergeMap({}, item, itemPath, rules) ?? {}) : cloneJson(item),
      );
  }
  const out: JsonValue[] = [...original];
  for (const item of patch) {
    if (!isJsonObject(item))
      throw badRequest(
        `the patch of list ${path} holds ${JSON.stringify(item)} where a map with merge key ${mergeKey} is expected`,
      );
    if (item[mergeKey] === undefined) {
      throw badRequest(
        `map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`,
      );
    }
    const at = out.findIndex(
      (existing) => isJsonObject(existing) && jsonEqual(existing[mergeKey], item[mergeKey]),
    );
    if (item[PATCH] === 'delete') {
      if (at >= 0) {
        // Every item with that key goes, including duplicates.
        for (let i = out.length - 1; i >= 0; i--) {
          const existing = out[i];
          if (isJsonObject(existing) && jsonEqual(existing[mergeKey], item[mergeKey]))
            out.splice(i, 1);
        }
      }
      continue;
    }
    const base = at >= 0 ? out[at] : undefined;
    const merged = mergeMap(isJsonObject(base) ? cloneJson(base) : {}, item, itemPath, rules);
    if (merged === undefined) {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) {
      out[at] = merged;
    } else {
      out.push(merged);
    }
  }
  return out;
}

/**
 * Applies $setElementOrder: items named in `order` take that order; items the order does not
 * name (server-only items) keep their place relative to the ordered items around them.
 */
function reorder(list: JsonValue[], order: JsonValue[], rule: ListRule): JsonValue[] {
  const keyOf = (item: JsonValue): JsonValue | undefined => {
    if (rule.type !== 'map') return item;
    const mergeKey = rule.keys[0] ?? 'name';
    return isJsonObject(item) ? item[mergeKey] : undefined;
  };
  const orderKeys = order.map(keyOf);
  const rank = (item: JsonValue): number => {
    const key = keyOf(item);
    return key === undefined
      ? -1
      : orderKeys.findIndex((k) => k !== undefined && jsonEqual(k, key));
  };
  const positions = new Map(list.map((item, i) => [item, i]));
  const ordered = list.filter((item) => rank(item) >= 0).sort((a, b) => rank(a) - rank(b));
  const serverOnly = list.filter((item) => rank(item) < 0);
  const out = [...ordered];
  let from = 0;
  for (const item of serverOnly) {
    const position = positions.get(item) ?? 0;
    let at = from;
    while (at < out.length) {
      const candidate = out[at];
      if (
        candidate !== undefined &&
        ordered.includes(candidate) &&
        (positions.get(candidate) ?? -1) > position
      )
        break;
      at++;
    }
    out.splice(at, 0, item);
    from = at + 1;
  }
  return out;
}
