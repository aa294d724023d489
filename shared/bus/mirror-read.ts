// Reading the watcher's object mirror (KV olmq_objects) by kind, namespace and name: what
// functions load their snapshots from instead of listing the API.
import type { KV } from '@nats-io/kv';
import { clusterScope, decodeToken, encodeToken, objectKey } from './subjects.js';

/** One mirrored object: its mirror revision and the object as mirrored. */
export interface Mirrored<T> {
  revision: number;
  object: T;
}

/** The mirrored object, or undefined when it is absent (never mirrored or deleted). */
export async function getMirrored<T>(
  objects: KV,
  ref: { cluster: string; kind: string; namespace: string; name: string },
): Promise<T | undefined> {
  const entry = await objects.get(objectKey(ref));
  if (entry === null || entry.operation !== 'PUT' || entry.length === 0) return undefined;
  return entry.json<T>();
}

/**
 * The mirrored objects of `kind` in `namespace` ("" for cluster-scoped, undefined for every
 * namespace), optionally only those named `name`. Reads run `concurrency` at a time.
 */
export async function listMirrored<T>(
  objects: KV,
  query: { cluster: string; kind: string; namespace?: string | undefined; name?: string },
  concurrency = 32,
): Promise<T[]> {
  const ns =
    query.namespace === undefined
      ? '*'
      : query.namespace === ''
        ? clusterScope
        : encodeToken(query.namespace);
  const name = query.name === undefined ? '*' : encodeToken(query.name);
  const filter = `${encodeToken(query.cluster)}.${encodeToken(query.kind)}.${ns}.${name}`;
  const keys: string[] = [];
  for await (const key of await objects.keys(filter)) keys.push(key);
  const out: T[] = [];
  for (let i = 0; i < keys.length; i += concurrency) {
    const batch = await Promise.all(keys.slice(i, i + concurrency).map((k) => objects.get(k)));
    for (const entry of batch) {
      if (entry !== null && entry.operation === 'PUT' && entry.length > 0)
        out.push(entry.json<T>());
    }
  }
  return out;
}

/** The names (decoded) of the namespaces holding a mirrored `kind` object named `name`. */
export async function namespacesHolding(
  objects: KV,
  query: { cluster: string; kind: string; name: string },
): Promise<string[]> {
  const filter = `${encodeToken(query.cluster)}.${encodeToken(query.kind)}.*.${encodeToken(query.name)}`;
  const out: string[] = [];
  for await (const key of await objects.keys(filter)) {
    const ns = key.split('.')[2];
    if (ns !== undefined && ns !== clusterScope) out.push(decodeToken(ns));
  }
  return out;
}

/** The namespaces (decoded, sorted) holding at least one mirrored object of `kind`. */
export async function namespacesWith(
  objects: KV,
  query: { cluster: string; kind: string },
): Promise<string[]> {
  const out = new Set<string>();
  for await (const key of await objects.keys(
    `${encodeToken(query.cluster)}.${encodeToken(query.kind)}.*.*`,
  )) {
    const ns = key.split('.')[2];
    if (ns !== undefined && ns !== clusterScope) out.add(decodeToken(ns));
  }
  return [...out].sort();
}
