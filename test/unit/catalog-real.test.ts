// The real packages of catalogs/example load with the counts its README states, no
// warnings, and hand-checked channel heads and upgrade edges. The full community catalog's
// counts are checked by bench/catalog-real.ts, which takes the catalog's path.
import t from 'tap';
import { loadCatalogDirectory, type CatalogBuildResult } from '../../shared/catalog/index.js';
import { smallCatalog } from '../harness/repo.js';

const small = smallCatalog;

function totals(result: CatalogBuildResult) {
  const { index } = result;
  const entries = index.channels.flatMap((c) => c.entries);
  return {
    packages: index.packages.length,
    channels: index.channels.length,
    bundles: index.bundles.length,
    entries: entries.length,
    replaces: entries.filter((e) => e.replaces !== null).length,
    skipRanges: entries.filter((e) => e.skipRange !== null).length,
  };
}

t.test('catalog real data - small/', async (t) => {
  const result = await loadCatalogDirectory(small);
  const { index } = result;

  t.test('catalog real data - small/ has the README counts', (t) => {
    t.same(totals(result), {
      packages: 6,
      channels: 12,
      bundles: 62,
      entries: 79,
      replaces: 67,
      skipRanges: 43,
    });
    t.same(
      index.packages.map((p) => p.name),
      [
        'etcd',
        'hawtio-operator',
        'node-healthcheck-operator',
        'node-maintenance-operator',
        'prometheus',
        'self-node-remediation',
      ],
    );
    t.end();
  });

  t.test('catalog real data - small/ produces no warnings', (t) => {
    t.same(result.warnings, []);
    t.end();
  });

  t.test('catalog real data - small/ channel heads and default channels', (t) => {
    const heads = Object.fromEntries(index.channels.map((c) => [`${c.package}/${c.name}`, c.head]));
    t.same(heads, {
      'etcd/alpha': 'etcdoperator.v0.6.1',
      'etcd/clusterwide-alpha': 'etcdoperator.v0.9.4-clusterwide',
      'etcd/singlenamespace-alpha': 'etcdoperator.v0.9.4',
      'hawtio-operator/alpha': 'hawtio-operator.v0.5.0',
      'hawtio-operator/latest': 'hawtio-operator.v1.2.0',
      'hawtio-operator/stable-v1': 'hawtio-operator.v1.2.0',
      'node-healthcheck-operator/alpha': 'node-healthcheck-operator.v0.1.1',
      'node-healthcheck-operator/candidate': 'node-healthcheck-operator.v0.3.0',
      'node-healthcheck-operator/stable': 'node-healthcheck-operator.v0.12.0',
      'node-maintenance-operator/stable': 'node-maintenance-operator.v0.21.0',
      'prometheus/beta': 'prometheusoperator.0.56.3',
      'self-node-remediation/stable': 'self-node-remediation.v0.13.0',
    });
    t.equal(index.getPackage('etcd')?.defaultChannel, 'singlenamespace-alpha');
    t.equal(index.defaultHead('hawtio-operator')?.name, 'hawtio-operator.v1.2.0');
    t.end();
  });

  t.test('catalog real data - entries run from the head along the replaces chain', (t) => {
    const names = index.getChannel('etcd', 'singlenamespace-alpha')?.entries.map((e) => e.name);
    t.same(names, ['etcdoperator.v0.9.4', 'etcdoperator.v0.9.2', 'etcdoperator.v0.9.0']);
    const hawtio = index.getChannel('hawtio-operator', 'stable-v1')?.entries ?? [];
    t.equal(hawtio.length, 10);
    t.equal(hawtio[hawtio.length - 1]?.name, 'hawtio-operator.v0.1.0');
    t.end();
  });

  t.test('catalog real data - replaces edges give the next bundle', (t) => {
    const up = index.upgradesFrom('etcd', 'singlenamespace-alpha', { name: 'etcdoperator.v0.9.2' });
    t.same(
      up.map((c) => [c.bundle.name, c.via]),
      [['etcdoperator.v0.9.4', 'replaces']],
    );
    const none = index.upgradesFrom('etcd', 'singlenamespace-alpha', {
      name: 'etcdoperator.v0.9.4',
    });
    t.same(none, [], 'the head upgrades to nothing');
    t.end();
  });

  t.test(
    'catalog real data - open-ended skipRange >=0.12.0 matches older and newer bundles',
    (t) => {
      const channel = index.getChannel('node-maintenance-operator', 'stable');
      t.equal(channel?.entries.filter((e) => e.skipRange === '>=0.12.0').length, 10);
      // 10 entries × the 11 other bundles, plus 0.13.0's replaces (its own range only covers
      // 0.12.1, which it already replaces).
      t.equal(channel?.edges.length, 111);
      const from = index.upgradesFrom('node-maintenance-operator', 'stable', {
        name: 'node-maintenance-operator.v0.20.1',
      });
      t.same(from[0], {
        bundle: index.getBundle('node-maintenance-operator', 'node-maintenance-operator.v0.21.0'),
        via: 'replaces',
      });
      const viaRange = from.filter((c) => c.via === 'skipRange').map((c) => c.bundle.version);
      t.same(viaRange.sort(), [
        '0.14.0',
        '0.15.0',
        '0.16.0',
        '0.16.1',
        '0.17.0',
        '0.18.0',
        '0.19.0',
        '0.20.0',
      ]);
      t.notOk(
        from.some((c) => c.bundle.name === 'node-maintenance-operator.v0.20.1'),
        'a bundle is never its own upgrade',
      );
      t.end();
    },
  );

  t.test(
    'catalog real data - skipRange applies to installed CSVs missing from the catalog',
    (t) => {
      const gone = index.upgradesFrom('node-maintenance-operator', 'stable', {
        name: 'node-maintenance-operator.v0.12.0',
        version: '0.12.0',
      });
      t.equal(gone.length, 11, 'every entry whose range includes 0.12.0');
      t.ok(gone.every((c) => c.via === 'skipRange'));
      const older = index.upgradesFrom('node-maintenance-operator', 'stable', {
        name: 'node-maintenance-operator.v0.11.0',
        version: '0.11.0',
      });
      t.same(older, []);
      t.end();
    },
  );

  t.test('catalog real data - bounded skipRanges of self-node-remediation', (t) => {
    const entry = index
      .getChannel('self-node-remediation', 'stable')
      ?.entries.find((e) => e.name === 'self-node-remediation.v0.13.0');
    t.ok(entry?.skipRange?.startsWith('>=0.4.0 <'));
    const from = index.upgradesFrom('self-node-remediation', 'stable', {
      name: 'self-node-remediation.v0.4.0',
    });
    t.ok(
      from.some((c) => c.bundle.name === 'self-node-remediation.v0.13.0' && c.via === 'skipRange'),
    );
    t.end();
  });

  t.test('catalog real data - dependencies and their providers', (t) => {
    const nhc = index.getBundle('node-healthcheck-operator', 'node-healthcheck-operator.v0.8.0');
    const dep = nhc?.dependencies.find((d) => d.type === 'olm.gvk');
    t.same(dep, {
      type: 'olm.gvk',
      group: 'self-node-remediation.medik8s.io',
      version: 'v1alpha1',
      kind: 'SelfNodeRemediation',
    });
    const providers = index.providersOf(
      'self-node-remediation.medik8s.io',
      'v1alpha1',
      'SelfNodeRemediation',
    );
    t.ok(providers.length > 0);
    t.ok(providers.every((b) => b.package === 'self-node-remediation'));
    t.same(index.providersOf('poison-pill.medik8s.io', 'v1alpha1', 'PoisonPillRemediation'), []);
    t.end();
  });

  t.test('catalog real data - install modes and plurals come from the CSV', (t) => {
    const etcd = index.getBundle('etcd', 'etcdoperator.v0.9.4');
    t.same(
      etcd?.installModes?.filter((m) => m.supported).map((m) => m.type),
      ['OwnNamespace', 'SingleNamespace'],
    );
    t.same(
      etcd?.providedApis.find((a) => a.kind === 'EtcdCluster'),
      {
        group: 'etcd.database.coreos.com',
        version: 'v1beta2',
        kind: 'EtcdCluster',
        plural: 'etcdclusters',
      },
    );
    t.equal(etcd?.semver, '0.9.4');
    t.end();
  });

  t.test('catalog real data - bundle content yields the CSV and CRDs of a bundle', async (t) => {
    const { decodeBundleManifests } = await import('../../shared/catalog/index.js');
    const content = result.content.get('etcd', 'etcdoperator.v0.9.4');
    t.ok(content);
    const manifests = decodeBundleManifests(
      content ?? { objects: [], csvMetadata: null, relatedImages: [] },
    );
    t.equal(
      (manifests.csv?.['metadata'] as { name?: string } | undefined)?.name,
      'etcdoperator.v0.9.4',
    );
    t.ok(manifests.others.some((o) => o['kind'] === 'CustomResourceDefinition'));
  });
});
