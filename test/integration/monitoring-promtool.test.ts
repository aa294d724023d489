// The alerts and dashboards through the real promtool: the rule file is valid, every alert has
// unit tests that pass (test/fixtures/prometheus/alerts-test.yaml), and every dashboard query
// parses as PromQL.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { ruleGroups } from '../../monitoring/alerts.js';
import { dashboardQueries } from '../../monitoring/dashboards/grafana.js';
import { dashboards } from '../../monitoring/render.js';
import { promtool } from '../harness/prometheus.js';
import { repoRoot } from '../harness/repo.js';

const rulesFile = join(repoRoot, 'k8s', 'prometheus', 'rules.yaml');
const alertTests = join(repoRoot, 'test', 'fixtures', 'prometheus', 'alerts-test.yaml');
const alerts = ruleGroups.flatMap((g) => g.rules.map((r) => r.alert));

t.test('promtool check rules accepts the rule file', async (t) => {
  const { code, output } = await promtool(['check', 'rules', rulesFile]);
  t.equal(code, 0, output);
  t.match(output, `SUCCESS: ${alerts.length} rules found`);
});

t.test('promtool test rules: every alert is tested, and the tests pass', async (t) => {
  const tested = new Set(
    [...readFileSync(alertTests, 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1]),
  );
  for (const alert of alerts) t.ok(tested.has(alert), `${alert} has unit tests`);
  const { code, output } = await promtool(['test', 'rules', alertTests]);
  t.equal(code, 0, output);
  t.match(output, /SUCCESS/);
});

t.test('every dashboard query parses as PromQL', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-dashboards-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'queries.yaml');
  const write = (exprs: readonly string[]): void =>
    writeFileSync(
      file,
      stringify({
        groups: [
          {
            name: 'dashboard-queries',
            rules: exprs.map((expr, i) => ({ record: `olmq:dashboard_query:${i}`, expr })),
          },
        ],
      }),
    );
  const queries = dashboards.flatMap(dashboardQueries);
  write(queries);
  const parsed = await promtool(['check', 'rules', file]);
  t.equal(parsed.code, 0, parsed.output);
  t.match(parsed.output, `SUCCESS: ${queries.length} rules found`);

  // The same check refuses a query that does not parse.
  write(['sum by (cluster (csv_count)']);
  const broken = await promtool(['check', 'rules', file]);
  t.not(broken.code, 0);
  t.match(broken.output, /parse error/);
});
