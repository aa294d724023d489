// Reading the object mirror (KV olmq_objects): what functions load their snapshots from.
// Entries are the watcher's trimmed objects (or records functions publish, such as
// CatalogIndex); delete markers read as absent.
import type { Backbone } from './backbone.js';
import { clusterScope, decodeToken, encodeToken, objectKey } from './subjects.js';

/** The mirrored object `kind` `namespace`/`name` of `cluster` (parsed JSON), or undefined. */
export async function getMirrored<T>(
  backbone: Backbone,
  cluster: string,
  kind: string,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  const entry = await backbone.objects.get(objectKey({ cluster, kind, namespace, name }));
  return entry === null || entry.operation !== 'PUT' ? undefined : entry.json<T>();
}

/**
 * Every mirrored object of `kind` in `namespace` ("" for cluster-scoped kinds; undefined for
 * all namespaces), in key order.
 */
export async function listMirrored<T>(
  backbone: Backbone,
  cluster: string,
  kind: string,
  namespace?: string,
): Promise<T[]> {
  const ns =
    namespace === undefined ? '*' : namespace === '' ? clusterScope : encodeToken(namespace);
  const keys: string[] = [];
  for await (const key of await backbone.objects.keys(
    `${encodeToken(cluster)}.${encodeToken(kind)}.${ns}.*`,
  )) {
    keys.push(key);
  }
  keys.sort();
  const entries = await Promise.all(keys.map((key) => backbone.objects.get(key)));
  const out: T[] = [];
  for (const entry of entries) {
    if (entry !== null && entry.operation === 'PUT') out.push(entry.json<T>());
  }
  return out;
}

/** The namespaces holding at least one mirrored object of `kind`. */
export async function namespacesWith(
  backbone: Backbone,
  cluster: string,
  kind: string,
): Promise<string[]> {
  const out = new Set<string>();
  for await (const key of await backbone.objects.keys(
    `${encodeToken(cluster)}.${encodeToken(kind)}.*.*`,
  )) {
    const ns = key.split('.')[2];
    if (ns !== undefined && ns !== clusterScope) out.add(decodeToken(ns));
  }
  return [...out].sort();
}
