// olmq's CRDs (crds/) through the real kubectl against the devcluster: install, discovery,
// short names, printer columns, explain, and real operator manifests applied with kubectl's
// strict validation (unknown fields would be refused).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { kubectl, startCluster, type ClusterFixture } from '../harness/devcluster.js';
import { repoRoot, smallCatalog } from '../harness/repo.js';

let fixture: ClusterFixture;
t.before(async () => {
  fixture = await startCluster();
});
t.teardown(() => fixture.close());

async function run(args: string[], input?: string): Promise<string> {
  const result = await kubectl(fixture, args, input);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** The ClusterServiceVersion of a bundle of the small catalog, as the bundle ships it. */
function catalogCsv(pkg: string, bundle: string): Record<string, unknown> {
  const lines = readFileSync(join(smallCatalog, pkg, 'catalog.json'), 'utf8').split('\n');
  for (const line of lines) {
    if (line.trim() === '') continue;
    const entry = JSON.parse(line) as {
      schema: string;
      name: string;
      properties?: { type: string; value: { data?: string } }[];
    };
    if (entry.schema !== 'olm.bundle' || entry.name !== bundle) continue;
    for (const p of entry.properties ?? []) {
      if (p.type !== 'olm.bundle.object' || p.value.data === undefined) continue;
      const object = JSON.parse(Buffer.from(p.value.data, 'base64').toString('utf8')) as Record<
        string,
        unknown
      >;
      if (object.kind === 'ClusterServiceVersion') return object;
    }
  }
  throw new Error(`no CSV for ${bundle} in ${pkg}`);
}

t.test(
  'olm api - kubectl apply -f crds/ installs every kind and they become Established',
  async (t) => {
    const out = await run(['apply', '-f', join(repoRoot, 'crds')]);
    for (const plural of [
      'catalogsources',
      'clusterserviceversions',
      'installplans',
      'olmconfigs',
      'operatorconditions',
      'operators',
      'operatorgroups',
      'subscriptions',
    ]) {
      t.match(
        out,
        new RegExp(
          `customresourcedefinition.apiextensions.k8s.io/${plural}.operators.coreos.com created`,
        ),
      );
    }
    const waited = await run([
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      '-f',
      join(repoRoot, 'crds'),
    ]);
    t.equal(waited.match(/condition met/g)?.length, 8);
    t.match(
      await run(['apply', '-f', join(repoRoot, 'crds')]),
      /clusterserviceversions.operators.coreos.com unchanged/,
      'a second apply changes nothing',
    );
  },
);

t.test('olm api - api-resources shows the short names and the olm category', async (t) => {
  const out = await run(['api-resources', '--api-group=operators.coreos.com', '-o', 'wide']);
  t.match(
    out,
    /clusterserviceversions\s+csv,csvs\s+operators.coreos.com\/v1alpha1\s+true\s+ClusterServiceVersion/,
  );
  t.match(out, /installplans\s+ip\s/);
  t.match(out, /catalogsources\s+catsrc\s/);
  t.match(out, /subscriptions\s+sub,subs\s/);
  t.match(out, /operatorgroups\s+og\s+operators.coreos.com\/v1\s/);
  t.match(out, /\solm\b/, 'category olm');
});

t.test(
  'olm api - a real CSV from the catalog applies with strict validation and prints its columns',
  async (t) => {
    await run(['create', 'namespace', 'operators']);
    const csv = catalogCsv('prometheus', 'prometheusoperator.0.56.3');
    delete (csv.metadata as Record<string, unknown>).namespace; // bundles carry a placeholder
    const applied = await run(
      ['apply', '--validate=strict', '-n', 'operators', '-f', '-'],
      JSON.stringify(csv),
    );
    t.match(
      applied,
      /clusterserviceversion.operators.coreos.com\/prometheusoperator.0.56.3 created/,
    );
    const table = await run(['get', 'csv', '-n', 'operators']);
    t.match(table, /NAME\s+DISPLAY\s+VERSION\s+RELEASE\s+REPLACES\s+PHASE/);
    t.match(
      table,
      /prometheusoperator.0.56.3\s+Prometheus Operator\s+0.56.3\s+prometheusoperator.0.47.0/,
    );
  },
);

t.test(
  'olm api - subscriptions, operator groups and catalog sources through kubectl',
  async (t) => {
    const manifests = [
      {
        apiVersion: 'operators.coreos.com/v1',
        kind: 'OperatorGroup',
        metadata: { name: 'og', namespace: 'operators' },
        spec: { targetNamespaces: ['operators'] },
      },
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'CatalogSource',
        metadata: { name: 'community', namespace: 'operators' },
        spec: {
          sourceType: 'grpc',
          address: 'localhost:50051',
          displayName: 'Community',
          publisher: 'olmq',
        },
      },
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: 'prometheus', namespace: 'operators' },
        spec: {
          name: 'prometheus',
          source: 'community',
          sourceNamespace: 'operators',
          channel: 'beta',
          installPlanApproval: 'Manual',
        },
      },
    ];
    await run(
      ['apply', '--validate=strict', '-f', '-'],
      manifests.map((m) => stringify(m)).join('---\n'),
    );
    t.match(
      await run(['get', 'sub', '-n', 'operators']),
      /prometheus\s+prometheus\s+community\s+beta/,
    );
    t.match(await run(['get', 'catsrc', '-n', 'operators']), /community\s+Community\s+grpc\s+olmq/);
    t.match(
      await run([
        'get',
        'og',
        'og',
        '-n',
        'operators',
        '-o',
        'jsonpath={.spec.targetNamespaces[0]}',
      ]),
      /^operators$/,
    );
    const all = await run(['get', 'olm', '-A']);
    t.match(all, /subscription.operators.coreos.com\/prometheus/);
    t.match(all, /clusterserviceversion.operators.coreos.com\/prometheusoperator.0.56.3/);
  },
);

t.test('olm api - bad values are refused with the field named', async (t) => {
  const bad = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: 'bad', namespace: 'operators' },
    spec: { name: 'x', source: 'y', sourceNamespace: 'z', installPlanApproval: 'Sometimes' },
  };
  const result = await kubectl(fixture, ['apply', '-f', '-'], JSON.stringify(bad));
  t.not(result.code, 0);
  t.match(
    result.stderr,
    /spec.installPlanApproval: Unsupported value: "Sometimes": supported values: "Automatic", "Manual"/,
  );
  const unknown = {
    ...bad,
    metadata: { name: 'bad2', namespace: 'operators' },
    spec: { name: 'x', source: 'y', sourceNamespace: 'z', chanel: 'typo' },
  };
  const strict = await kubectl(
    fixture,
    ['apply', '--validate=strict', '-f', '-'],
    JSON.stringify(unknown),
  );
  t.not(strict.code, 0);
  t.match(strict.stderr, /unknown field "spec.chanel"/);
});

t.test('olm api - kubectl explain documents CRD fields', async (t) => {
  const out = await run(['explain', 'subscription.spec.installPlanApproval']);
  t.match(out, /KIND:\s+Subscription/);
  t.match(out, /FIELD:\s+installPlanApproval/);
});
