// The catalog function against a devcluster and a real nats-server: every source type with
// real catalogs, upstream's status, no churn for unchanged content, bad specs.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { objectKey } from '../../shared/bus/subjects.js';
import {
  buildCatalogIndex,
  readCatalogDirectory,
  type CatalogIndex,
} from '../../shared/catalog/index.js';
import {
  catalogIndexKind,
  CatalogIndexCache,
  openCatalogStore,
  type CatalogIndexRecord,
} from '../../shared/handoff/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  catalogFunctionFor,
  catalogSource,
  configMapFormatOf,
  getCatalogSource,
  registryStandIn,
  type CatalogFixture,
} from '../harness/catalog.js';
import { loadRegistryCatalog, startRegistryServer } from '../../shared/registry/index.js';
import { smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const small = smallCatalog;
const ns = 'default';

type Status = {
  reason?: string;
  message?: string;
  connectionState?: { address?: string; lastObservedState?: string; lastConnect?: string };
  registryService?: Record<string, string>;
  configMapReference?: Record<string, string>;
  latestImageRegistryPoll?: string;
};

async function status(f: CatalogFixture, name: string): Promise<Status> {
  return (await getCatalogSource(f.client, ns, name)).status ?? {};
}

async function record(f: CatalogFixture, name: string) {
  const entry = await f.backbone.objects.get(
    objectKey({ cluster: 'c1', kind: catalogIndexKind, namespace: ns, name }),
  );
  if (entry === null || entry.operation !== 'PUT') return undefined;
  return { revision: entry.revision, value: entry.json<CatalogIndexRecord>() };
}

async function waitReady(f: CatalogFixture, name: string): Promise<Status> {
  return waitFor(`${name} to be READY`, async () => {
    const s = await status(f, name);
    return s.connectionState?.lastObservedState === 'READY' ? s : undefined;
  });
}

async function loadIndex(f: CatalogFixture, digest: string): Promise<CatalogIndex> {
  return new CatalogIndexCache(await openCatalogStore(f.backbone)).get(digest);
}

function configMap(name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

// Waits until the function has processed at least one more work item than before.
async function processedAfter(f: CatalogFixture, before: number): Promise<void> {
  await waitFor(
    'another reconcile',
    async () => (await f.metric('olmq_work_processed_total')) > before,
  );
}

t.test(
  'catalog function - a configmap source built from a real package serves the same channels as its FBC',
  async (t) => {
    const f = await catalogFunctionFor(t);
    await f.client.create(configMap('etcd-cm', await configMapFormatOf(join(small, 'etcd'))));
    await f.client.create(
      catalogSource(ns, 'etcd', { sourceType: 'configmap', configMap: 'etcd-cm', priority: 5 }),
    );
    const s = await waitReady(f, 'etcd');
    t.notOk(s.reason, 'no error reason');
    const cm = await f.client.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
      name: 'etcd-cm',
    });
    const owner = (await getCatalogSource(f.client, ns, 'etcd')).metadata.uid;
    t.equal(
      cm?.metadata.labels?.['olm.managed'],
      'false',
      'the ConfigMap is labelled as upstream adopts it',
    );
    t.ok(
      cm?.metadata.ownerReferences?.some((r) => r.kind === 'CatalogSource' && r.uid === owner),
      'and owned by the CatalogSource',
    );
    t.match(s.configMapReference, {
      name: 'etcd-cm',
      namespace: ns,
      uid: cm?.metadata.uid,
      resourceVersion: cm?.metadata.resourceVersion,
    });
    t.ok(s.configMapReference?.['lastUpdateTime'], 'lastUpdateTime set');
    const rec = await waitFor('the index record', () => record(f, 'etcd'));
    t.match(rec.value, {
      namespace: ns,
      name: 'etcd',
      priority: 5,
      sourceType: 'configmap',
      healthy: true,
      global: false,
      packages: 1,
    });
    const index = await loadIndex(f, rec.value.digest ?? '');
    const fbc = buildCatalogIndex(await readCatalogDirectory(join(small, 'etcd'))).index;
    const channels = (i: CatalogIndex) =>
      i.channelsOf('etcd').map((c) => ({
        name: c.name,
        head: c.head,
        entries: c.entries.map((e) => [e.name, e.replaces]),
      }));
    t.same(channels(index), channels(fbc), 'channels, heads and replaces chains as in the FBC');
    t.equal(index.getPackage('etcd')?.defaultChannel, 'singlenamespace-alpha');
    t.same(
      index
        .getBundle('etcd', 'etcdoperator.v0.9.4')
        ?.providedApis.map((a) => a.kind)
        .sort(),
      ['EtcdBackup', 'EtcdCluster', 'EtcdRestore'],
      'provided APIs from the owned CRDs',
    );
    t.equal(await f.metric('catalogsource_ready', { name: 'etcd', namespace: ns }), 1);
    t.equal(await f.metric('catalog_source_count'), 1);
  },
);

t.test('catalog function - unchanged content makes no new index and no status write', async (t) => {
  const f = await catalogFunctionFor(t);
  await f.client.create(configMap('etcd-cm', await configMapFormatOf(join(small, 'etcd'))));
  await f.client.create(
    catalogSource(ns, 'etcd', { sourceType: 'configmap', configMap: 'etcd-cm' }),
  );
  await waitReady(f, 'etcd');
  const first = await waitFor('the record', () => record(f, 'etcd'));
  const snapshots = await f.metric('catalog_source_snapshots_total');
  // Touch the CatalogSource (a label): it is reconciled again, but nothing changed.
  const before = await getCatalogSource(f.client, ns, 'etcd');
  const touched = await f.client.update({
    ...before,
    metadata: { ...before.metadata, labels: { touched: 'yes' } },
  });
  const processed = await f.metric('olmq_work_processed_total');
  await processedAfter(f, processed);
  const after = await getCatalogSource(f.client, ns, 'etcd');
  t.equal(after.metadata.resourceVersion, touched.metadata.resourceVersion, 'no status write');
  t.equal((await record(f, 'etcd'))?.revision, first.revision, 'the record is not rewritten');
  t.equal(
    await f.metric('catalog_source_snapshots_total'),
    snapshots,
    'the ConfigMap was not indexed again',
  );
});

t.test(
  'catalog function - a new bundle in a changed ConfigMap gives a new digest and record',
  async (t) => {
    const f = await catalogFunctionFor(t);
    await f.client.create(
      configMap('etcd-cm', await configMapFormatOf(join(small, 'etcd'), ['etcdoperator.v0.9.4'])),
    );
    await f.client.create(
      catalogSource(ns, 'etcd', { sourceType: 'configmap', configMap: 'etcd-cm' }),
    );
    await waitReady(f, 'etcd');
    const first = await waitFor('the record', () => record(f, 'etcd'));
    t.notOk(
      (await loadIndex(f, first.value.digest ?? '')).getBundle('etcd', 'etcdoperator.v0.9.4'),
    );
    const cm = await f.client.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
      name: 'etcd-cm',
    });
    await f.client.update({
      ...(cm as KubeObject),
      data: await configMapFormatOf(join(small, 'etcd')),
    });
    const second = await waitFor('a new digest', async () => {
      const r = await record(f, 'etcd');
      return r !== undefined && r.value.digest !== first.value.digest ? r : undefined;
    });
    const index = await loadIndex(f, second.value.digest ?? '');
    t.equal(
      index.channelHead('etcd', 'singlenamespace-alpha')?.name,
      'etcdoperator.v0.9.4',
      'the new head is served',
    );
    const s = await waitFor('the new resourceVersion in status', async () => {
      const current = await f.client.get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: ns,
        name: 'etcd-cm',
      });
      const st = await status(f, 'etcd');
      return st.configMapReference?.['resourceVersion'] === current?.metadata.resourceVersion
        ? st
        : undefined;
    });
    t.equal(s.connectionState?.lastObservedState, 'READY');
  },
);

t.test('catalog function - a ConfigMap holding File-Based Catalog JSON is served', async (t) => {
  const f = await catalogFunctionFor(t);
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(join(small, 'etcd', 'catalog.json'), 'utf8');
  await f.client.create(configMap('fbc', { 'catalog.json': text }));
  await f.client.create(catalogSource(ns, 'fbc', { sourceType: 'configmap', configMap: 'fbc' }));
  await waitReady(f, 'fbc');
  const rec = await waitFor('the record', () => record(f, 'fbc'));
  t.match(rec.value, { packages: 1, bundles: 6, healthy: true });
  const fbc = buildCatalogIndex(await readCatalogDirectory(join(small, 'etcd'))).index;
  t.equal(rec.value.digest, fbc.digest, 'same content, same digest as the directory');
});

t.test('catalog function - bad specs get upstream reasons and messages, and recover', async (t) => {
  const f = await catalogFunctionFor(t);
  await f.client.create(catalogSource(ns, 'odd', { sourceType: 'odd' }));
  await f.client.create(catalogSource(ns, 'nocm', { sourceType: 'configmap' }));
  await f.client.create(catalogSource(ns, 'nogrpc', { sourceType: 'grpc' }));
  await f.client.create(
    catalogSource(ns, 'missing', { sourceType: 'internal', configMap: 'later' }),
  );
  const reasonOf = (name: string, reason: string) =>
    waitFor(`${name} to report ${reason}`, async () => {
      const s = await status(f, name);
      return s.reason === reason ? s : undefined;
    });
  t.equal((await reasonOf('odd', 'SpecInvalidError')).message, 'unknown sourcetype: odd');
  t.equal(
    (await reasonOf('nocm', 'SpecInvalidError')).message,
    'configmap name unset: must be set for sourcetype: configmap',
  );
  t.equal(
    (await reasonOf('nogrpc', 'SpecInvalidError')).message,
    'image and address unset: at least one must be set for sourcetype: grpc',
  );
  t.equal(
    (await reasonOf('missing', 'ConfigMapError')).message,
    'failed to get catalog config map later: configmaps "later" not found',
  );
  t.match(await record(f, 'odd'), { value: { healthy: false, digest: null } });
  // The ConfigMap appears: the retry picks it up.
  await f.client.create(configMap('later', await configMapFormatOf(join(small, 'etcd'))));
  const s = await waitReady(f, 'missing');
  t.notOk(s.reason, 'the error is cleared');
  t.equal(await f.metric('catalogsource_ready', { name: 'odd' }), 0);
});

t.test('catalog function - an unusable ConfigMap says what and why', async (t) => {
  const f = await catalogFunctionFor(t);
  await f.client.create(configMap('broken', { packages: '- packageName: [unclosed' }));
  await f.client.create(
    catalogSource(ns, 'broken', { sourceType: 'configmap', configMap: 'broken' }),
  );
  const s = await waitFor('ConfigMapError', async () => {
    const st = await status(f, 'broken');
    return st.reason === 'ConfigMapError' ? st : undefined;
  });
  t.match(s.message, /^configmap broken is not a usable catalog: key packages is not valid YAML/);
  t.equal(s.connectionState?.lastObservedState, 'TRANSIENT_FAILURE');
});

t.test(
  'catalog function - an unreachable grpc address is TRANSIENT_FAILURE with a clear message, and recovers',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'olmq-catalog-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    await cp(join(small, 'etcd'), join(dir, 'etcd'), { recursive: true });
    const registry = registryStandIn('registry.example:50051', dir);
    registry.state.reachable = false;
    const f = await catalogFunctionFor(t, { fetchCatalog: registry.fetch });
    await f.client.create(
      catalogSource(ns, 'remote', { sourceType: 'grpc', address: 'registry.example:50051' }),
    );
    const failed = await waitFor('TRANSIENT_FAILURE', async () => {
      const s = await status(f, 'remote');
      return s.connectionState?.lastObservedState === 'TRANSIENT_FAILURE' ? s : undefined;
    });
    t.equal(failed.reason, 'RegistryServerError');
    t.match(
      failed.message,
      /^couldn't connect to registry at registry\.example:50051: connection refused/,
    );
    t.match(failed.connectionState, { address: 'registry.example:50051' });
    t.match(failed.registryService, { protocol: 'grpc' });
    registry.state.reachable = true;
    const ready = await waitReady(f, 'remote');
    t.notOk(ready.reason, 'recovered: no reason');
    t.notOk(ready.message, 'recovered: no message');
    t.match(await record(f, 'remote'), { value: { healthy: true, packages: 1 } });
  },
);

t.test(
  'catalog function - the registry client reports a closed port as an unreachable registry',
  async (t) => {
    const f = await catalogFunctionFor(t);
    await f.client.create(
      catalogSource(ns, 'remote', { sourceType: 'grpc', address: 'localhost:1' }),
    );
    const s = await waitFor('TRANSIENT_FAILURE', async () => {
      const st = await status(f, 'remote');
      return st.connectionState?.lastObservedState === 'TRANSIENT_FAILURE' ? st : undefined;
    });
    t.match(s.message, /^couldn't connect to registry at localhost:1: /);
  },
);

t.test('catalog function - a polled grpc source picks up a new package', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'olmq-catalog-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(join(small, 'etcd'), join(dir, 'etcd'), { recursive: true });
  const registry = registryStandIn('registry.example:50051', dir);
  const f = await catalogFunctionFor(t, { fetchCatalog: registry.fetch });
  await f.client.create(
    catalogSource(ns, 'polled', {
      sourceType: 'grpc',
      address: 'registry.example:50051',
      updateStrategy: { registryPoll: { interval: '500ms' } },
    }),
  );
  await waitReady(f, 'polled');
  const first = await waitFor('the record', () => record(f, 'polled'));
  const readyStatus = await getCatalogSource(f.client, ns, 'polled');
  await cp(join(small, 'self-node-remediation'), join(dir, 'self-node-remediation'), {
    recursive: true,
  });
  const second = await waitFor('a new digest after the poll', async () => {
    const r = await record(f, 'polled');
    return r !== undefined && r.value.digest !== first.value.digest ? r : undefined;
  });
  t.equal(second.value.packages, 2);
  t.ok((await loadIndex(f, second.value.digest ?? '')).getPackage('self-node-remediation'));
  const fetches = registry.state.fetches;
  await waitFor('further polls', () => registry.state.fetches > fetches + 1);
  t.equal(
    (await getCatalogSource(f.client, ns, 'polled')).metadata.resourceVersion,
    readyStatus.metadata.resourceVersion,
    'polls of an address source do not rewrite the status',
  );
});

t.test('catalog function - an image source gets upstream registry objects, once', async (t) => {
  // The registry pod cannot run in the devcluster: the registry Service is mapped to a real
  // `api.Registry` server serving the same catalog locally, reached with the real client.
  const served = await startRegistryServer({
    catalog: (await loadRegistryCatalog(join(small, 'etcd'))).catalog,
    host: '127.0.0.1',
    port: 0,
  });
  t.teardown(() => served.stop());
  const f = await catalogFunctionFor(t, {
    // Upstream's pod mode (the default reads images directly).
    config: {
      imageMode: 'pod',
      registryAddresses: new Map([[`${ns}/my-catalog`, served.address]]),
    },
  });
  await f.client.create(
    catalogSource(ns, 'my.catalog', {
      sourceType: 'grpc',
      image: 'quay.io/example/catalog:v1',
      secrets: ['pull'],
    }),
  );
  const s = await waitReady(f, 'my.catalog');
  t.match(s.registryService, {
    protocol: 'grpc',
    serviceName: 'my-catalog',
    serviceNamespace: ns,
    port: '50051',
  });
  t.equal(s.connectionState?.address, `my-catalog.${ns}.svc:50051`);
  const owner = await getCatalogSource(f.client, ns, 'my.catalog');
  const pods = await f.client.list(
    { apiVersion: 'v1', kind: 'Pod', namespace: ns },
    { labelSelector: 'olm.catalogSource=my.catalog' },
  );
  t.equal(pods.items.length, 1, 'one registry pod');
  const pod = pods.items[0] as KubeObject & {
    spec: { containers: Record<string, unknown>[]; serviceAccountName: string };
  };
  t.match(pod.metadata, {
    name: /^my\.catalog-/,
    labels: {
      'olm.catalogSource': 'my.catalog',
      'olm.managed': 'true',
      'olm.pod-spec-hash': /\w+/,
    },
    annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' },
  });
  t.match(pod.metadata.ownerReferences, [
    { kind: 'CatalogSource', uid: owner.metadata.uid, controller: true },
  ]);
  t.match(pod.spec.containers[0], {
    name: 'registry-server',
    image: 'quay.io/example/catalog:v1',
    ports: [{ name: 'grpc', containerPort: 50051 }],
    readinessProbe: { exec: { command: ['grpc_health_probe', '-addr=:50051'] } },
  });
  t.equal(pod.spec.serviceAccountName, 'my.catalog');
  const service = await f.client.get({
    apiVersion: 'v1',
    kind: 'Service',
    namespace: ns,
    name: 'my-catalog',
  });
  t.match(service, {
    spec: {
      ports: [{ name: 'grpc', port: 50051 }],
      selector: { 'olm.catalogSource': 'my.catalog' },
    },
  });
  // The devcluster serves networking.k8s.io/v1: upstream's two NetworkPolicies are made there.
  const policyNamed = (name: string) =>
    f.client.get({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      namespace: ns,
      name,
    });
  const grpcPolicy = await waitFor('the grpc-server NetworkPolicy', () =>
    policyNamed('my.catalog-grpc-server'),
  );
  t.match(grpcPolicy, {
    metadata: {
      labels: { 'olm.catalogSource': 'my.catalog', 'olm.managed': 'true' },
      ownerReferences: [{ kind: 'CatalogSource', uid: owner.metadata.uid }],
    },
    spec: {
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ ports: [{ protocol: 'TCP', port: 50051 }] }],
    },
  });
  const unpackPolicy = await waitFor('the unpack-bundles NetworkPolicy', () =>
    policyNamed('my.catalog-unpack-bundles'),
  );
  t.match(unpackPolicy, { spec: { policyTypes: ['Ingress', 'Egress'], egress: [{}] } });
  const sa = await f.client.get({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    namespace: ns,
    name: 'my.catalog',
  });
  t.match(sa, { imagePullSecrets: [{ name: 'pull' }] });

  // More reconciles (a touched spec field that does not concern the pod) keep the same pod.
  const touched = await f.client.update({
    ...owner,
    spec: { ...(owner['spec'] as object), displayName: 'Mine' },
  });
  t.ok(touched);
  await waitFor(
    'the display name in the record',
    async () => (await record(f, 'my.catalog'))?.value.displayName === 'Mine',
  );
  const again = await f.client.list(
    { apiVersion: 'v1', kind: 'Pod', namespace: ns },
    { labelSelector: 'olm.catalogSource=my.catalog' },
  );
  t.same(
    again.items.map((p) => p.metadata.uid),
    [pod.metadata.uid],
    'the pod was not recreated',
  );
  const svcAgain = await f.client.get({
    apiVersion: 'v1',
    kind: 'Service',
    namespace: ns,
    name: 'my-catalog',
  });
  t.equal(svcAgain?.metadata.uid, service?.metadata.uid, 'the Service was not recreated');
  const grpcAgain = await policyNamed('my.catalog-grpc-server');
  t.equal(
    grpcAgain?.metadata.resourceVersion,
    grpcPolicy.metadata.resourceVersion,
    'the NetworkPolicy was not rewritten',
  );

  // A deleted registry pod is recreated at once (the Pod mirror triggers the catalog).
  await f.client.delete({ apiVersion: 'v1', kind: 'Pod', namespace: ns, name: pod.metadata.name });
  const recreated = await waitFor('a new registry pod', async () => {
    const list = await f.client.list(
      { apiVersion: 'v1', kind: 'Pod', namespace: ns },
      { labelSelector: 'olm.catalogSource=my.catalog' },
    );
    return list.items.length === 1 && list.items[0]?.metadata.uid !== pod.metadata.uid
      ? list.items[0]
      : undefined;
  });
  t.ok(recreated, 'recreated after deletion');

  // A new image replaces the pod.
  const current = await getCatalogSource(f.client, ns, 'my.catalog');
  await f.client.update({
    ...current,
    spec: { ...(current['spec'] as object), image: 'quay.io/example/catalog:v2' },
  });
  const replaced = await waitFor('a pod with the new image', async () => {
    const list = await f.client.list(
      { apiVersion: 'v1', kind: 'Pod', namespace: ns },
      { labelSelector: 'olm.catalogSource=my.catalog' },
    );
    const images = list.items.map(
      (p) => (p['spec'] as { containers: { image: string }[] }).containers[0]?.image,
    );
    return list.items.length === 1 && images[0] === 'quay.io/example/catalog:v2'
      ? list.items
      : undefined;
  });
  t.not(replaced[0]?.metadata.uid, pod.metadata.uid);
  await waitReady(f, 'my.catalog');
});

t.test('catalog function - a deleted CatalogSource loses its record', async (t) => {
  const f = await catalogFunctionFor(t);
  await f.client.create(configMap('etcd-cm', await configMapFormatOf(join(small, 'etcd'))));
  await f.client.create(
    catalogSource(ns, 'etcd', { sourceType: 'configmap', configMap: 'etcd-cm' }),
  );
  await waitReady(f, 'etcd');
  await waitFor('the record', () => record(f, 'etcd'));
  await f.client.delete({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    namespace: ns,
    name: 'etcd',
  });
  await waitFor('the record to go', async () => (await record(f, 'etcd')) === undefined);
  t.equal(await f.metric('catalog_source_count'), 0);
});
