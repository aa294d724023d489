// RFC 6902 JSON patch and RFC 7386 JSON merge patch, with kube-apiserver's error answers.
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import { PatchError } from './errors.js';
import { cloneJson, jsonEqual } from './values.js';

// kube-apiserver answers every failed JSON patch operation with this fixed 422 message
// (NewGenericServerResponse drops the detail); the detail is kept as the error's cause.
const REJECTED = 'the server rejected our request due to an error in our request';

function rejected(detail: string): PatchError {
  return new PatchError(REJECTED, 'Invalid', { cause: new Error(detail) });
}

// Go's json decoder message for a patch document of the wrong shape (400 BadRequest).
function undecodable(value: unknown, into: string): PatchError {
  const kind =
    value === null
      ? 'null'
      : Array.isArray(value)
        ? 'array'
        : typeof value === 'object'
          ? 'object'
          : typeof value === 'boolean'
            ? 'bool'
            : typeof value;
  return new PatchError(
    `json: cannot unmarshal ${kind} into Go value of type ${into}`,
    'BadRequest',
  );
}

/** Splits a JSON pointer into unescaped reference tokens ("" is the whole document). */
function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw rejected(`invalid JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = JsonObject | JsonValue[];

// Resolves the container holding the last token of `pointer`; undefined when a parent is missing.
function parentOf(doc: JsonValue, tokens: readonly string[]): Container | undefined {
  let node: JsonValue | undefined = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) {
      const index = arrayIndex(token, node.length - 1);
      node = index === undefined ? undefined : node[index];
    } else if (isJsonObject(node)) {
      node = Object.hasOwn(node, token) ? node[token] : undefined;
    } else {
      return undefined;
    }
  }
  return Array.isArray(node) || isJsonObject(node) ? node : undefined;
}

// A decimal array index within [0, max] (negative indices count from the end, as json-patch v4 allows).
function arrayIndex(token: string, max: number): number | undefined {
  if (!/^-?(0|[1-9][0-9]*)$/.test(token)) return undefined;
  let index = Number(token);
  if (index < 0) index += max + 1;
  return index >= 0 && index <= max ? index : undefined;
}

function read(container: Container, key: string, path: string, op: string): JsonValue {
  if (Array.isArray(container)) {
    const index = arrayIndex(key, container.length - 1);
    const value = index === undefined ? undefined : container[index];
    if (value === undefined) {
      throw rejected(
        `error in ${op} for path: '${path}': Unable to access invalid index: ${key}: invalid index referenced`,
      );
    }
    return value;
  }
  const value = Object.hasOwn(container, key) ? container[key] : undefined;
  if (value === undefined) {
    throw rejected(
      `error in ${op} for path: '${path}': unable to get nonexistent key: ${key}: missing value`,
    );
  }
  return value;
}

function insert(container: Container, key: string, value: JsonValue, path: string): void {
  if (!Array.isArray(container)) {
    container[key] = value;
    return;
  }
  if (key === '-') {
    container.push(value);
    return;
  }
  const index = arrayIndex(key, container.length);
  if (index === undefined) {
    throw rejected(
      `error in add for path: '${path}': Unable to access invalid index: ${key}: invalid index referenced`,
    );
  }
  container.splice(index, 0, value);
}

function remove(container: Container, key: string, path: string): JsonValue {
  if (Array.isArray(container)) {
    const index = arrayIndex(key, container.length - 1);
    if (index === undefined) {
      throw rejected(
        `error in remove for path: '${path}': Unable to access invalid index: ${key}: invalid index referenced`,
      );
    }
    const [removed] = container.splice(index, 1);
    return removed ?? null;
  }
  if (!Object.hasOwn(container, key)) {
    throw rejected(
      `error in remove for path: '${path}': unable to remove nonexistent key: ${key}: missing value`,
    );
  }
  const removed = container[key] ?? null;
  delete container[key];
  return removed;
}

function stringField(op: JsonObject, field: 'path' | 'from', kind: string): string {
  const value = op[field];
  if (typeof value !== 'string') {
    throw rejected(
      `${kind} operation failed to decode ${field}: ${field === 'path' ? 'operation missing path field' : 'operation, missing from field'}: missing value`,
    );
  }
  return value;
}

/** RFC 6902 JSON patch (application/json-patch+json). Throws PatchError. */
export function applyJsonPatch(target: JsonValue, patch: unknown): JsonValue {
  if (!Array.isArray(patch)) throw undecodable(patch, 'jsonpatch.Patch');
  // A holder lets operations on the root pointer "" replace the whole document.
  const holder: JsonObject = { root: cloneJson(target) };
  for (const raw of patch as unknown[]) {
    if (!isJsonObject(raw)) throw undecodable(raw, 'jsonpatch.Operation');
    const op: JsonObject = raw;
    const kind = typeof op.op === 'string' ? op.op : 'unknown';
    switch (kind) {
      case 'add':
      case 'replace':
      case 'test': {
        const path = stringField(op, 'path', kind);
        const tokens = ['root', ...pointerTokens(path)];
        const container = parentOf(holder, tokens);
        const key = tokens[tokens.length - 1] ?? '';
        if (!container) {
          const detail =
            kind === 'add'
              ? `add operation does not apply: doc is missing path: "${path}": missing value`
              : kind === 'replace'
                ? `replace operation does not apply: doc is missing path: ${path}: missing value`
                : `test operation does not apply: is missing path: ${path}: missing value`;
          throw rejected(detail);
        }
        if (!Object.hasOwn(op, 'value'))
          throw rejected(`${kind} operation, missing value field: missing value`);
        const value = op.value ?? null;
        if (kind === 'add') {
          insert(container, key, cloneJson(value), path);
        } else if (kind === 'replace') {
          const exists = Array.isArray(container)
            ? arrayIndex(key, container.length - 1) !== undefined
            : Object.hasOwn(container, key);
          if (!exists)
            throw rejected(
              `replace operation does not apply: doc is missing key: ${path}: missing value`,
            );
          if (Array.isArray(container))
            container[arrayIndex(key, container.length - 1) ?? 0] = cloneJson(value);
          else container[key] = cloneJson(value);
        } else {
          // json-patch v4 treats a missing key as null: testing it against null passes.
          const missing = !Array.isArray(container) && !Object.hasOwn(container, key);
          const current = missing ? null : read(container, key, path, 'test');
          if (!jsonEqual(current, value))
            throw rejected(`testing value ${path} failed: test failed`);
        }
        break;
      }
      case 'remove': {
        const path = stringField(op, 'path', kind);
        const tokens = ['root', ...pointerTokens(path)];
        const container = parentOf(holder, tokens);
        if (!container)
          throw rejected(
            `remove operation does not apply: doc is missing path: "${path}": missing value`,
          );
        remove(container, tokens[tokens.length - 1] ?? '', path);
        break;
      }
      case 'move':
      case 'copy': {
        const from = stringField(op, 'from', kind);
        const path = stringField(op, 'path', kind);
        const fromTokens = ['root', ...pointerTokens(from)];
        const toTokens = ['root', ...pointerTokens(path)];
        if (kind === 'move' && path !== from && path.startsWith(`${from}/`)) {
          throw rejected(
            `move operation does not apply: cannot move ${from} into its own child ${path}`,
          );
        }
        const source = parentOf(holder, fromTokens);
        if (!source)
          throw rejected(
            `${kind} operation does not apply: doc is missing from path: ${from}: missing value`,
          );
        const fromKey = fromTokens[fromTokens.length - 1] ?? '';
        const value =
          kind === 'move'
            ? remove(source, fromKey, from)
            : cloneJson(read(source, fromKey, from, kind));
        const destination = parentOf(holder, toTokens);
        if (!destination) {
          throw rejected(
            `${kind} operation does not apply: doc is missing destination path: ${path}: missing value`,
          );
        }
        insert(destination, toTokens[toTokens.length - 1] ?? '', value, path);
        break;
      }
      default:
        throw rejected(`Unexpected kind: ${kind}`);
    }
  }
  return holder.root ?? null;
}

/**
 * RFC 7386 JSON merge patch (application/merge-patch+json). Neither input is modified: the result
 * shares with `target` every part the patch leaves alone (copying those parts is the caller's
 * choice, made once, not at every level of the patch).
 */
export function applyMergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const result: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key] ?? null, value);
  }
  return result;
}
