import { Registry } from 'prom-client';
import t from 'tap';
import { createInstallMetrics } from '../../functions/install/metrics.js';
import type { CsvObject } from '../harness/install-fixtures.js';

const csv = (name: string, phase: string, reason: string): CsvObject => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name, namespace: 'ns1' },
  spec: { version: '1.0.0' },
  status: { phase, reason },
});

async function values(
  registry: Registry,
  name: string,
): Promise<{ labels: object; value: number }[]> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []).map((v) => ({ labels: v.labels, value: v.value }));
}

t.test(
  'install metrics - csv_count, csv_succeeded and csv_abnormal follow the CSVs; stale series go',
  async (t) => {
    const registry = new Registry();
    const metrics = createInstallMetrics(registry);
    metrics.observeNamespace('c1', 'ns1', [
      csv('a', 'Succeeded', 'InstallSucceeded'),
      csv('b', 'Failed', 'ComponentUnhealthy'),
    ]);
    t.same(await values(registry, 'csv_count'), [{ labels: { cluster: 'c1' }, value: 2 }]);
    t.same(await values(registry, 'csv_succeeded'), [
      { labels: { cluster: 'c1', name: 'a', namespace: 'ns1', version: '1.0.0' }, value: 1 },
      { labels: { cluster: 'c1', name: 'b', namespace: 'ns1', version: '1.0.0' }, value: 0 },
    ]);
    t.same(await values(registry, 'csv_abnormal'), [
      {
        labels: {
          cluster: 'c1',
          name: 'b',
          namespace: 'ns1',
          version: '1.0.0',
          phase: 'Failed',
          reason: 'ComponentUnhealthy',
        },
        value: 1,
      },
    ]);
    metrics.observeNamespace('c1', 'ns1', [csv('b', 'Succeeded', 'InstallSucceeded')]);
    t.same(
      await values(registry, 'csv_abnormal'),
      [],
      'the Failed series is dropped once the CSV recovers',
    );
    t.same(await values(registry, 'csv_count'), [{ labels: { cluster: 'c1' }, value: 1 }]);
    metrics.csvUpgradeCount.inc({ cluster: 'c1' });
    t.same(await values(registry, 'csv_upgrade_count'), [{ labels: { cluster: 'c1' }, value: 1 }]);
    metrics.installPlanWarnings.inc({ cluster: 'c1' });
    t.same(await values(registry, 'installplan_warnings_total'), [
      { labels: { cluster: 'c1' }, value: 1 },
    ]);
  },
);

t.test('install metrics - two clusters with the same namespace keep separate series', async (t) => {
  const registry = new Registry();
  const metrics = createInstallMetrics(registry);
  metrics.observeNamespace('c1', 'ns1', [csv('a', 'Succeeded', 'InstallSucceeded')]);
  metrics.observeNamespace('c2', 'ns1', [csv('a', 'Failed', 'ComponentUnhealthy')]);
  t.same(await values(registry, 'csv_count'), [
    { labels: { cluster: 'c1' }, value: 1 },
    { labels: { cluster: 'c2' }, value: 1 },
  ]);
  t.same(await values(registry, 'csv_succeeded'), [
    { labels: { cluster: 'c1', name: 'a', namespace: 'ns1', version: '1.0.0' }, value: 1 },
    { labels: { cluster: 'c2', name: 'a', namespace: 'ns1', version: '1.0.0' }, value: 0 },
  ]);
  metrics.observeNamespace('c2', 'ns1', []);
  t.same(await values(registry, 'csv_count'), [{ labels: { cluster: 'c1' }, value: 1 }]);
  t.same(await values(registry, 'csv_abnormal'), []);
});
