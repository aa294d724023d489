// The object walks server-side apply is built on, all driven by MergeRules: the set of
// fields a value sets, the difference between two versions, the merge of an applied
// configuration into a live object, and the removal of fields from an object.
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import { PatchError } from './errors.js';
import { FieldSet, describePath } from './fieldset.js';
import type { PathElement } from './fieldset.js';
import type { ListRule, MergeRules } from './types.js';
import { applyListRule, fieldRulePath, itemRulePath } from './rules.js';
import { canonicalJson, cloneJson, jsonEqual } from './values.js';

type Shape =
  | { kind: 'leaf' }
  | { kind: 'map' }
  | { kind: 'list'; rule: Exclude<ListRule, { type: 'atomic' }> };

const LEAF: Shape = { kind: 'leaf' };
const MAP: Shape = { kind: 'map' };

// Maps merge field by field unless declared atomic; lists only when their rule says so.
function shapeOf(value: JsonValue, rulePath: string, rules: MergeRules): Shape {
  if (isJsonObject(value)) return rules.atomicMaps?.has(rulePath) ? LEAF : MAP;
  if (Array.isArray(value)) {
    const rule = applyListRule(rules, rulePath);
    return rule.type === 'atomic' ? LEAF : { kind: 'list', rule };
  }
  return LEAF;
}

function sameShape(a: Shape, b: Shape): boolean {
  return (
    a.kind === b.kind && (a.kind !== 'list' || (b.kind === 'list' && a.rule.type === b.rule.type))
  );
}

/** Path element of a list item: `k:{...}` for keyed lists, `v:<json>` for sets. Undefined when a key is missing. */
function itemElement(
  item: JsonValue,
  rule: Exclude<ListRule, { type: 'atomic' }>,
): PathElement | undefined {
  if (rule.type === 'set') return `v:${canonicalJson(item)}`;
  if (!isJsonObject(item)) return undefined;
  const key: JsonObject = {};
  for (const name of rule.keys) {
    const value = item[name] ?? rule.keyDefaults?.[name];
    if (value === undefined) return undefined;
    key[name] = value;
  }
  return `k:${canonicalJson(key)}`;
}

interface IndexedItem {
  element: PathElement;
  value: JsonValue;
}

/**
 * Identifies the items of a list. Strict mode (applied configurations) rejects items without
 * their keys and duplicates as kube-apiserver does; lenient mode (stored objects) falls back
 * to positions so that legacy data never blocks a write.
 */
function indexItems(
  list: readonly JsonValue[],
  rule: Exclude<ListRule, { type: 'atomic' }>,
  path: readonly PathElement[],
  strict: boolean,
): IndexedItem[] {
  const seen = new Set<PathElement>();
  return list.map((value, i) => {
    let element = itemElement(value, rule);
    if (element === undefined && rule.type === 'map') {
      if (strict) {
        const missing =
          rule.keys.find((k) => !isJsonObject(value) || value[k] === undefined) ??
          rule.keys[0] ??
          '';
        throw new PatchError(
          `${describePath(path)}: element ${i}: associative list with keys has an element that omits key field ${JSON.stringify(missing)} (and doesn't have default value)`,
          'BadRequest',
        );
      }
      element = `i:${i}`;
    }
    if (element === undefined || seen.has(element)) {
      if (strict) {
        throw new PatchError(
          `${describePath(path)}: duplicate entries for key ${describePath([element ?? ''])}`,
          'BadRequest',
        );
      }
      element = `i:${i}`;
    }
    seen.add(element);
    return { element, value };
  });
}

/** The fields a value sets, as an applier owns them (leaves, list items, empty maps). */
export function fieldSetOf(value: JsonObject, rules: MergeRules, strict: boolean): FieldSet {
  const set = new FieldSet();
  const walk = (node: FieldSet, v: JsonValue, rulePath: string, path: PathElement[]): void => {
    const shape = shapeOf(v, rulePath, rules);
    if (shape.kind === 'leaf') {
      node.member = true;
    } else if (shape.kind === 'map' && isJsonObject(v)) {
      for (const [name, child] of Object.entries(v)) {
        const element = `f:${name}`;
        const childNode = node.child(element);
        walk(childNode, child, fieldRulePath(rulePath, name), [...path, element]);
        if (isJsonObject(child) && Object.keys(child).length === 0) childNode.member = true;
      }
    } else if (shape.kind === 'list' && Array.isArray(v)) {
      for (const item of indexItems(v, shape.rule, path, strict)) {
        const childNode = node.child(item.element);
        walk(childNode, item.value, itemRulePath(rulePath), [...path, item.element]);
        childNode.member = true;
      }
    }
  };
  walk(set, value, '', []);
  return set;
}

/** What changed between two versions of an object, path by path. */
export interface Comparison {
  added: FieldSet;
  removed: FieldSet;
  modified: FieldSet;
}

/**
 * Compares two versions: leaves added, removed or changed, plus maps and list items that
 * appeared or disappeared as a whole (which is what gives FieldsV1 its "." entries).
 */
export function compareObjects(
  before: JsonObject,
  after: JsonObject,
  rules: MergeRules,
): Comparison {
  const result: Comparison = {
    added: new FieldSet(),
    removed: new FieldSet(),
    modified: new FieldSet(),
  };
  // Paths are built only for what changed: `at` links each element to its parent's.
  const insert = (set: FieldSet, at: PathLink | undefined): void => {
    nodeAt(set, at).member = true;
  };
  const walk = (
    a: JsonValue | undefined,
    b: JsonValue | undefined,
    rulePath: string,
    at: PathLink | undefined,
  ): void => {
    // The same value (shared by both versions) has no changes below it.
    if (a === b) return;
    const sa = a === undefined ? undefined : shapeOf(a, rulePath, rules);
    const sb = b === undefined ? undefined : shapeOf(b, rulePath, rules);
    const shape = sb ?? sa ?? LEAF;
    if (shape.kind === 'leaf' || (sa && sb && !sameShape(sa, sb))) {
      if (a === undefined) insert(result.added, at);
      else if (b === undefined) insert(result.removed, at);
      else if (!jsonEqual(a, b)) insert(result.modified, at);
      return;
    }
    if (shape.kind === 'map') {
      const ma = isJsonObject(a) ? a : EMPTY;
      const mb = isJsonObject(b) ? b : EMPTY;
      for (const name in ma) {
        if (!Object.hasOwn(ma, name)) continue;
        const va = ma[name];
        const vb = mb[name];
        // Equal leaves and shared values: nothing to record, and no path to build.
        if (va !== vb) field(va, vb, rulePath, name, at);
      }
      for (const name in mb) {
        if (!Object.hasOwn(mb, name) || Object.hasOwn(ma, name)) continue;
        field(undefined, mb[name], rulePath, name, at);
      }
    } else {
      const path = pathOf(at);
      const ia = Array.isArray(a)
        ? new Map(indexItems(a, shape.rule, path, false).map((i) => [i.element, i.value]))
        : new Map<PathElement, JsonValue>();
      const ib = Array.isArray(b)
        ? new Map(indexItems(b, shape.rule, path, false).map((i) => [i.element, i.value]))
        : new Map<PathElement, JsonValue>();
      const itemPath = itemRulePath(rulePath);
      for (const [element, value] of ia)
        walk(value, ib.get(element), itemPath, { element, parent: at });
      for (const [element, value] of ib)
        if (!ia.has(element)) walk(undefined, value, itemPath, { element, parent: at });
    }
    if (at === undefined) return;
    if (a === undefined && !rules.structs?.has(rulePath)) insert(result.added, at);
    if (b === undefined) insert(result.removed, at);
  };
  // A field of a map: its rule path is only read for maps and lists (leaves need none).
  const field = (
    a: JsonValue | undefined,
    b: JsonValue | undefined,
    parentRulePath: string,
    name: string,
    parent: PathLink | undefined,
  ): void => {
    const nested = (typeof a === 'object' && a !== null) || (typeof b === 'object' && b !== null);
    walk(a, b, nested ? fieldRulePath(parentRulePath, name) : '', {
      element: `f:${name}`,
      parent,
    });
  };
  walk(before, after, '', undefined);
  return result;
}

/** A path element and the path of its parent (lists of path elements built only on demand). */
interface PathLink {
  element: PathElement;
  parent: PathLink | undefined;
}

// The node of `set` at the linked path, made when absent (no list of the path is built).
function nodeAt(set: FieldSet, at: PathLink | undefined): FieldSet {
  return at === undefined ? set : nodeAt(set, at.parent).child(at.element);
}

function pathOf(at: PathLink | undefined): PathElement[] {
  const path: PathElement[] = [];
  for (let link = at; link !== undefined; link = link.parent) path.push(link.element);
  return path.reverse();
}

const EMPTY: JsonObject = {};

/** Merges an applied configuration into a live object: applied leaves win, maps and keyed lists merge. */
export function mergeApplied(live: JsonObject, applied: JsonObject, rules: MergeRules): JsonObject {
  const merge = (
    l: JsonValue | undefined,
    r: JsonValue,
    rulePath: string,
    path: PathElement[],
  ): JsonValue => {
    if (l === undefined) return cloneJson(r);
    const sl = shapeOf(l, rulePath, rules);
    const sr = shapeOf(r, rulePath, rules);
    if (sr.kind === 'leaf' || !sameShape(sl, sr)) return cloneJson(r);
    if (sr.kind === 'map' && isJsonObject(l) && isJsonObject(r)) {
      const out: JsonObject = { ...l };
      for (const [name, value] of Object.entries(r)) {
        out[name] = merge(l[name], value, fieldRulePath(rulePath, name), [...path, `f:${name}`]);
      }
      return out;
    }
    if (sr.kind === 'list' && Array.isArray(l) && Array.isArray(r)) {
      const itemPath = itemRulePath(rulePath);
      const lhs = indexItems(l, sr.rule, path, false);
      const rhs = indexItems(r, sr.rule, path, true);
      const lhsByElement = new Map(lhs.map((i) => [i.element, i.value]));
      const mergedItem = (item: IndexedItem): JsonValue =>
        merge(lhsByElement.get(item.element), item.value, itemPath, [...path, item.element]);
      return interleave(lhs, rhs).map((item) =>
        item.fromApplied ? mergedItem(item) : cloneJson(item.value),
      );
    }
    return cloneJson(r);
  };
  const merged = merge(live, applied, '', []);
  return isJsonObject(merged) ? merged : {};
}

/**
 * Order of a merged list: applied items keep the applied order, live-only items stay where
 * they were relative to the items around them.
 */
function interleave(
  lhs: readonly IndexedItem[],
  rhs: readonly IndexedItem[],
): (IndexedItem & { fromApplied: boolean })[] {
  const rhsIndex = new Map(rhs.map((item, i) => [item.element, i]));
  const out: (IndexedItem & { fromApplied: boolean })[] = [];
  let next = 0;
  for (const item of lhs) {
    const at = rhsIndex.get(item.element);
    if (at === undefined) {
      out.push({ ...item, fromApplied: false });
    } else if (at >= next) {
      for (; next <= at; next++) {
        const applied = rhs[next];
        if (applied) out.push({ ...applied, fromApplied: true });
      }
    }
  }
  for (; next < rhs.length; next++) {
    const applied = rhs[next];
    if (applied) out.push({ ...applied, fromApplied: true });
  }
  return out;
}

/** Removes the paths of `set` from an object; maps and lists emptied by the removal go too. */
export function removeFields(object: JsonObject, set: FieldSet, rules: MergeRules): JsonObject {
  const prune = (
    v: JsonValue,
    node: FieldSet,
    rulePath: string,
    path: PathElement[],
  ): JsonValue | undefined => {
    const shape = shapeOf(v, rulePath, rules);
    if (shape.kind === 'map' && isJsonObject(v)) {
      const out: JsonObject = {};
      let removedSome = false;
      for (const [name, child] of Object.entries(v)) {
        const childNode = node.children.get(`f:${name}`);
        if (!childNode) {
          out[name] = child;
          continue;
        }
        const kept = childNode.member
          ? undefined
          : prune(child, childNode, fieldRulePath(rulePath, name), [...path, `f:${name}`]);
        if (kept === undefined) removedSome = true;
        else out[name] = kept;
      }
      return removedSome && Object.keys(out).length === 0 ? undefined : out;
    }
    if (shape.kind === 'list' && Array.isArray(v)) {
      const out: JsonValue[] = [];
      let removedSome = false;
      for (const item of indexItems(v, shape.rule, path, false)) {
        const childNode = node.children.get(item.element);
        const kept = !childNode
          ? item.value
          : childNode.member
            ? undefined
            : prune(item.value, childNode, itemRulePath(rulePath), [...path, item.element]);
        if (kept === undefined) removedSome = true;
        else out.push(kept);
      }
      return removedSome && out.length === 0 ? undefined : out;
    }
    return v;
  };
  const pruned = prune(object, set, '', []);
  return isJsonObject(pruned) ? pruned : {};
}
