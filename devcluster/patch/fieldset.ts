// Sets of field paths as server-side apply tracks them, stored in the shape of FieldsV1:
// a tree whose edges are serialized path elements ("f:name", "k:{...}", "v:<json>", "i:<n>").
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import { compareJson, compareStrings } from './values.js';

/** One serialized path element, e.g. `f:spec`, `k:{"name":"nginx"}`, `v:"a"`, `i:0`. */
export type PathElement = string;

const noChildren: ReadonlyMap<PathElement, FieldSet> = new Map();

/**
 * A set of field paths; `member` says whether the path leading to this node is itself in the set.
 * Sets are built with `insert`/`child` and then treated as immutable: `union`, `difference` and
 * `intersection` return new sets that share unchanged subtrees with their inputs (or are an input
 * itself), which keeps the managedFields bookkeeping of every write cheap. Leaves hold no map.
 */
export class FieldSet {
  member = false;
  private kids: Map<PathElement, FieldSet> | undefined = undefined;

  /** The child nodes by path element (read only: build with `child` and `insert`). */
  get children(): ReadonlyMap<PathElement, FieldSet> {
    return this.kids ?? noChildren;
  }

  /** Child node for `element`, created when absent. */
  child(element: PathElement): FieldSet {
    this.kids ??= new Map();
    let node = this.kids.get(element);
    if (!node) {
      node = new FieldSet();
      this.kids.set(element, node);
    }
    return node;
  }

  /** Adds `path` to the set. */
  insert(path: readonly PathElement[]): void {
    let node = path.length === 0 ? this : this.child(path[0] ?? '');
    for (let i = 1; i < path.length; i++) node = node.child(path[i] ?? '');
    node.member = true;
  }

  /** Whether `path` is in the set. */
  has(path: readonly PathElement[]): boolean {
    if (path.length === 0) return this.member;
    let node = this.kids?.get(path[0] ?? '');
    for (let i = 1; i < path.length; i++) node = node?.kids?.get(path[i] ?? '');
    return node?.member === true;
  }

  /** Whether both sets hold the same paths. */
  equals(other: FieldSet): boolean {
    if (other === this) return true;
    if (this.member !== other.member) return false;
    for (const [element, node] of this.children) {
      const theirs = other.kids?.get(element);
      if (theirs === undefined ? !node.isEmpty() : !node.equals(theirs)) return false;
    }
    for (const [element, node] of other.children)
      if (this.kids?.has(element) !== true && !node.isEmpty()) return false;
    return true;
  }

  /** True when no path is in the set. */
  isEmpty(): boolean {
    if (this.member) return false;
    if (this.kids === undefined) return true;
    for (const node of this.kids.values()) if (!node.isEmpty()) return false;
    return true;
  }

  /** Paths in either set (may be `this` or `other` itself when one holds the other). */
  union(other: FieldSet): FieldSet {
    if (other === this || other.isEmpty()) return this;
    if (this.isEmpty()) return other;
    let out: FieldSet | undefined;
    const member = this.member || other.member;
    if (member !== this.member) out = this.shallowCopy();
    for (const [element, node] of other.children) {
      const mine = this.kids?.get(element);
      const merged = mine === undefined ? node : mine.union(node);
      if (merged === mine) continue;
      out ??= this.shallowCopy();
      out.setChild(element, merged);
    }
    if (out === undefined) return this;
    out.member = member;
    return out;
  }

  /** Paths of this set that are not in `other`. */
  difference(other: FieldSet): FieldSet {
    return this.filter(other, false);
  }

  /** Paths in both sets. */
  intersection(other: FieldSet): FieldSet {
    return this.filter(other, true);
  }

  /** Every path in the set, depth first. */
  paths(): PathElement[][] {
    const out: PathElement[][] = [];
    const visit = (node: FieldSet, prefix: PathElement[]): void => {
      if (node.member && prefix.length > 0) out.push(prefix);
      for (const [element, childNode] of sortedChildren(node))
        visit(childNode, [...prefix, element]);
    };
    visit(this, []);
    return out;
  }

  /** Deep copy. */
  clone(): FieldSet {
    const out = new FieldSet();
    out.addAll(this);
    return out;
  }

  /** FieldsV1 JSON: members without children are `{}`, members with children carry `".": {}`. */
  toFieldsV1(): JsonObject {
    const out: JsonObject = {};
    for (const [element, node] of sortedChildren(this)) {
      if (node.isEmpty()) continue;
      const inner = node.toFieldsV1();
      out[element] = node.member && node.hasMembersBelow() ? { '.': {}, ...inner } : inner;
    }
    return out;
  }

  /** Reads FieldsV1 JSON (as stored in metadata.managedFields[].fieldsV1). */
  static fromFieldsV1(json: JsonValue | undefined): FieldSet {
    const set = new FieldSet();
    const read = (node: FieldSet, value: JsonValue | undefined): void => {
      if (!isJsonObject(value)) return;
      for (const element in value) {
        if (element === '.' || !Object.hasOwn(value, element)) continue;
        const childValue = value[element];
        const childNode = node.child(element);
        if (!isJsonObject(childValue)) continue;
        let empty = true;
        for (const key in childValue) {
          if (!Object.hasOwn(childValue, key)) continue;
          empty = false;
          if (key === '.') {
            childNode.member = true;
            break;
          }
        }
        if (empty) childNode.member = true;
        read(childNode, childValue);
      }
    };
    read(set, json);
    return set;
  }

  // Whether a child holds any path (what decides the "." entry of FieldsV1).
  private hasMembersBelow(): boolean {
    if (this.kids === undefined) return false;
    for (const node of this.kids.values()) if (!node.isEmpty()) return true;
    return false;
  }

  private setChild(element: PathElement, node: FieldSet): void {
    (this.kids ??= new Map()).set(element, node);
  }

  private addAll(other: FieldSet): void {
    if (other.member) this.member = true;
    for (const [element, node] of other.children) this.child(element).addAll(node);
  }

  // keep=false: the paths not in `other`; keep=true: the paths also in `other`. Returns `this`
  // when nothing is filtered out, so unchanged subtrees stay shared.
  private filter(other: FieldSet | undefined, keep: boolean): FieldSet {
    if (other === undefined) return keep ? emptySet : this;
    const member = this.member && other.member === keep;
    let out: FieldSet | undefined;
    if (member !== this.member) out = new FieldSet();
    const kids = this.kids;
    if (kids === undefined) return out ?? this;
    const theirs = other.kids;
    // Without children of its own, `other` leaves every child whole (or takes it away whole).
    if (theirs === undefined && !keep) return out === undefined ? this : this.withMember(member);
    // forEach, not for-of: no entry array per child, on the path of every write.
    let seen = 0;
    kids.forEach((node, element) => {
      const filtered = theirs === undefined ? emptySet : node.filter(theirs.get(element), keep);
      if (out === undefined && filtered === node) {
        seen++;
        return;
      }
      if (out === undefined) {
        // First change: the children before this one were all kept as they are.
        const fresh = new FieldSet();
        let i = 0;
        kids.forEach((n, e) => {
          if (i++ < seen) fresh.setChild(e, n);
        });
        out = fresh;
      }
      if (filtered === node || !filtered.isEmpty()) out.setChild(element, filtered);
      seen++;
    });
    if (out === undefined) return this;
    out.member = member;
    return out;
  }

  // A node with the given membership and this node's (shared) children.
  private withMember(member: boolean): FieldSet {
    const out = this.shallowCopy();
    out.member = member;
    return out;
  }

  /** This set without the given top-level children (e.g. reset fields such as "f:status"). */
  withoutChildren(elements: readonly PathElement[]): FieldSet {
    if (!elements.some((e) => this.kids?.has(e) === true)) return this;
    const out = this.shallowCopy();
    for (const element of elements) out.kids?.delete(element);
    return out;
  }

  // A new node with this node's membership and (shared) children.
  private shallowCopy(): FieldSet {
    const out = new FieldSet();
    out.member = this.member;
    if (this.kids !== undefined) out.kids = new Map(this.kids);
    return out;
  }
}

// The result of intersecting with nothing; never modified.
const emptySet = new FieldSet();

// Order of path elements in FieldsV1: fields, then keys, then values, then indices.
const ELEMENT_RANK: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

function compareElements(a: PathElement, b: PathElement): number {
  // Two fields (most elements): their names order them as the whole strings do.
  if (a.startsWith('f:') && b.startsWith('f:')) return compareStrings(a, b);
  const ka = a.slice(0, 1);
  const kb = b.slice(0, 1);
  const rank = (ELEMENT_RANK[ka] ?? 4) - (ELEMENT_RANK[kb] ?? 4);
  if (rank !== 0) return rank;
  const ra = a.slice(2);
  const rb = b.slice(2);
  if (ka === 'f') return compareStrings(ra, rb);
  if (ka === 'i') return Number(ra) - Number(rb);
  return compareJson(parseOr(ra), parseOr(rb));
}

function parseOr(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

function sortedChildren(node: FieldSet): [PathElement, FieldSet][] {
  const children = [...node.children];
  return children.length < 2 ? children : children.sort(byElement);
}

function byElement(a: [PathElement, FieldSet], b: [PathElement, FieldSet]): number {
  return compareElements(a[0], b[0]);
}

/** A path in kubectl's words, as conflicts print it: `.spec.containers[name="nginx"].image`. */
export function describePath(path: readonly PathElement[]): string {
  return path
    .map((element) => {
      const rest = element.slice(2);
      switch (element.slice(0, 1)) {
        case 'f':
          return `.${rest}`;
        case 'k': {
          const key = parseOr(rest);
          if (!isJsonObject(key)) return `[${rest}]`;
          const parts = Object.keys(key)
            .sort(compareStrings)
            .map((name) => `${name}=${JSON.stringify(key[name] ?? null)}`);
          return `[${parts.join(',')}]`;
        }
        case 'v':
          return `[=${rest}]`;
        default:
          return `[${rest}]`;
      }
    })
    .join('');
}
