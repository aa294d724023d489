// PackageManifests from catalog indexes (pure): real catalogs, and the messy cases upstream
// handles by leaving things out.
import t from 'tap';
import {
  buildPackageRecords,
  withDefaultOsArchLabels,
  type CatalogFacts,
  type JsonMap,
} from '../../packageserver/manifest.js';
import { parseQuery, PackageQueryError, visiblePackages } from '../../packageserver/query.js';
import { humanDuration, packageTable } from '../../packageserver/table.js';
import type { CatalogPackages } from '../../packageserver/view.js';
import {
  buildCatalogIndex,
  loadCatalogDirectory,
  parseCatalogText,
} from '../../shared/catalog/index.js';
import { smallCatalog } from '../harness/repo.js';

const facts = (namespace: string, name: string): CatalogFacts => ({
  namespace,
  name,
  displayName: `${name} display`,
  publisher: 'pub',
  labels: {},
  creationTimestamp: '2026-01-01T00:00:00Z',
});

const csvObject = (name: string, extra: Record<string, unknown> = {}): string =>
  Buffer.from(
    JSON.stringify({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      metadata: { name, labels: { 'operatorframework.io/arch.arm64': 'supported' } },
      spec: {
        displayName: name,
        version: name.split('.v')[1],
        provider: { name: 'Acme' },
        ...extra,
      },
    }),
  ).toString('base64');

const bundle = (pkg: string, name: string, version: string, properties: unknown[]): string =>
  JSON.stringify({
    schema: 'olm.bundle',
    package: pkg,
    name,
    image: `example.com/${pkg}:${version}`,
    properties: [{ type: 'olm.package', value: { packageName: pkg, version } }, ...properties],
  });

function messyIndex() {
  const lines = [
    '{"schema":"olm.package","name":"a","defaultChannel":"broken"}',
    '{"schema":"olm.channel","package":"a","name":"broken","entries":[{"name":"a.v2.0.0"}]}',
    '{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1.0.0"}]}',
    bundle('a', 'a.v1.0.0', '1.0.0', [
      { type: 'olm.bundle.object', value: { data: csvObject('a.v1.0.0') } },
    ]),
    // The head of "broken" ships no CSV at all (neither manifests nor olm.csv.metadata).
    bundle('a', 'a.v2.0.0', '2.0.0', [
      {
        type: 'olm.bundle.object',
        value: {
          data: Buffer.from(
            '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}',
          ).toString('base64'),
        },
      },
    ]),
    '{"schema":"olm.package","name":"meta","defaultChannel":"stable"}',
    '{"schema":"olm.channel","package":"meta","name":"stable","entries":[{"name":"meta.v1.0.0"}]}',
    bundle('meta', 'meta.v1.0.0', '1.0.0', [
      {
        type: 'olm.csv.metadata',
        value: {
          displayName: 'Meta Operator',
          provider: { name: 'Meta Inc', url: 'https://meta.example' },
          installModes: [{ type: 'AllNamespaces', supported: true }],
          keywords: ['meta'],
          annotations: { capabilities: 'Basic Install' },
        },
      },
    ]),
    '{"schema":"olm.package","name":"none","defaultChannel":"stable"}',
    '{"schema":"olm.channel","package":"none","name":"stable","entries":[{"name":"none.v1.0.0"}]}',
    bundle('none', 'none.v1.0.0', '1.0.0', [
      {
        type: 'olm.bundle.object',
        value: {
          data: Buffer.from(
            '{"kind":"Service","apiVersion":"v1","metadata":{"name":"s"}}',
          ).toString('base64'),
        },
      },
    ]),
    JSON.stringify({
      schema: 'olm.deprecations',
      package: 'meta',
      entries: [
        { reference: { schema: 'olm.package' }, message: 'meta is end of life' },
        { reference: { schema: 'olm.channel', name: 'stable' }, message: 'stable is frozen' },
        { reference: { schema: 'olm.bundle', name: 'meta.v1.0.0' }, message: 'use 2.x' },
      ],
    }),
  ];
  return buildCatalogIndex(parseCatalogText(lines.join('\n'), 'catalog.json'));
}

t.test(
  'packageserver manifest - every package of the small catalogs, without problems',
  async (t) => {
    const { index, content } = await loadCatalogDirectory(smallCatalog);
    const { records, problems } = buildPackageRecords(facts('olm', 'community'), index, content);
    t.same(problems, []);
    t.equal(records.length, index.packages.length);
    const hawtio = records.find(
      (r) => (r.manifest['metadata'] as JsonMap)['name'] === 'hawtio-operator',
    );
    t.equal((hawtio?.manifest['status'] as JsonMap)['defaultChannel'], 'stable-v1');
    t.match(hawtio?.labels, { catalog: 'community', 'catalog-namespace': 'olm' });
    t.ok(hawtio?.icon, 'the default channel head icon is kept for the icon subresource');
  },
);

t.test(
  'packageserver manifest - a default channel without CSV gives way to the first channel left',
  (t) => {
    const { index, content } = messyIndex();
    const { records, problems } = buildPackageRecords(facts('olm', 'c'), index, content);
    const a = records.find((r) => (r.manifest['metadata'] as JsonMap)['name'] === 'a');
    const status = a?.manifest['status'] as JsonMap;
    t.equal(status['defaultChannel'], 'stable');
    t.same(
      (status['channels'] as JsonMap[]).map((c) => c['name']),
      ['stable'],
    );
    t.match(problems, [
      { package: 'a', channel: 'broken', message: /has no ClusterServiceVersion/ },
    ]);
    t.same(a?.labels['operatorframework.io/arch.arm64'], 'supported');
    t.notOk(
      'operatorframework.io/arch.amd64' in (a?.labels ?? {}),
      'no default arch when the CSV states one',
    );
    t.equal(a?.labels['operatorframework.io/os.linux'], 'supported');
    t.end();
  },
);

t.test('packageserver manifest - a package whose every channel is unusable is left out', (t) => {
  const { index, content } = messyIndex();
  const { records, problems } = buildPackageRecords(facts('olm', 'c'), index, content);
  t.notOk(records.some((r) => (r.manifest['metadata'] as JsonMap)['name'] === 'none'));
  t.match(problems, [
    {},
    {},
    { package: 'none', message: 'package has no valid channels; left out' },
  ]);
  t.end();
});

t.test(
  'packageserver manifest - olm.csv.metadata describes a bundle without manifests; deprecations show',
  (t) => {
    const { index, content } = messyIndex();
    const { records } = buildPackageRecords(facts('olm', 'c'), index, content);
    const meta = records.find((r) => (r.manifest['metadata'] as JsonMap)['name'] === 'meta');
    t.match(meta?.manifest['status'], {
      provider: { name: 'Meta Inc', url: 'https://meta.example' },
      deprecation: { message: 'meta is end of life' },
      channels: [
        {
          name: 'stable',
          currentCSV: 'meta.v1.0.0',
          deprecation: { message: 'stable is frozen' },
          entries: [{ name: 'meta.v1.0.0', version: '1.0.0', deprecation: { message: 'use 2.x' } }],
          currentCSVDesc: {
            displayName: 'Meta Operator',
            version: '1.0.0',
            installModes: [{ type: 'AllNamespaces', supported: true }],
            keywords: ['meta'],
            annotations: { capabilities: 'Basic Install' },
            customresourcedefinitions: {},
            apiservicedefinitions: {},
          },
        },
      ],
    });
    t.match(meta?.labels, { provider: 'Meta Inc', 'provider-url': 'https://meta.example' });
    t.end();
  },
);

t.test('packageserver manifest - default os and arch labels only when none is stated', (t) => {
  t.same(withDefaultOsArchLabels({}), {
    'operatorframework.io/os.linux': 'supported',
    'operatorframework.io/arch.amd64': 'supported',
  });
  t.same(withDefaultOsArchLabels({ 'operatorframework.io/os.windows': 'supported' }), {
    'operatorframework.io/os.windows': 'supported',
    'operatorframework.io/arch.amd64': 'supported',
  });
  t.end();
});

t.test('packageserver query - own namespace and global namespace, own first, selectors', (t) => {
  const { index, content } = messyIndex();
  const catalog = (namespace: string, name: string, priority: number): CatalogPackages => ({
    namespace,
    name,
    priority,
    records: buildPackageRecords(facts(namespace, name), index, content).records,
  });
  const catalogs = [
    catalog('olm', 'global', 0),
    catalog('team', 'mine', -5),
    catalog('other', 'theirs', 0),
  ];
  const seen = (namespace: string | undefined, params = '') =>
    visiblePackages(catalogs, parseQuery(new URLSearchParams(params), namespace, 'olm')).map(
      (p) => p.key,
    );
  t.same(seen('team'), ['team/mine/a', 'olm/global/a', 'team/mine/meta', 'olm/global/meta']);
  t.same(seen('nobody'), ['olm/global/a', 'olm/global/meta']);
  t.equal(seen(undefined).length, 6);
  t.same(seen('team', 'labelSelector=catalog%3Dmine'), ['team/mine/a', 'team/mine/meta']);
  t.same(seen('team', 'fieldSelector=metadata.name%3Dmeta'), ['team/mine/meta', 'olm/global/meta']);
  const shown = visiblePackages(catalogs, parseQuery(new URLSearchParams(), 'team', 'olm'));
  t.ok(shown.every((p) => (p.manifest['metadata'] as JsonMap)['namespace'] === 'team'));
  t.throws(
    () => parseQuery(new URLSearchParams('fieldSelector=status.x%3Dy'), 'team', 'olm'),
    new PackageQueryError('field label not supported: status.x'),
  );
  t.throws(
    () => parseQuery(new URLSearchParams('labelSelector=%3D%3D'), 'team', 'olm'),
    PackageQueryError,
  );
  t.end();
});

t.test('packageserver table - Name, Catalog (display name), Age', (t) => {
  const { index, content } = messyIndex();
  const { records } = buildPackageRecords(facts('olm', 'c'), index, content);
  const now = Date.parse('2026-01-03T00:00:00Z');
  const table = packageTable(
    records.map((r) => r.manifest),
    '7',
    'Metadata',
    now,
  );
  t.same(
    (table['columnDefinitions'] as JsonMap[]).map((c) => c['name']),
    ['Name', 'Catalog', 'Age'],
  );
  t.same(
    (table['rows'] as JsonMap[]).map((r) => r['cells']),
    [
      ['a', 'c display', '2d'],
      ['meta', 'c display', '2d'],
    ],
  );
  t.equal(humanDuration(90), '90s');
  t.equal(humanDuration(3 * 3600 + 600), '3h10m');
  t.end();
});
