// Catalog indexes in JetStream, handed from the catalog function to its readers (resolve,
// plan, the package server). The catalog function builds an index per CatalogSource and
// stores its bytes in the object store bucket `olmq_catalogs` under the content digest (the
// hot index under `index/<digest>`, the manifests under `content/<digest>`), so identical
// content is stored once. Which index a CatalogSource currently serves is a small record put
// into the object mirror as the pseudo-kind `CatalogIndex` (same namespace and name as the
// CatalogSource): functions trigger on it like on any mirrored kind, and a record only
// changes when the digest or the health does, so unchanged content causes no work.
// Readers load an index by digest once and keep it in a digest-keyed cache.
import { Objm, type ObjectStore } from '@nats-io/obj';
import { readObject } from '../bus/object-read.js';
import { z } from 'zod';
import { alignStream, newAssetReplicas, type Backbone } from '../bus/backbone.js';
import type { MirrorSource } from '../bus/mirror-read.js';
import { encodeToken } from '../bus/subjects.js';
import type { CatalogContent } from '../catalog/bundle-content.js';
import type { CatalogIndex } from '../catalog/model.js';
import {
  loadCatalogContent,
  loadCatalogIndex,
  serializeCatalogContent,
  serializeCatalogIndex,
} from '../catalog/serialize.js';
import { handOffRecordType } from './record-type.js';

/** Object store bucket holding serialized indexes and contents by digest. */
export const catalogBucket = 'olmq_catalogs';

/** Kind of the pointer records in the object mirror. */
export const catalogIndexKind = 'CatalogIndex';

/** What a CatalogSource currently serves, as recorded for readers. */
export const CatalogIndexRecordSchema = z.object({
  /** The CatalogSource's namespace and name. */
  namespace: z.string(),
  name: z.string(),
  /** Digest of the index being served ("sha256:..."), or null when none was ever built. */
  digest: z.string().nullable(),
  /** spec.priority of the CatalogSource (higher is preferred). */
  priority: z.number().int(),
  /** spec.displayName and spec.publisher, for PackageManifests. */
  displayName: z.string(),
  publisher: z.string(),
  /** spec.sourceType as written. */
  sourceType: z.string(),
  /** Whether the source answered its last poll; an index may still be served when false. */
  healthy: z.boolean(),
  /** When the digest last changed (RFC 3339). */
  updatedAt: z.string(),
  /** Whether the CatalogSource is in the global catalog namespace (visible to every namespace). */
  global: z.boolean().optional(),
  /** Counts, for status and dashboards. */
  packages: z.number().int(),
  bundles: z.number().int(),
});
export type CatalogIndexRecord = z.infer<typeof CatalogIndexRecordSchema>;

/** Opens (or creates) the catalog object store. */
export async function openCatalogStore(backbone: Backbone): Promise<ObjectStore> {
  const { options } = backbone;
  const store = await new Objm(backbone.js).create(catalogBucket, {
    replicas: newAssetReplicas(options),
    max_bytes: options.limits.catalogsBytes,
    ...(options.placement === undefined ? {} : { placement: options.placement }),
  });
  await alignStream(backbone.jsm, `OBJ_${catalogBucket}`, options, options.limits.catalogsBytes);
  return store;
}

const indexName = (digest: string): string => `index/${encodeToken(digest)}`;
const contentName = (digest: string): string => `content/${encodeToken(digest)}`;

/** Stores an index and its content under the index digest, unless already stored. */
export async function storeCatalog(
  store: ObjectStore,
  index: CatalogIndex,
  content: CatalogContent,
): Promise<void> {
  if ((await store.info(indexName(index.digest))) !== null) return;
  // Content first: a reader that sees the index can always find its manifests.
  await store.putBlob({ name: contentName(index.digest) }, serializeCatalogContent(content));
  await store.putBlob({ name: indexName(index.digest) }, serializeCatalogIndex(index));
}

/** Thrown when a digest names no stored index (it was never stored, or was pruned). */
export class CatalogNotStoredError extends Error {
  constructor(readonly digest: string) {
    super(`catalog index ${digest} is not in the ${catalogBucket} object store`);
    this.name = 'CatalogNotStoredError';
  }
}

/** Loads the serialized index stored under `digest`. */
export async function fetchCatalogIndex(store: ObjectStore, digest: string): Promise<CatalogIndex> {
  const bytes = await readObject(store, indexName(digest));
  if (bytes === null) throw new CatalogNotStoredError(digest);
  return loadCatalogIndex(bytes);
}

/** Loads the manifests stored for the index `digest`. */
export async function fetchCatalogContent(
  store: ObjectStore,
  digest: string,
): Promise<CatalogContent> {
  const bytes = await readObject(store, contentName(digest));
  if (bytes === null) throw new CatalogNotStoredError(digest);
  return loadCatalogContent(bytes);
}

/**
 * A digest-keyed cache of loaded indexes: each digest is fetched once (concurrent callers share
 * the fetch) and the least recently used is dropped beyond `capacity`.
 */
export class CatalogIndexCache {
  readonly #entries = new Map<string, Promise<CatalogIndex>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly capacity = 32,
  ) {}

  get(digest: string): Promise<CatalogIndex> {
    let entry = this.#entries.get(digest);
    if (entry !== undefined) {
      this.#entries.delete(digest);
      this.#entries.set(digest, entry);
      return entry;
    }
    entry = fetchCatalogIndex(this.store, digest);
    entry.catch(() => this.#entries.delete(digest));
    this.#entries.set(digest, entry);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.capacity) break;
      this.#entries.delete(oldest);
    }
    return entry;
  }
}

/** The CatalogIndex records: checked put, read, list and delete. */
export const catalogIndexRecords = handOffRecordType(catalogIndexKind, CatalogIndexRecordSchema);

/** Publishes what a CatalogSource serves; a record equal to the current one is not rewritten. */
export function putCatalogIndexRecord(
  backbone: Backbone,
  cluster: string,
  record: CatalogIndexRecord,
): Promise<void> {
  return catalogIndexRecords.put(
    backbone,
    { cluster, namespace: record.namespace, name: record.name },
    record,
  );
}

/** The record of one CatalogSource, or undefined when it has none (or an unreadable one). */
export function readCatalogIndexRecord(
  mirror: MirrorSource,
  cluster: string,
  namespace: string,
  name: string,
): Promise<CatalogIndexRecord | undefined> {
  return catalogIndexRecords.read(mirror, { cluster, namespace, name });
}

/** Removes the record of a deleted CatalogSource. */
export function deleteCatalogIndexRecord(
  backbone: Backbone,
  cluster: string,
  namespace: string,
  name: string,
): Promise<void> {
  return catalogIndexRecords.delete(backbone, { cluster, namespace, name });
}

/** The records of the CatalogSources in the given namespaces (all namespaces when omitted). */
export async function readCatalogIndexRecords(
  mirror: MirrorSource,
  cluster: string,
  namespaces?: readonly string[],
): Promise<CatalogIndexRecord[]> {
  const records: CatalogIndexRecord[] = [];
  for (const namespace of namespaces ?? [undefined])
    records.push(...(await catalogIndexRecords.list(mirror, cluster, namespace)));
  return records.sort(
    (a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
  );
}
