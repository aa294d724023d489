// A real Prometheus scraping `olmq up` after installs: every metric of the catalogue is there with
// its type, those an install produces have series with exactly the catalogue's labels, every
// metric olmq exports is in the catalogue, and every dashboard and alert query runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ruleGroups } from '../../monitoring/alerts.js';
import { metricCatalogue, type MetricSpec } from '../../monitoring/catalogue.js';
import { dashboardQueries } from '../../monitoring/dashboards/grafana.js';
import { dashboards } from '../../monitoring/render.js';
import { startOlmq } from '../harness/cli.js';
import { kubectlAt, kubectlMissing } from '../harness/devcluster.js';
import { prometheusFor } from '../harness/prometheus.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

const catalogue = metricCatalogue as Record<string, MetricSpec>;
// Labels Prometheus adds, or that belong to a histogram's or summary's series.
const scrapeLabels = new Set(['__name__', 'job', 'instance', 'le', 'quantile']);
// prom-client's process and Node metrics: the catalogue lists those the dashboards use.
const defaultMetric = /^(process|nodejs)_/;

t.test('Prometheus scraping olmq up finds every catalogued metric', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-prometheus-up-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const up = await startOlmq(
    t,
    [
      'up',
      '--data-dir',
      join(dir, 'data'),
      '--kubeconfig-out',
      kubeconfigPath,
      '--metrics-port',
      '0',
    ],
    /metrics: +http:\/\/(127\.0\.0\.1:\d+)\/metrics/,
  );
  const target = up.match[1] ?? '';
  const prometheus = await prometheusFor(t, 'olmq-up', [target]);
  const kubectl = kubectlAt(kubeconfigPath, dir);
  // One install that succeeds, and one whose CSV fails and stays Failed (etcd does not
  // support AllNamespaces), so the CSV alerts' series exist.
  await kubectl(
    ['apply', '-f', '-'],
    `
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-a}
spec: {targetNamespaces: [team-a]}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: team-a}
spec: {name: etcd, channel: singlenamespace-alpha, source: olmq-example, sourceNamespace: olm}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-all}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: og, namespace: team-all}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: team-all}
spec: {name: etcd, channel: singlenamespace-alpha, source: olmq-example, sourceNamespace: olm}
`,
  );
  type Vector = { metric: Record<string, string>; value: [number, string] }[];
  const instant = (query: string) =>
    prometheus.api<{ resultType: string; result: Vector }>('query', { query });
  // Barrier: both CSVs reached their phase and Prometheus has scraped it.
  await waitFor(
    'csv_succeeded for team-a and csv_abnormal Failed for team-all in Prometheus',
    async () =>
      (await instant('csv_succeeded{namespace="team-a"} == 1')).result.length === 1 &&
      (await instant('csv_abnormal{namespace="team-all",phase="Failed"}')).result.length === 1,
    180_000,
    500,
  );
  const failed = (await instant('csv_abnormal{namespace="team-all"}')).result[0]?.metric;
  t.match(failed, { name: 'etcdoperator.v0.9.4', reason: 'UnsupportedOperatorGroup' });

  const metadata = await prometheus.api<Record<string, { type: string }[]>>('metadata');
  for (const [name, spec] of Object.entries(catalogue))
    t.equal(metadata[name]?.[0]?.type, spec.type, `${name} is exported as a ${spec.type}`);
  const uncatalogued = Object.keys(metadata).filter(
    (name) => !defaultMetric.test(name) && !name.startsWith('scrape_') && !(name in catalogue),
  );
  t.same(uncatalogued, [], 'every metric olmq exports is in the catalogue');

  for (const [name, spec] of Object.entries(catalogue)) {
    if (!spec.seenOnInstall) continue;
    const match = spec.type === 'histogram' ? `${name}_count` : name;
    const series = await prometheus.api<Record<string, string>[]>('series', { 'match[]': match });
    t.ok(series.length > 0, `${name} has series`);
    const labels = new Set(
      series.flatMap((s) => Object.keys(s)).filter((l) => !scrapeLabels.has(l)),
    );
    t.same([...labels].sort(), [...spec.labels].sort(), `${name} has the catalogue's labels`);
  }

  const queries = [
    ...dashboards.flatMap(dashboardQueries),
    ...ruleGroups.flatMap((g) => g.rules.map((r) => r.expr)),
  ].map((q) => q.replaceAll('$cluster', '.*').replaceAll('$function', '.*'));
  for (const query of queries) await t.resolves(instant(query), query);
  t.ok(
    (await instant('sum by (cluster) (subscription_count)')).result.some((r) => r.value[1] === '2'),
    'the fleet table counts both Subscriptions',
  );
});
