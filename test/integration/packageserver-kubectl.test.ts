// PackageManifests through the devcluster's API aggregation, driven by the real kubectl and
// @kubernetes/client-node, over catalogs built from catalogs/example in JetStream.
import t from 'tap';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import { packageServerFor } from '../harness/packageserver.js';

const smallPackages = [
  'etcd',
  'hawtio-operator',
  'node-healthcheck-operator',
  'node-maintenance-operator',
  'prometheus',
  'self-node-remediation',
];

const missing = kubectlMissing();
if (missing !== undefined) {
  t.fail(missing);
} else {
  const f = await packageServerFor(t);
  const run = (args: string[]) => kubectl(f.fixture, args);

  // Rows of `kubectl get` output: header cells, then each row's cells.
  const table = (stdout: string): string[][] =>
    stdout
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s{2,}/));

  t.test(
    'packageserver - kubectl get lists every package of the global catalog with its CATALOG',
    async (t) => {
      const result = await run(['get', 'packagemanifests', '-n', 'default']);
      t.equal(result.code, 0, result.stderr);
      const [header, ...rows] = table(result.stdout);
      t.same(header, ['NAME', 'CATALOG', 'AGE']);
      t.same(
        rows.map((r) => r[0]),
        smallPackages,
      );
      t.ok(
        rows.every((r) => r[1] === 'Community Operators'),
        'catalog column is the display name',
      );
    },
  );

  t.test(
    'packageserver - a namespace sees its own catalogs plus the global namespace',
    async (t) => {
      const result = await run(['get', 'packagemanifests', '-n', 'team-a', '-o', 'json']);
      t.equal(result.code, 0, result.stderr);
      const list = JSON.parse(result.stdout) as {
        items: {
          metadata: { name: string; namespace: string };
          status: { catalogSource: string };
        }[];
      };
      t.same(
        list.items.map((i) => `${i.metadata.name}@${i.status.catalogSource}`),
        [
          'etcd@team-catalog',
          'etcd@operatorhubio',
          ...smallPackages.slice(1).map((p) => `${p}@operatorhubio`),
        ],
      );
      t.ok(
        list.items.every((i) => i.metadata.namespace === 'team-a'),
        'shown in the request namespace',
      );
    },
  );

  t.test(
    'packageserver - kubectl get -A lists each package in its catalog namespace',
    async (t) => {
      const result = await run(['get', 'packagemanifests', '-A']);
      t.equal(result.code, 0, result.stderr);
      const [header, ...rows] = table(result.stdout);
      t.same(header, ['NAMESPACE', 'NAME', 'CATALOG', 'AGE']);
      t.equal(rows.length, smallPackages.length + 1);
      t.same(
        rows.find((r) => r[0] === 'team-a'),
        ['team-a', 'etcd', 'Team Catalog', rows[0]?.[3]],
      );
    },
  );

  t.test('packageserver - label selector catalog=NAME', async (t) => {
    const result = await run([
      'get',
      'packagemanifests',
      '-n',
      'team-a',
      '-l',
      'catalog=team-catalog',
      '-o',
      'name',
    ]);
    t.equal(result.code, 0, result.stderr);
    t.equal(result.stdout.trim(), 'packagemanifest.packages.operators.coreos.com/etcd');
  });

  t.test('packageserver - field selector metadata.name', async (t) => {
    const result = await run([
      'get',
      'packagemanifests',
      '-n',
      'default',
      '--field-selector',
      'metadata.name=prometheus',
      '-o',
      'name',
    ]);
    t.equal(result.code, 0, result.stderr);
    t.equal(result.stdout.trim(), 'packagemanifest.packages.operators.coreos.com/prometheus');
    const bad = await run([
      'get',
      'packagemanifests',
      '-n',
      'default',
      '--field-selector',
      'status.x=y',
    ]);
    t.not(bad.code, 0);
    t.match(bad.stderr, /field label not supported: status\.x/);
  });

  t.test('packageserver - -o yaml of one package has upstream fields', async (t) => {
    const result = await run(['get', 'packagemanifest', 'etcd', '-n', 'default', '-o', 'yaml']);
    t.equal(result.code, 0, result.stderr);
    const pm = parse(result.stdout) as {
      apiVersion: string;
      kind: string;
      metadata: {
        name: string;
        namespace: string;
        labels: Record<string, string>;
        creationTimestamp: string;
      };
      status: Record<string, unknown> & {
        channels: {
          name: string;
          currentCSV: string;
          currentCSVDesc: Record<string, unknown>;
          entries: { name: string; version?: string }[];
        }[];
      };
    };
    t.equal(pm.apiVersion, 'packages.operators.coreos.com/v1');
    t.equal(pm.kind, 'PackageManifest');
    t.equal(pm.metadata.namespace, 'default');
    t.equal(pm.metadata.creationTimestamp, '2026-01-01T00:00:00Z');
    t.match(pm.metadata.labels, {
      catalog: 'operatorhubio',
      'catalog-namespace': 'olm',
      'olm.catalogSource': 'operatorhubio',
      provider: 'CNCF',
      'operatorframework.io/os.linux': 'supported',
      'operatorframework.io/arch.amd64': 'supported',
    });
    t.match(pm.status, {
      catalogSource: 'operatorhubio',
      catalogSourceDisplayName: 'Community Operators',
      catalogSourcePublisher: 'OperatorHub.io',
      catalogSourceNamespace: 'olm',
      packageName: 'etcd',
      defaultChannel: 'singlenamespace-alpha',
      provider: { name: 'CNCF' },
    });
    t.same(
      pm.status.channels.map((c) => `${c.name}=${c.currentCSV}`),
      [
        'alpha=etcdoperator.v0.6.1',
        'clusterwide-alpha=etcdoperator.v0.9.4-clusterwide',
        'singlenamespace-alpha=etcdoperator.v0.9.4',
      ],
    );
    const head = pm.status.channels[2];
    t.match(head?.currentCSVDesc, {
      displayName: 'etcd',
      version: '0.9.4',
      provider: { name: 'CNCF' },
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: false },
      ],
      customresourcedefinitions: {
        owned: [{ name: 'etcdclusters.etcd.database.coreos.com', kind: 'EtcdCluster' }],
      },
      apiservicedefinitions: {},
      keywords: ['etcd', 'key value', 'database', 'coreos', 'open source'],
      annotations: { 'alm-examples': /EtcdCluster/ },
      relatedImages: [
        'quay.io/coreos/etcd-operator@sha256:66a37fd61a06a43969854ee6d3e21087a98b93838e284a6086b13917f96b0d9b',
      ],
    });
    t.type(head?.currentCSVDesc['description'], 'string');
    t.notOk(
      'icon' in (head?.currentCSVDesc ?? {}),
      'icons are served by the icon subresource only',
    );
    t.same(
      head?.entries.map((e) => e.name),
      ['etcdoperator.v0.9.4', 'etcdoperator.v0.9.2', 'etcdoperator.v0.9.0'],
    );
    t.equal(head?.entries[0]?.version, '0.9.4');
  });

  t.test('packageserver - kubectl describe shows catalog, channels and current CSV', async (t) => {
    const result = await run(['describe', 'packagemanifest', 'prometheus', '-n', 'default']);
    t.equal(result.code, 0, result.stderr);
    t.match(result.stdout, /Name:\s+prometheus/);
    t.match(result.stdout, /Kind:\s+PackageManifest/);
    t.match(result.stdout, /Catalog Source:\s+operatorhubio/);
    t.match(result.stdout, /Current CSV:\s+prometheusoperator\.0\.56\.3/);
    t.match(result.stdout, /Default Channel:\s+beta/);
  });

  t.test('packageserver - a missing package is NotFound as kubectl prints it', async (t) => {
    const result = await run(['get', 'packagemanifest', 'no-such-package', '-n', 'default']);
    t.equal(result.code, 1);
    t.equal(
      result.stderr.trim(),
      'Error from server (NotFound): packagemanifests.packages.operators.coreos.com "no-such-package" not found',
    );
  });

  t.test('packageserver - kubectl api-resources lists packagemanifests', async (t) => {
    const result = await run(['api-resources', '--api-group=packages.operators.coreos.com']);
    t.equal(result.code, 0, result.stderr);
    t.match(
      result.stdout,
      /packagemanifests\s+packages\.operators\.coreos\.com\/v1\s+true\s+PackageManifest/,
    );
  });

  t.test('packageserver - @kubernetes/client-node lists and gets PackageManifests', async (t) => {
    const api = f.fixture.kubeConfig.makeApiClient(CustomObjectsApi);
    const list = (await api.listNamespacedCustomObject({
      group: 'packages.operators.coreos.com',
      version: 'v1',
      namespace: 'default',
      plural: 'packagemanifests',
    })) as { kind: string; items: { metadata: { name: string } }[] };
    t.equal(list.kind, 'PackageManifestList');
    t.same(
      list.items.map((i) => i.metadata.name),
      smallPackages,
    );
    const one = (await api.getNamespacedCustomObject({
      group: 'packages.operators.coreos.com',
      version: 'v1',
      namespace: 'team-a',
      plural: 'packagemanifests',
      name: 'etcd',
    })) as { status: { catalogSource: string } };
    t.equal(one.status.catalogSource, 'team-catalog', 'own namespace first');
  });
}
