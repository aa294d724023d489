// Upstream OLM's CSV and InstallPlan metrics (spec §12), kept from the CSVs this function sees.
// Upstream's names and labels are kept with an added `cluster` label, as on every olmq metric.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Csv } from './csv-status.js';

/** The install function's metrics. */
export interface InstallMetrics {
  csvCount: Gauge<'cluster'>;
  csvSucceeded: Gauge<'cluster' | 'name' | 'namespace' | 'version'>;
  csvAbnormal: Gauge<'cluster' | 'name' | 'namespace' | 'phase' | 'reason' | 'version'>;
  csvUpgradeCount: Counter<'cluster'>;
  installPlanWarnings: Counter<'cluster'>;
  /** Records the CSVs of one namespace as they are now (stale series dropped). */
  observeNamespace(cluster: string, namespace: string, csvs: readonly Csv[]): void;
}

interface Series {
  name: string;
  version: string;
  abnormal?: { phase: string; reason: string };
}

/** Registers the metrics in `registry`. */
export function createInstallMetrics(registry: Registry): InstallMetrics {
  const csvSucceeded = new Gauge({
    name: 'csv_succeeded',
    help: 'Successful CSV install',
    labelNames: ['cluster', 'name', 'namespace', 'version'] as const,
    registers: [registry],
  });
  const csvAbnormal = new Gauge({
    name: 'csv_abnormal',
    help: 'CSV is not installed',
    labelNames: ['cluster', 'name', 'namespace', 'phase', 'reason', 'version'] as const,
    registers: [registry],
  });
  // Keyed by cluster, then namespace.
  const counts = new Map<string, Map<string, Series[]>>();
  const csvCount = new Gauge({
    name: 'csv_count',
    help: 'Number of CSVs successfully registered',
    labelNames: ['cluster'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [cluster, namespaces] of counts) {
        let total = 0;
        for (const series of namespaces.values()) total += series.length;
        this.set({ cluster }, total);
      }
    },
  });
  return {
    csvCount,
    csvSucceeded,
    csvAbnormal,
    csvUpgradeCount: new Counter({
      name: 'csv_upgrade_count',
      help: 'Monotonic count of CSV upgrades',
      labelNames: ['cluster'] as const,
      registers: [registry],
    }),
    installPlanWarnings: new Counter({
      name: 'installplan_warnings_total',
      help: 'monotonic count of resources that generated warnings when applied as part of an InstallPlan',
      labelNames: ['cluster'] as const,
      registers: [registry],
    }),
    observeNamespace(cluster, namespace, csvs) {
      const namespaces = counts.get(cluster) ?? new Map<string, Series[]>();
      for (const old of namespaces.get(namespace) ?? []) {
        const labels = { cluster, name: old.name, namespace, version: old.version };
        csvSucceeded.remove(labels);
        if (old.abnormal !== undefined) csvAbnormal.remove({ ...labels, ...old.abnormal });
      }
      const now: Series[] = [];
      for (const csv of csvs) {
        if (csv.metadata.labels?.['olm.copiedFrom'] !== undefined) continue;
        const name = csv.metadata.name ?? '';
        const version = csv.spec?.version ?? '';
        const phase = csv.status?.phase ?? '';
        const reason = csv.status?.reason ?? '';
        const succeeded = phase === 'Succeeded';
        csvSucceeded.set({ cluster, name, namespace, version }, succeeded ? 1 : 0);
        const series: Series = { name, version };
        if (!succeeded) {
          series.abnormal = { phase, reason };
          csvAbnormal.set({ cluster, name, namespace, version, phase, reason }, 1);
        }
        now.push(series);
      }
      if (now.length === 0) namespaces.delete(namespace);
      else namespaces.set(namespace, now);
      if (namespaces.size === 0) counts.delete(cluster);
      else counts.set(cluster, namespaces);
    },
  };
}
