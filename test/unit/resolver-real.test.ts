// Resolution scenarios on real community packages: etcd (catalogs/example) and the
// kuadrant, shipwright and l5 packages with their dependencies (test/fixtures/catalogs/operatorhub).
// Whole-catalog checks (every package of the 105 MB community catalog) are a benchmark:
// bench/catalog-real.ts.
import t from 'tap';
import {
  buildCatalogIndex,
  readCatalogDirectory,
  type CatalogIndex,
} from '../../shared/catalog/index.js';
import {
  resolveNamespace,
  type InstalledCsvFacts,
  type Resolution,
  type SubscriptionFacts,
} from '../../shared/resolver/index.js';
import { operatorhubPackages, smallCatalog } from '../harness/repo.js';

const index: CatalogIndex = buildCatalogIndex([
  ...(await readCatalogDirectory(smallCatalog)),
  ...(await readCatalogDirectory(operatorhubPackages)),
]).index;

function sub(name: string, extra: Partial<SubscriptionFacts> = {}): SubscriptionFacts {
  return {
    name,
    package: name,
    channel: null,
    source: { name: 'operatorhub', namespace: 'olm' },
    startingCSV: null,
    installedCSV: null,
    ...extra,
  };
}

function installed(name: string, pkg: string, version: string): InstalledCsvFacts {
  return {
    name,
    version,
    properties: [{ type: 'olm.package', value: { packageName: pkg, version } }],
    ownedApis: [],
    requiredApis: [],
  };
}

function resolve(subs: SubscriptionFacts[], csvs: InstalledCsvFacts[] = []): Resolution {
  return resolveNamespace({
    namespace: 'operators',
    subscriptions: subs,
    installed: csvs,
    operatorGroups: null,
    catalogs: [{ name: 'operatorhub', namespace: 'olm', priority: 0, index }],
  });
}

function compact(r: Resolution): string[] {
  return r.bundles.map(
    (b) =>
      `${b.subscription ?? '-'}:${b.action}:${b.name}${b.replaces === null ? '' : `<${b.replaces}`}`,
  );
}

t.test('resolver real - etcd installs the head of its default channel', (t) => {
  t.same(compact(resolve([sub('etcd')])), ['etcd:install:etcdoperator.v0.9.4']);
  t.end();
});

t.test('resolver real - etcd on clusterwide-alpha installs that channel head', (t) => {
  t.same(compact(resolve([sub('etcd', { channel: 'clusterwide-alpha' })])), [
    'etcd:install:etcdoperator.v0.9.4-clusterwide',
  ]);
  t.end();
});

t.test('resolver real - etcd upgrades one replaces edge at a time', (t) => {
  const r = resolve(
    [sub('etcd', { channel: 'singlenamespace-alpha', installedCSV: 'etcdoperator.v0.9.0' })],
    [installed('etcdoperator.v0.9.0', 'etcd', '0.9.0')],
  );
  t.same(compact(r), ['etcd:upgrade:etcdoperator.v0.9.2<etcdoperator.v0.9.0']);
  t.end();
});

t.test('resolver real - kuadrant-operator pulls its three package dependencies', (t) => {
  t.same(compact(resolve([sub('kuadrant-operator')])), [
    'kuadrant-operator:install:kuadrant-operator.v0.11.1',
    '-:install:authorino-operator.v0.13.0',
    '-:install:dns-operator.v0.6.0',
    '-:install:limitador-operator.v0.11.0',
  ]);
  t.end();
});

t.test('resolver real - an installed dependency at the required version is reused', (t) => {
  const r = resolve(
    [
      sub('kuadrant-operator'),
      sub('limitador-operator', { installedCSV: 'limitador-operator.v0.11.0' }),
    ],
    [installed('limitador-operator.v0.11.0', 'limitador-operator', '0.11.0')],
  );
  t.same(compact(r), [
    'kuadrant-operator:install:kuadrant-operator.v0.11.1',
    'limitador-operator:keep:limitador-operator.v0.11.0',
    '-:install:authorino-operator.v0.13.0',
    '-:install:dns-operator.v0.6.0',
  ]);
  t.end();
});

t.test('resolver real - a missing dependency is explained and does not block etcd', (t) => {
  const r = resolve([sub('shipwright-operator'), sub('etcd')]);
  t.equal(r.status, 'unsatisfiable');
  t.same(compact(r), ['etcd:install:etcdoperator.v0.9.4']);
  t.equal(r.problems.length, 1);
  t.match(
    r.problems[0]?.message ?? '',
    /subscription shipwright-operator cannot be satisfied: bundle shipwright-operator\.v\S+ requires an operator providing TektonConfig \(operator\.tekton\.dev\/v1alpha1\), which no catalog visible to namespace operators \(olm\/operatorhub\) provides/,
  );
  t.end();
});

t.test(
  'resolver real - a package dependency missing from the catalog names package and range',
  (t) => {
    const r = resolve([sub('l5-operator')]);
    t.match(
      r.problems[0]?.message ?? '',
      /requires an operator from package crunchy-postgres-operator with version in range/,
    );
    t.end();
  },
);
