// Sets of field paths as server-side apply tracks them, stored in the shape of FieldsV1:
// a tree whose edges are serialized path elements ("f:name", "k:{...}", "v:<json>", "i:<n>").
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import { compareJson, compareStrings } from './values.js';

/** One serialized path element, e.g. `f:spec`, `k:{"name":"nginx"}`, `v:"a"`, `i:0`. */
export type PathElement = string;

/** A set of field paths; `member` says whether the path leading to this node is itself in the set. */
export class FieldSet {
  member = false;
  readonly children = new Map<PathElement, FieldSet>();

  /** Child node for `element`, created when absent. */
  child(element: PathElement): FieldSet {
    let node = this.children.get(element);
    if (!node) {
      node = new FieldSet();
      this.children.set(element, node);
    }
    return node;
  }

  /** Adds `path` to the set. */
  insert(path: readonly PathElement[]): void {
    path.reduce<FieldSet>((node, element) => node.child(element), this).member = true;
  }

  /** Whether `path` is in the set. */
  has(path: readonly PathElement[]): boolean {
    const node = path.reduce<FieldSet | undefined>(
      (at, element) => at?.children.get(element),
      this,
    );
    return node?.member === true;
  }

  /** True when no path is in the set. */
  isEmpty(): boolean {
    if (this.member) return false;
    for (const node of this.children.values()) if (!node.isEmpty()) return false;
    return true;
  }

  /** Paths in either set. */
  union(other: FieldSet): FieldSet {
    const out = this.clone();
    out.addAll(other);
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
      out[element] = node.member && Object.keys(inner).length > 0 ? { '.': {}, ...inner } : inner;
    }
    return out;
  }

  /** Reads FieldsV1 JSON (as stored in metadata.managedFields[].fieldsV1). */
  static fromFieldsV1(json: JsonValue | undefined): FieldSet {
    const set = new FieldSet();
    const read = (node: FieldSet, value: JsonValue | undefined): void => {
      if (!isJsonObject(value)) return;
      for (const [element, childValue] of Object.entries(value)) {
        if (element === '.') continue;
        const childNode = node.child(element);
        if (!isJsonObject(childValue)) continue;
        const keys = Object.keys(childValue);
        childNode.member = keys.length === 0 || keys.includes('.');
        read(childNode, childValue);
      }
    };
    read(set, json);
    return set;
  }

  private addAll(other: FieldSet): void {
    if (other.member) this.member = true;
    for (const [element, node] of other.children) this.child(element).addAll(node);
  }

  private filter(other: FieldSet | undefined, keep: boolean): FieldSet {
    const out = new FieldSet();
    out.member = this.member && (other?.member ?? false) === keep;
    for (const [element, node] of this.children) {
      const filtered = node.filter(other?.children.get(element), keep);
      if (!filtered.isEmpty()) out.children.set(element, filtered);
    }
    return out;
  }
}

// Order of path elements in FieldsV1: fields, then keys, then values, then indices.
const ELEMENT_RANK: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

function compareElements(a: PathElement, b: PathElement): number {
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
  return [...node.children].sort(([a], [b]) => compareElements(a, b));
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
