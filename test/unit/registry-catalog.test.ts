import { join } from 'node:path';
import t, { type Test } from 'tap';
import {
  buildCatalogIndex,
  readCatalogDirectory,
  type CatalogIndex,
  type CatalogObject,
} from '../../shared/catalog/index.js';
import {
  bundleKey,
  bundleManifestData,
  registryCatalogObjects,
  type BundleManifestData,
} from '../../shared/registry/catalog-objects.js';
import { RegistryCatalog, RegistryNotFoundError } from '../../shared/registry/registry-catalog.js';
import { operatorhubPackages, smallCatalog } from '../harness/repo.js';

const small = smallCatalog;

async function catalogOf(dir: string): Promise<RegistryCatalog> {
  return RegistryCatalog.fromObjects(await readCatalogDirectory(dir)).catalog;
}

// The etcd package plus an olm.deprecations object, for the deprecation fields.
async function deprecatedEtcd(): Promise<{ objects: CatalogObject[]; catalog: RegistryCatalog }> {
  const objects = await readCatalogDirectory(join(small, 'etcd'));
  objects.push({
    schema: 'olm.deprecations',
    origin: 'test:1',
    hash: 'deprecations',
    value: {
      schema: 'olm.deprecations',
      package: 'etcd',
      entries: [
        { reference: { schema: 'olm.package' }, message: 'etcd is no longer maintained' },
        { reference: { schema: 'olm.channel', name: 'alpha' }, message: 'alpha is retired' },
        {
          reference: { schema: 'olm.bundle', name: 'etcdoperator.v0.9.2' },
          message: 'v0.9.2 has a data-loss bug',
        },
      ],
    },
  });
  return { objects, catalog: RegistryCatalog.fromObjects(objects).catalog };
}

// What a client reads from a registry, answered straight from the view (no wire).
function answersOf(catalog: RegistryCatalog) {
  const packages = catalog.packageNames().map((name) => catalog.getPackage(name));
  const bundles = [...catalog.listBundles()];
  const manifests = new Map<string, BundleManifestData>();
  for (const b of bundles) {
    const full = catalog.getBundle(b.packageName, b.channelName, b.csvName);
    manifests.set(bundleKey(b.packageName, b.csvName), bundleManifestData(full.object));
  }
  return { packages, bundles, manifests };
}

function sameIndex(t: Test, actual: CatalogIndex, expected: CatalogIndex): void {
  t.same(actual.packages, expected.packages, 'packages');
  t.same(
    actual.channels.map((c) => ({ package: c.package, name: c.name, head: c.head })),
    expected.channels.map((c) => ({ package: c.package, name: c.name, head: c.head })),
    'channels and heads',
  );
  t.same(actual.channels, expected.channels, 'channel entries and edges');
  t.same(actual.bundles, expected.bundles, 'bundles');
}

t.test(
  'registry catalog - GetPackage lists channels with their heads and the default channel',
  async (t) => {
    const catalog = await catalogOf(small);
    t.same(catalog.getPackage('etcd'), {
      name: 'etcd',
      channels: [
        { name: 'alpha', csvName: 'etcdoperator.v0.6.1', deprecation: null },
        {
          name: 'clusterwide-alpha',
          csvName: 'etcdoperator.v0.9.4-clusterwide',
          deprecation: null,
        },
        { name: 'singlenamespace-alpha', csvName: 'etcdoperator.v0.9.4', deprecation: null },
      ],
      defaultChannelName: 'singlenamespace-alpha',
      deprecation: null,
    });
    t.same(catalog.packageNames(), [
      'etcd',
      'hawtio-operator',
      'node-healthcheck-operator',
      'node-maintenance-operator',
      'prometheus',
      'self-node-remediation',
    ]);
  },
);

t.test(
  'registry catalog - GetBundle fills the bundle as upstream, with manifests and without edges',
  async (t) => {
    const catalog = await catalogOf(small);
    const b = catalog.getBundle('etcd', 'singlenamespace-alpha', 'etcdoperator.v0.9.2');
    t.equal(b.csvName, 'etcdoperator.v0.9.2');
    t.equal(b.packageName, 'etcd');
    t.equal(b.channelName, 'singlenamespace-alpha');
    t.equal(b.bundlePath, 'quay.io/community-operator-pipeline-prod/etcd:0.9.2');
    t.equal(b.version, '0.9.2');
    t.equal(b.replaces, '', 'GetBundle leaves replaces empty, as upstream');
    t.same(b.skips, []);
    const csv = JSON.parse(b.csvJson) as { kind: string; metadata: { name: string } };
    t.equal(csv.kind, 'ClusterServiceVersion');
    t.equal(csv.metadata.name, 'etcdoperator.v0.9.2');
    t.equal(b.object.length, 4, 'the CSV and three CRDs');
    t.ok(b.object.includes(b.csvJson), 'object includes the CSV');
    const kinds = b.object.map((o) => (JSON.parse(o) as { kind: string }).kind).sort();
    t.same(kinds, [
      'ClusterServiceVersion',
      'CustomResourceDefinition',
      'CustomResourceDefinition',
      'CustomResourceDefinition',
    ]);
    t.same(
      b.providedApis.find((a) => a.kind === 'EtcdCluster'),
      {
        group: 'etcd.database.coreos.com',
        version: 'v1beta2',
        kind: 'EtcdCluster',
        plural: 'etcdclusters',
      },
    );
    t.same(b.requiredApis, []);
    t.same(b.dependencies, []);
    t.same(
      b.properties.map((p) => p.type),
      ['olm.gvk', 'olm.gvk', 'olm.gvk', 'olm.package'],
      'properties as the catalog lists them, without olm.bundle.object',
    );
    t.equal(
      b.properties.find((p) => p.type === 'olm.package')?.value,
      '{"packageName":"etcd","version":"0.9.2"}',
    );
    t.equal(b.deprecation, null);
  },
);

t.test(
  'registry catalog - dependencies restate olm.gvk.required and olm.package.required',
  async (t) => {
    const catalog = await catalogOf(small);
    const b = catalog.getBundle(
      'node-healthcheck-operator',
      'stable',
      'node-healthcheck-operator.v0.5.0',
    );
    t.same(b.dependencies, [
      {
        type: 'olm.gvk',
        value:
          '{"group":"self-node-remediation.medik8s.io","kind":"SelfNodeRemediation","version":"v1alpha1"}',
      },
    ]);
    t.same(
      b.requiredApis.map((a) => a.kind),
      ['SelfNodeRemediation'],
    );
    t.equal(b.skipRange, '>=0.1.0 <0.5.0', 'the channel entry skipRange');

    const objects = await readCatalogDirectory(join(operatorhubPackages, 'alloydb-omni-operator'));
    const alloy = RegistryCatalog.fromObjects(objects).catalog;
    const head = alloy.getBundle(
      'alloydb-omni-operator',
      alloy.getPackage('alloydb-omni-operator').defaultChannelName,
      'alloydb-omni-operator.v1.3.0',
    );
    t.same(
      head.dependencies.find((d) => d.type === 'olm.package'),
      { type: 'olm.package', value: '{"packageName":"cert-manager","version":">=1.12.2"}' },
      'olm.package.required becomes an olm.package dependency with version = the range',
    );
  },
);

t.test(
  'registry catalog - ListBundles: once per channel entry, sorted, edges kept, no manifests for image bundles',
  async (t) => {
    const catalog = await catalogOf(small);
    const all = [...catalog.listBundles()];
    const entries = catalog.index.channels.reduce((n, c) => n + c.entries.length, 0);
    t.equal(all.length, entries, 'one message per channel entry');
    const keys = all.map((b) => [b.channelName, b.packageName, b.csvName]);
    const sorted = [...keys].sort((a, b) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1));
    t.same(keys, sorted, 'sorted by channel, package, bundle');
    t.ok(
      all.every((b) => b.csvJson === '' && b.object.length === 0),
      'bundles with an image carry no manifests',
    );
    const e = all.find(
      (b) => b.channelName === 'singlenamespace-alpha' && b.csvName === 'etcdoperator.v0.9.4',
    );
    t.equal(e?.replaces, 'etcdoperator.v0.9.2');
    const c = all.find(
      (b) =>
        b.channelName === 'clusterwide-alpha' && b.csvName === 'etcdoperator.v0.9.4-clusterwide',
    );
    t.equal(c?.replaces, 'etcdoperator.v0.9.2-clusterwide');
  },
);

t.test('registry catalog - unknown names are NotFound with upstream wording', async (t) => {
  const catalog = await catalogOf(small);
  t.throws(() => catalog.getPackage('nope'), new RegistryNotFoundError('package "nope" not found'));
  t.throws(
    () => catalog.getBundle('etcd', 'beta', 'etcdoperator.v0.9.2'),
    new RegistryNotFoundError('package "etcd", channel "beta" not found'),
  );
  t.throws(
    () => catalog.getBundle('etcd', 'alpha', 'etcdoperator.v0.9.2'),
    new RegistryNotFoundError(
      'package "etcd", channel "alpha", bundle "etcdoperator.v0.9.2" not found',
    ),
  );
  t.throws(
    () => catalog.entriesThatReplace('nothing.v1'),
    new RegistryNotFoundError('no channel entries found that replace nothing.v1'),
  );
  t.throws(
    () => catalog.bundleThatReplaces('etcdoperator.v0.9.4', 'etcd', 'singlenamespace-alpha'),
    new RegistryNotFoundError('no entry found for package "etcd", channel "singlenamespace-alpha"'),
  );
  t.throws(
    () => catalog.entriesThatProvide('example.com', 'v1', 'Nothing'),
    new RegistryNotFoundError(
      'no channel entries found that provide group:"example.com" version:"v1" kind:"Nothing"',
    ),
  );
  t.throws(
    () => catalog.defaultBundleThatProvides('example.com', 'v1', 'Nothing'),
    RegistryNotFoundError,
  );
});

t.test(
  'registry catalog - replacement and provider queries follow the channel graph',
  async (t) => {
    const catalog = await catalogOf(small);
    t.same(catalog.entriesThatReplace('etcdoperator.v0.9.0'), [
      {
        packageName: 'etcd',
        channelName: 'clusterwide-alpha',
        bundleName: 'etcdoperator.v0.9.2-clusterwide',
        replaces: 'etcdoperator.v0.9.0',
      },
      {
        packageName: 'etcd',
        channelName: 'singlenamespace-alpha',
        bundleName: 'etcdoperator.v0.9.2',
        replaces: 'etcdoperator.v0.9.0',
      },
    ]);
    const next = catalog.bundleThatReplaces('etcdoperator.v0.9.2', 'etcd', 'singlenamespace-alpha');
    t.equal(next.csvName, 'etcdoperator.v0.9.4');
    t.equal(next.replaces, '', 'answered through GetBundle');

    const heads = catalog.latestEntriesThatProvide(
      'etcd.database.coreos.com',
      'v1beta2',
      'EtcdCluster',
    );
    t.same(
      heads.map((e) => `${e.channelName}/${e.bundleName}`),
      [
        'alpha/etcdoperator.v0.6.1',
        'clusterwide-alpha/etcdoperator.v0.9.4-clusterwide',
        'singlenamespace-alpha/etcdoperator.v0.9.4',
      ],
    );
    const every = catalog.entriesThatProvide('etcd.database.coreos.com', 'v1beta2', 'EtcdBackup');
    t.equal(
      every.length,
      6,
      'the six entries of bundles with EtcdBackup (0.6.1, in alpha, has none)',
    );
    const chosen = catalog.defaultBundleThatProvides(
      'etcd.database.coreos.com',
      'v1beta2',
      'EtcdCluster',
    );
    t.equal(chosen.csvName, 'etcdoperator.v0.9.4', 'the head of the default channel');
    t.equal(
      catalog.getBundleForChannel('etcd', 'clusterwide-alpha').csvName,
      'etcdoperator.v0.9.4-clusterwide',
    );
  },
);

t.test('registry catalog - deprecations of package, channel and bundle are served', async (t) => {
  const { catalog } = await deprecatedEtcd();
  const pkg = catalog.getPackage('etcd');
  t.same(pkg.deprecation, { message: 'etcd is no longer maintained' });
  t.same(pkg.channels.find((c) => c.name === 'alpha')?.deprecation, {
    message: 'alpha is retired',
  });
  t.equal(pkg.channels.find((c) => c.name === 'singlenamespace-alpha')?.deprecation, null);
  t.same(catalog.getBundle('etcd', 'singlenamespace-alpha', 'etcdoperator.v0.9.2').deprecation, {
    message: 'v0.9.2 has a data-loss bug',
  });
});

t.test(
  'registry catalog - a bundle with only olm.csv.metadata gets a stub CSV, as upstream',
  async (t) => {
    const dir = join(operatorhubPackages, 'kubernaut-operator');
    const catalog = await catalogOf(dir);
    const pkg = catalog.getPackage('kubernaut-operator');
    const b = catalog.getBundle(
      'kubernaut-operator',
      pkg.defaultChannelName,
      'kubernaut-operator.v1.3.2',
    );
    const csv = JSON.parse(b.csvJson) as {
      kind: string;
      metadata: { name: string };
      spec: Record<string, unknown>;
    };
    t.equal(csv.kind, 'ClusterServiceVersion');
    t.equal(csv.metadata.name, 'kubernaut-operator.v1.3.2');
    t.same(csv.spec['install'], { strategy: 'deployment' });
    t.same(b.object, [b.csvJson], 'the stub is the only object');
    t.notOk(
      b.properties.some((p) => p.type === 'olm.csv.metadata'),
      'olm.csv.metadata is not a gRPC property',
    );
    const direct = catalog.index.getBundle('kubernaut-operator', 'kubernaut-operator.v1.3.2');
    const viaGrpc = buildCatalogIndex(
      registryCatalogObjects('test', answersOf(catalog)),
    ).index.getBundle('kubernaut-operator', 'kubernaut-operator.v1.3.2');
    t.same(viaGrpc?.installModes, direct?.installModes, 'install modes survive the stub');
    t.same(viaGrpc?.providedApis, direct?.providedApis, 'owned APIs survive the stub');
  },
);

t.test(
  'registry objects - the answers rebuild the same index as the directory (small)',
  async (t) => {
    const catalog = await catalogOf(small);
    const rebuilt = buildCatalogIndex(registryCatalogObjects('test', answersOf(catalog)));
    t.same(rebuilt.warnings, [], 'no warnings on a clean catalog');
    sameIndex(t, rebuilt.index, catalog.index);
  },
);

t.test('registry objects - deprecations survive the round trip', async (t) => {
  const { catalog } = await deprecatedEtcd();
  const rebuilt = buildCatalogIndex(registryCatalogObjects('test', answersOf(catalog))).index;
  sameIndex(t, rebuilt, catalog.index);
  t.equal(rebuilt.getPackage('etcd')?.deprecation, 'etcd is no longer maintained');
  t.equal(
    rebuilt.getBundle('etcd', 'etcdoperator.v0.9.2')?.deprecation,
    'v0.9.2 has a data-loss bug',
  );
});

t.test('registry objects - the same answers give the same objects and digest', async (t) => {
  const catalog = await catalogOf(join(small, 'etcd'));
  const a = registryCatalogObjects('a:1', answersOf(catalog));
  const b = registryCatalogObjects('a:1', answersOf(catalog));
  t.same(
    a.map((o) => o.hash),
    b.map((o) => o.hash),
  );
  t.equal(buildCatalogIndex(a).index.digest, buildCatalogIndex(b).index.digest);
  t.same(
    a.map((o) => o.schema),
    ['olm.package', 'olm.channel', 'olm.channel', 'olm.channel', ...Array(6).fill('olm.bundle')],
  );
});

t.test(
  'registry objects - a registry without properties (old SQLite servers) still yields bundles',
  async (t) => {
    const catalog = await catalogOf(join(small, 'etcd'));
    const answers = answersOf(catalog);
    const stripped = {
      ...answers,
      bundles: answers.bundles.map((b) => ({ ...b, properties: [] })),
    };
    const { index } = buildCatalogIndex(registryCatalogObjects('old:1', stripped));
    t.same(
      index.bundles.map((b) => [b.name, b.version]),
      catalog.index.bundles.map((b) => [b.name, b.version]),
    );
    t.same(
      index.getBundle('etcd', 'etcdoperator.v0.9.4')?.providedApis,
      catalog.index.getBundle('etcd', 'etcdoperator.v0.9.4')?.providedApis,
    );
  },
);
