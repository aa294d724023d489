// Upstream OLM's CSV and InstallPlan metrics (spec §12), kept from the CSVs this function sees.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Csv } from './csv-status.js';

/** The install function's metrics. */
export interface InstallMetrics {
  csvCount: Gauge;
  csvSucceeded: Gauge<'name' | 'namespace' | 'version'>;
  csvAbnormal: Gauge<'name' | 'namespace' | 'phase' | 'reason' | 'version'>;
  csvUpgradeCount: Counter;
  installPlanWarnings: Counter;
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
    labelNames: ['name', 'namespace', 'version'] as const,
    registers: [registry],
  });
  const csvAbnormal = new Gauge({
    name: 'csv_abnormal',
    help: 'CSV is not installed',
    labelNames: ['name', 'namespace', 'phase', 'reason', 'version'] as const,
    registers: [registry],
  });
  const counts = new Map<string, Series[]>();
  const csvCount = new Gauge({
    name: 'csv_count',
    help: 'Number of CSVs successfully registered',
    registers: [registry],
    collect() {
      let total = 0;
      for (const series of counts.values()) total += series.length;
      this.set(total);
    },
  });
  return {
    csvCount,
    csvSucceeded,
    csvAbnormal,
    csvUpgradeCount: new Counter({
      name: 'csv_upgrade_count',
      help: 'Monotonic count of CSV upgrades',
      registers: [registry],
    }),
    installPlanWarnings: new Counter({
      name: 'installplan_warnings_total',
      help: 'monotonic count of resources that generated warnings when applied as part of an InstallPlan',
      registers: [registry],
    }),
    observeNamespace(cluster, namespace, csvs) {
      const key = `${cluster}/${namespace}`;
      for (const old of counts.get(key) ?? []) {
        csvSucceeded.remove({ name: old.name, namespace, version: old.version });
        if (old.abnormal !== undefined) {
          csvAbnormal.remove({ name: old.name, namespace, version: old.version, ...old.abnormal });
        }
      }
      const now: Series[] = [];
      for (const csv of csvs) {
        if (csv.metadata.labels?.['olm.copiedFrom'] !== undefined) continue;
        const name = csv.metadata.name ?? '';
        const version = csv.spec?.version ?? '';
        const phase = csv.status?.phase ?? '';
        const reason = csv.status?.reason ?? '';
        const succeeded = phase === 'Succeeded';
        csvSucceeded.set({ name, namespace, version }, succeeded ? 1 : 0);
        const series: Series = { name, version };
        if (!succeeded) {
          series.abnormal = { phase, reason };
          csvAbnormal.set({ name, namespace, version, phase, reason }, 1);
        }
        now.push(series);
      }
      if (now.length === 0) counts.delete(key);
      else counts.set(key, now);
    },
  };
}
