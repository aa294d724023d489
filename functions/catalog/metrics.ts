// The catalog function's metrics. Upstream's names are kept (catalog_source_count,
// catalogsource_ready, catalog_source_snapshots_total) with an added `cluster` label. The
// gauges are read from the CatalogIndex records at scrape time, so every replica reports the
// same fleet-wide truth (aggregate replicas with max, not sum) and a deleted CatalogSource's
// series disappear with its record.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CatalogIndexRecord } from '../../shared/handoff/index.js';

/** Reads the records of every cluster this replica serves. */
export type RecordReader = () => Promise<{ cluster: string; records: CatalogIndexRecord[] }[]>;

/** The catalog function's metrics. */
export interface CatalogMetrics {
  snapshots: Counter<'cluster' | 'namespace' | 'name'>;
  buildDuration: Histogram<'cluster' | 'source_type'>;
  warnings: Counter<'cluster' | 'code'>;
}

function existing<T>(registry: Registry, name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}

/** Registers (or finds) the catalog metrics in `registry`; gauges read records via `read`. */
export function createCatalogMetrics(registry: Registry, read: RecordReader): CatalogMetrics {
  // One read per scrape serves every gauge.
  let pending: { at: number; result: ReturnType<RecordReader> } | undefined;
  const records = (): ReturnType<RecordReader> => {
    if (pending === undefined || Date.now() - pending.at > 1_000)
      pending = { at: Date.now(), result: read().catch(() => []) };
    return pending.result;
  };
  const perRecord = (
    name: string,
    help: string,
    value: (r: CatalogIndexRecord) => number,
  ): void => {
    if (existing(registry, name) !== undefined) return;
    new Gauge({
      name,
      help,
      labelNames: ['cluster', 'namespace', 'name'],
      registers: [registry],
      async collect() {
        const all = await records();
        this.reset();
        for (const { cluster, records: list } of all)
          for (const r of list)
            this.set({ cluster, namespace: r.namespace, name: r.name }, value(r));
      },
    });
  };
  if (existing(registry, 'catalog_source_count') === undefined) {
    new Gauge({
      name: 'catalog_source_count',
      help: 'Number of CatalogSources the catalog function serves, per cluster.',
      labelNames: ['cluster'],
      registers: [registry],
      async collect() {
        const all = await records();
        this.reset();
        for (const { cluster, records: list } of all) this.set({ cluster }, list.length);
      },
    });
  }
  perRecord('catalogsource_ready', 'Whether a CatalogSource is READY (1) or not (0).', (r) =>
    r.healthy ? 1 : 0,
  );
  perRecord(
    'olmq_catalog_index_bundles',
    'Bundles in the index a CatalogSource serves.',
    (r) => r.bundles,
  );
  perRecord(
    'olmq_catalog_index_packages',
    'Packages in the index a CatalogSource serves.',
    (r) => r.packages,
  );
  return {
    snapshots:
      existing(registry, 'catalog_source_snapshots_total') ??
      new Counter({
        name: 'catalog_source_snapshots_total',
        help: 'Times a CatalogSource was read and indexed (a snapshot of its content).',
        labelNames: ['cluster', 'namespace', 'name'],
        registers: [registry],
      }),
    buildDuration:
      existing(registry, 'olmq_catalog_index_build_duration_seconds') ??
      new Histogram({
        name: 'olmq_catalog_index_build_duration_seconds',
        help: 'Time to read a catalog source and build its index.',
        labelNames: ['cluster', 'source_type'],
        buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
        registers: [registry],
      }),
    warnings:
      existing(registry, 'olmq_catalog_warnings_total') ??
      new Counter({
        name: 'olmq_catalog_warnings_total',
        help: 'Catalog data irregularities met while indexing, by warning code.',
        labelNames: ['cluster', 'code'],
        registers: [registry],
      }),
  };
}
