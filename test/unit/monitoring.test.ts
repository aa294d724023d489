// The monitoring files: generated ones up to date, queries naming only metrics olmq exports,
// upstream's alerts as upstream ships them, a runbook for every alert.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ruleGroups, runbookAnchor } from '../../monitoring/alerts.js';
import { catalogued } from '../../monitoring/catalogue.js';
import { dashboardQueries } from '../../monitoring/dashboards/grafana.js';
import { dashboards, renderMonitoringFiles } from '../../monitoring/render.js';
import { metricNames } from '../harness/promql.js';
import { repoRoot } from '../harness/repo.js';

t.test('generated monitoring files are up to date', (t) => {
  for (const file of renderMonitoringFiles()) {
    const current = readFileSync(join(repoRoot, 'k8s', file.path), 'utf8');
    t.ok(current === file.text, `k8s/${file.path} is up to date (if not, npm run gen:monitoring)`);
  }
  t.end();
});

t.test('metric names are found in PromQL', (t) => {
  t.same(
    metricNames(
      'sum by (cluster, le) (rate(a_bucket{x="y{z}"}[5m])) / on (cluster) group_left b offset 5m > bool 3',
    ).sort(),
    ['a_bucket', 'b'],
  );
  t.same(metricNames('absent(up{job="w"} == 1) or max(c:d)'), ['up', 'c:d']);
  t.end();
});

t.test('dashboards and alerts name only metrics olmq exports', (t) => {
  // `up` is Prometheus's own series of each scrape target.
  const known = (name: string): boolean => name === 'up' || catalogued(name);
  const queries = [
    ...dashboards.flatMap((d) => dashboardQueries(d).map((q) => [d.uid, q] as const)),
    ...ruleGroups.flatMap((g) => g.rules.map((r) => [r.alert, r.expr] as const)),
  ];
  t.ok(queries.length > 40, `${queries.length} queries`);
  for (const [where, expr] of queries) {
    const names = metricNames(expr);
    t.ok(names.length > 0, `${where}: ${expr} reads a metric`);
    t.same(
      names.filter((n) => !known(n)),
      [],
      `${where}: ${expr}`,
    );
  }
  for (const d of dashboards)
    for (const v of d.variables) {
      const metric = /^label_values\((\w+), *(\w+)\)$/.exec(v.query)?.[1] ?? '';
      t.ok(catalogued(metric), `${d.uid} variable ${v.name} reads ${metric}`);
    }
  t.end();
});

t.test("upstream's alerts are shipped with upstream's names, expressions, severities", (t) => {
  // From upstream v0.26.0 deploy/chart/templates/0000_90_olm_01-prometheus-rule.yaml.
  const rules = new Map(ruleGroups.flatMap((g) => g.rules).map((r) => [r.alert, r]));
  t.match(rules.get('CsvAbnormalFailedOver2Min'), {
    expr: 'last_over_time(csv_abnormal{phase="Failed"}[5m])',
    for: '2m',
    labels: { severity: 'warning' },
  });
  t.match(rules.get('CsvAbnormalOver30Min'), {
    expr: 'last_over_time(csv_abnormal{phase=~"(Replacing|Pending|Deleting|Unknown)"}[5m])',
    for: '30m',
    labels: { severity: 'warning' },
  });
  t.match(rules.get('InstallPlanStepAppliedWithWarnings'), {
    expr: 'sum by(namespace) (increase(installplan_warnings_total[5m])) > 0',
    labels: { severity: 'warning' },
  });
  t.end();
});

t.test('every alert has a runbook section in docs/monitoring.md', (t) => {
  const doc = readFileSync(join(repoRoot, 'docs', 'monitoring.md'), 'utf8');
  const anchors = new Set(
    [...doc.matchAll(/^#{2,4} (.+)$/gm)].map((m) => (m[1] ?? '').toLowerCase().replace(/ /g, '-')),
  );
  for (const rule of ruleGroups.flatMap((g) => g.rules))
    t.ok(anchors.has(runbookAnchor(rule.alert)), `${rule.alert} has a runbook section`);
  t.end();
});
