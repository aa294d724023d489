// `olmq resolve` as a child process on the real catalogs: exit codes 0/1/2 and the -o json
// contract other tools rely on.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { runOlmq as olmq } from '../harness/cli.js';
import { smallCatalog } from '../harness/repo.js';

const small = smallCatalog;

const dir = await mkdtemp(join(tmpdir(), 'olmq-resolve-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

function subscription(name: string, spec: string, status = ''): string {
  return `apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: ${name}, namespace: team}
spec: {${spec}, source: community, sourceNamespace: olm}
${status === '' ? '' : `status: {${status}}\n`}`;
}

t.test('cli resolve - resolved: exit 0 and the JSON contract, dependencies included', async (t) => {
  const subs = await file(
    'ok.yaml',
    [
      subscription('etcd', 'name: etcd'),
      subscription(
        'nhc',
        'name: node-healthcheck-operator, channel: stable, startingCSV: node-healthcheck-operator.v0.8.0',
      ),
    ].join('---\n'),
  );
  const { code, stdout } = await olmq([
    'resolve',
    '--catalog',
    `community=${small}`,
    '--subscriptions',
    subs,
    '-o',
    'json',
  ]);
  t.equal(code, 0);
  t.same(JSON.parse(stdout), {
    status: 'resolved',
    bundles: [
      {
        package: 'etcd',
        name: 'etcdoperator.v0.9.4',
        version: '0.9.4',
        catalog: 'community',
        subscription: 'etcd',
        action: 'install',
        replaces: null,
      },
      {
        package: 'node-healthcheck-operator',
        name: 'node-healthcheck-operator.v0.8.0',
        version: '0.8.0',
        catalog: 'community',
        subscription: 'nhc',
        action: 'install',
        replaces: null,
      },
      {
        package: 'self-node-remediation',
        name: 'self-node-remediation.v0.13.0',
        version: '0.13.0',
        catalog: 'community',
        subscription: null,
        action: 'install',
        replaces: null,
      },
    ],
    problems: [],
  });
});

t.test('cli resolve - upgrade preview with installed CSVs, as YAML', async (t) => {
  const subs = await file(
    'upgrade.yaml',
    subscription(
      'etcd',
      'name: etcd, channel: singlenamespace-alpha',
      'installedCSV: etcdoperator.v0.9.2',
    ),
  );
  const installed = await file(
    'installed.json',
    JSON.stringify({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      metadata: {
        name: 'etcdoperator.v0.9.2',
        namespace: 'team',
        annotations: {
          'operatorframework.io/properties':
            '{"properties":[{"type":"olm.package","value":{"packageName":"etcd","version":"0.9.2"}}]}',
        },
      },
      spec: { displayName: 'etcd', version: '0.9.2', install: { strategy: 'deployment' } },
    }),
  );
  const { code, stdout, stderr } = await olmq([
    'resolve',
    '--catalog',
    `community=${small},priority=5`,
    '--subscriptions',
    subs,
    '--installed',
    installed,
    '-o',
    'yaml',
  ]);
  t.equal(code, 0, stderr);
  t.same(parseYaml(stdout), {
    status: 'resolved',
    bundles: [
      {
        package: 'etcd',
        name: 'etcdoperator.v0.9.4',
        version: '0.9.4',
        catalog: 'community',
        subscription: 'etcd',
        action: 'upgrade',
        replaces: 'etcdoperator.v0.9.2',
      },
    ],
    problems: [],
  });
});

t.test('cli resolve - unsatisfiable: exit 1 with the explanation, in JSON and text', async (t) => {
  const subs = await file(
    'unsat.yaml',
    [
      subscription('nhc', 'name: node-healthcheck-operator, channel: alpha'),
      subscription('etcd', 'name: etcd'),
    ].join('---\n'),
  );
  const json = await olmq([
    'resolve',
    '--catalog',
    `community=${small}`,
    '--subscriptions',
    subs,
    '-o',
    'json',
  ]);
  t.equal(json.code, 1);
  const out = JSON.parse(json.stdout) as {
    status: string;
    bundles: { name: string }[];
    problems: { subscription: string; message: string }[];
  };
  t.equal(out.status, 'unsatisfiable');
  t.same(
    out.bundles.map((b) => b.name),
    ['etcdoperator.v0.9.4'],
    'etcd still resolves',
  );
  t.equal(out.problems.length, 1);
  t.equal(out.problems[0]?.subscription, 'nhc');
  t.match(
    out.problems[0]?.message,
    /bundle node-healthcheck-operator\.v0\.1\.1 requires an operator providing PoisonPillRemediation \(poison-pill\.medik8s\.io\/v1alpha1\), which no catalog visible to namespace team \(olm\/community\) provides/,
  );
  const text = await olmq(['resolve', '--catalog', `community=${small}`, '--subscriptions', subs]);
  t.equal(text.code, 1);
  t.match(text.stdout, /Unsatisfiable/);
  t.match(text.stdout, /subscription nhc: .*PoisonPillRemediation.*Add a CatalogSource/);
});

t.test(
  'cli resolve - a bad Subscription exits 2 naming the file, document and field',
  async (t) => {
    const subs = await file(
      'bad.yaml',
      `${subscription('etcd', 'name: etcd')}---\nkind: Subscription\nmetadata: {name: broken}\nspec: {source: community, sourceNamespace: olm}\n`,
    );
    const { code, stderr } = await olmq([
      'resolve',
      '--catalog',
      `community=${small}`,
      '--subscriptions',
      subs,
    ]);
    t.equal(code, 2);
    t.match(stderr, `${subs}: document 2: Subscription "broken" is invalid: spec.name`);
  },
);

t.test('cli resolve - a document of another kind exits 2', async (t) => {
  const subs = await file('kind.yaml', 'kind: ConfigMap\nmetadata: {name: x}\n');
  const { code, stderr } = await olmq([
    'resolve',
    '--catalog',
    `community=${small}`,
    '--subscriptions',
    subs,
  ]);
  t.equal(code, 2);
  t.match(stderr, /document 1: kind: expected Subscription, found "ConfigMap"/);
});

t.test('cli resolve - an unreadable properties annotation exits 2 naming the CSV', async (t) => {
  const subs = await file('p.yaml', subscription('etcd', 'name: etcd'));
  const installed = await file(
    'badprops.yaml',
    `kind: ClusterServiceVersion
metadata:
  name: x.v1
  annotations: {operatorframework.io/properties: "not json"}
spec: {displayName: x, install: {strategy: deployment}}
`,
  );
  const { code, stderr } = await olmq([
    'resolve',
    '--catalog',
    `community=${small}`,
    '--subscriptions',
    subs,
    '--installed',
    installed,
  ]);
  t.equal(code, 2);
  t.match(
    stderr,
    /failed to retrieve properties of csv "x\.v1": annotation operatorframework\.io\/properties is not JSON/,
  );
});

t.test('cli resolve - missing files and bad --catalog values exit 2', async (t) => {
  const subs = await file('s.yaml', subscription('etcd', 'name: etcd'));
  const missing = await olmq([
    'resolve',
    '--catalog',
    `community=${small}`,
    '--subscriptions',
    join(dir, 'nope.yaml'),
  ]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /nope\.yaml: cannot read the subscriptions file: no such file/);
  const noDir = await olmq([
    'resolve',
    '--catalog',
    `community=${join(dir, 'nodir')}`,
    '--subscriptions',
    subs,
  ]);
  t.equal(noDir.code, 2);
  t.match(noDir.stderr, /--catalog community=.*nodir: /);
  const badSpec = await olmq([
    'resolve',
    '--catalog',
    `community=${small},weight=3`,
    '--subscriptions',
    subs,
  ]);
  t.equal(badSpec.code, 2);
  t.match(badSpec.stderr, /--catalog: .*unknown or bad setting "weight=3"/);
  const none = await olmq(['resolve', '--subscriptions', subs]);
  t.equal(none.code, 2);
  t.match(none.stderr, /--catalog: at least one catalog is required/);
});
