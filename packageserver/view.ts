// The package server's live view of one cluster's catalogs: the CatalogIndex records the
// catalog function publishes into the object mirror say which index each CatalogSource serves;
// the view loads each index (and its bundle content, for the channel heads' CSVs) once per
// digest from JetStream, builds the PackageManifests, and keeps them in memory. KV watches on
// the records and on the mirrored CatalogSources (for labels and creationTimestamp) keep it
// current; listeners hear of each catalog whose packages changed (for watch requests).
import { KvWatchInclude, type KvEntry } from '@nats-io/kv';
import type { ObjectStore } from '@nats-io/obj';
import type { Logger } from 'pino';
import type { Backbone } from '../shared/bus/backbone.js';
import { getMirrored } from '../shared/bus/mirror-read.js';
import { encodeToken, parseObjectKey } from '../shared/bus/subjects.js';
import {
  CatalogIndexCache,
  catalogIndexKind,
  fetchCatalogContent,
  readCatalogIndexRecords,
  readCatalogIndexRecord,
} from '../shared/handoff/index.js';
import { buildPackageRecords, type CatalogFacts, type PackageRecord } from './manifest.js';

/** The packages of one CatalogSource. */
export interface CatalogPackages {
  namespace: string;
  name: string;
  /** spec.priority (higher first when packages of several catalogs share a name). */
  priority: number;
  records: readonly PackageRecord[];
}

/** A change of one catalog's packages. */
export interface CatalogChange {
  namespace: string;
  before: readonly PackageRecord[];
  after: readonly PackageRecord[];
  /** The view's generation after the change (the resourceVersion of watch events). */
  generation: number;
}

/** Options of a PackageView. */
export interface PackageViewOptions {
  backbone: Backbone;
  store: ObjectStore;
  cluster: string;
  log: Logger;
}

const catalogSourceKind = 'CatalogSource';

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** In-memory PackageManifests of every catalog of one cluster. */
export class PackageView {
  readonly #options: PackageViewOptions;
  readonly #indexes: CatalogIndexCache;
  readonly #catalogs = new Map<string, CatalogPackages & { signature: string }>();
  // One refresh at a time per catalog, in arrival order.
  readonly #refreshes = new Map<string, Promise<void>>();
  readonly #listeners = new Set<(change: CatalogChange) => void>();
  readonly #stops: (() => void)[] = [];
  // Recent states by generation, so a watch from a list's resourceVersion misses nothing.
  readonly #history = new Map<number, CatalogPackages[]>();
  #generation = 1;
  #ready = false;

  constructor(options: PackageViewOptions) {
    this.#options = options;
    this.#indexes = new CatalogIndexCache(options.store, 8);
  }

  /** Increases with every change; the resourceVersion of lists. */
  get generation(): number {
    return this.#generation;
  }

  /** Whether the first load finished. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Starts watching, then loads every catalog; resolves once the view is complete. */
  async start(): Promise<void> {
    const { backbone, cluster } = this.#options;
    const prefix = encodeToken(cluster);
    // Watches first (updates only), then the initial read: nothing falls between the two.
    for (const kind of [catalogIndexKind, catalogSourceKind]) {
      const watch = await backbone.objects.watch({
        key: `${prefix}.${encodeToken(kind)}.>`,
        include: KvWatchInclude.UpdatesOnly,
      });
      this.#stops.push(() => watch.stop());
      void (async () => {
        for await (const entry of watch) this.#onEntry(entry);
      })();
    }
    const records = await readCatalogIndexRecords(backbone, cluster);
    await Promise.all(records.map((r) => this.#refresh(r.namespace, r.name)));
    this.#history.set(this.#generation, this.catalogs());
    this.#ready = true;
  }

  /** Stops the watches. */
  stop(): void {
    for (const stop of this.#stops.splice(0)) stop();
    this.#listeners.clear();
  }

  /** Calls `listener` after each catalog change; returns the unsubscribe function. */
  subscribe(listener: (change: CatalogChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The catalogs of the given namespaces (all when undefined). */
  catalogs(namespaces?: readonly string[]): CatalogPackages[] {
    const all = [...this.#catalogs.values()];
    return namespaces === undefined ? all : all.filter((c) => namespaces.includes(c.namespace));
  }

  /**
   * The catalogs as they were at `generation` (all namespaces), or undefined when that state is
   * older than the recent history kept (the last 100 changes).
   */
  catalogsAt(generation: number): CatalogPackages[] | undefined {
    if (generation >= this.#generation) return this.catalogs();
    return this.#history.get(generation);
  }

  /** Waits until pending refreshes have finished (tests and readiness). */
  async settled(): Promise<void> {
    while (this.#refreshes.size > 0) await Promise.all([...this.#refreshes.values()]);
  }

  #onEntry(entry: KvEntry): void {
    let ref;
    try {
      ref = parseObjectKey(entry.key);
    } catch {
      return;
    }
    void this.#refresh(ref.namespace, ref.name);
  }

  #refresh(namespace: string, name: string): Promise<void> {
    const key = `${namespace}/${name}`;
    const previous = this.#refreshes.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.#load(namespace, name))
      .catch((error: unknown) =>
        this.#options.log.warn(
          { err: error, catalog: key },
          'cannot load the packages of a catalog; keeping what was served',
        ),
      )
      .finally(() => {
        if (this.#refreshes.get(key) === next) this.#refreshes.delete(key);
      });
    this.#refreshes.set(key, next);
    return next;
  }

  async #load(namespace: string, name: string): Promise<void> {
    const { backbone, cluster, store, log } = this.#options;
    const key = `${namespace}/${name}`;
    const record = await readCatalogIndexRecord(backbone, cluster, namespace, name);
    const source = await readCatalogSource(backbone, cluster, namespace, name);
    const current = this.#catalogs.get(key);
    if (record === undefined || record.digest === null) {
      if (current === undefined) return;
      this.#catalogs.delete(key);
      this.#emit({ namespace, before: current.records, after: [] });
      return;
    }
    const facts: CatalogFacts = {
      namespace,
      name,
      displayName: record.displayName,
      publisher: record.publisher,
      labels: source.labels,
      creationTimestamp: source.creationTimestamp ?? record.updatedAt,
    };
    const signature = JSON.stringify([record.digest, record.priority, facts]);
    if (current?.signature === signature) return;
    const index = await this.#indexes.get(record.digest);
    const content = await fetchCatalogContent(store, record.digest);
    const { records, problems } = buildPackageRecords(facts, index, content);
    for (const problem of problems) log.warn({ catalog: key, ...problem }, problem.message);
    this.#catalogs.set(key, { namespace, name, priority: record.priority, records, signature });
    this.#emit({ namespace, before: current?.records ?? [], after: records });
  }

  #emit(change: Omit<CatalogChange, 'generation'>): void {
    this.#generation++;
    this.#history.set(this.#generation, this.catalogs());
    this.#history.delete(this.#generation - 100);
    for (const listener of this.#listeners) listener({ ...change, generation: this.#generation });
  }
}

// The mirrored CatalogSource's labels and creationTimestamp (absent when the watcher has not
// mirrored it yet: the package then shows no extra labels and the record's time).
async function readCatalogSource(
  backbone: Backbone,
  cluster: string,
  namespace: string,
  name: string,
): Promise<{ labels: Record<string, string>; creationTimestamp: string | undefined }> {
  const labels: Record<string, string> = {};
  let object: unknown;
  try {
    // Through the mirror's reader: an entry may hold a reference to a large value.
    object = await getMirrored<unknown>(backbone, {
      cluster,
      kind: catalogSourceKind,
      namespace,
      name,
    });
  } catch {
    return { labels, creationTimestamp: undefined };
  }
  if (object === undefined) return { labels, creationTimestamp: undefined };
  const metadata = isMap(object) && isMap(object['metadata']) ? object['metadata'] : {};
  if (isMap(metadata['labels'])) {
    for (const [k, v] of Object.entries(metadata['labels']))
      if (typeof v === 'string') labels[k] = v;
  }
  const created = metadata['creationTimestamp'];
  return { labels, creationTimestamp: typeof created === 'string' ? created : undefined };
}
