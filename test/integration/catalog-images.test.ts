// Catalog images read directly by the catalog function (no registry Pod) from a real
// docker-registry: the index built from the image's FBC (olm.csv.metadata bundles, as opm
// renders them), credentials from spec.secrets through htpasswd + TLS, registryPoll picking up
// a newly pushed tag with a HEAD, pod mode per CatalogSource, and each bad input's status.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { objectKey } from '../../shared/bus/subjects.js';
import {
  catalogIndexKind,
  CatalogIndexCache,
  openCatalogStore,
  type CatalogIndexRecord,
} from '../../shared/handoff/index.js';
import { imageModeAnnotation } from '../../functions/catalog/image-source.js';
import {
  catalogFunctionFor,
  catalogSource,
  getCatalogSource,
  type CatalogFixture,
} from '../harness/catalog.js';
import { pushCatalogImage, pushImage } from '../harness/images.js';
import { registryFor } from '../harness/registry.js';
import { smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const ns = 'default';

async function tempFile(t: Test, name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'olmq-catalog-images-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, name), text);
  return join(dir, name);
}

type Status = {
  reason?: string;
  message?: string;
  connectionState?: { address?: string; lastObservedState?: string };
  latestImageRegistryPoll?: string;
  registryService?: unknown;
};

async function status(f: CatalogFixture, name: string): Promise<Status> {
  return (await getCatalogSource(f.client, ns, name)).status ?? {};
}

async function record(f: CatalogFixture, name: string): Promise<CatalogIndexRecord | undefined> {
  const entry = await f.backbone.objects.get(
    objectKey({ cluster: 'c1', kind: catalogIndexKind, namespace: ns, name }),
  );
  return entry === null || entry.operation !== 'PUT' ? undefined : entry.json<CatalogIndexRecord>();
}

async function waitState(
  f: CatalogFixture,
  name: string,
  state: string,
  message?: RegExp,
): Promise<Status> {
  return waitFor(
    `${name} to be ${state}${message === undefined ? '' : ` with ${String(message)}`}`,
    async () => {
      const s = await status(f, name);
      return s.connectionState?.lastObservedState === state &&
        (message === undefined || message.test(s.message ?? ''))
        ? s
        : undefined;
    },
    20_000,
  );
}

t.test(
  'catalog images - a spec.image source is pulled and indexed, with no registry Pod',
  async (t) => {
    const registry = await registryFor(t);
    const pushed = await pushCatalogImage(registry, smallCatalog, {
      packages: ['etcd', 'prometheus'],
    });
    const f = await catalogFunctionFor(t);
    await f.client.create(catalogSource(ns, 'images', { sourceType: 'grpc', image: pushed.image }));
    const s = await waitState(f, 'images', 'READY');
    t.notOk(s.reason, 'no error');
    t.equal(s.connectionState?.address, pushed.image, 'the connection is the image');
    t.equal(s.registryService, undefined, 'no registry Service');
    const rec = await waitFor('the index record', () =>
      record(f, 'images').then((r) => (r?.digest ? r : undefined)),
    );
    t.equal(rec.packages, 2);
    t.ok(rec.healthy);
    const index = await new CatalogIndexCache(await openCatalogStore(f.backbone)).get(
      rec.digest ?? '',
    );
    t.same(index.packages.map((p) => p.name).sort(), ['etcd', 'prometheus']);
    const etcd = index.bundles.find((b) => b.name === 'etcdoperator.v0.9.4');
    t.equal(
      etcd?.image,
      pushed.bundleImages.get('etcdoperator.v0.9.4'),
      'bundles name their bundle images',
    );
    const pods = await f.client.list({ apiVersion: 'v1', kind: 'Pod', namespace: ns });
    t.equal(pods.items.length, 0, 'no registry Pod');
  },
);

t.test(
  'catalog images - htpasswd + TLS registry with the credentials in spec.secrets',
  async (t) => {
    const registry = await registryFor(t, { htpasswd: true, tls: true });
    const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
    // The CA comes in as operators configure it: a file named by OLMQ_REGISTRY_CA_FILES.
    const caFile = await tempFile(t, 'ca.pem', registry.caPem ?? '');
    const f = await catalogFunctionFor(t, { config: { registryCaFiles: [caFile] } });
    await f.client.create(
      catalogSource(ns, 'nocreds', { sourceType: 'grpc', image: pushed.image }),
    );
    const refused = await waitState(f, 'nocreds', 'TRANSIENT_FAILURE');
    t.equal(refused.reason, 'RegistryServerError');
    t.match(
      refused.message,
      `failed to pull catalog image ${pushed.image}: manifest ${pushed.image}: registry ${registry.host} requires credentials (401)`,
    );

    const auth = Buffer.from(`${registry.username ?? ''}:${registry.password ?? ''}`).toString(
      'base64',
    );
    const config = JSON.stringify({ auths: { [registry.host]: { auth } } });
    await f.client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'pull', namespace: ns },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(config).toString('base64') },
    });
    await f.client.create(
      catalogSource(ns, 'private', { sourceType: 'grpc', image: pushed.image, secrets: ['pull'] }),
    );
    const s = await waitState(f, 'private', 'READY');
    t.notOk(s.reason);
    t.equal((await record(f, 'private'))?.packages, 1);

    await f.client.create(
      catalogSource(ns, 'missing', {
        sourceType: 'grpc',
        image: pushed.image,
        secrets: ['absent'],
      }),
    );
    const missing = await waitState(f, 'missing', 'TRANSIENT_FAILURE');
    t.equal(
      missing.message,
      `failed to pull catalog image ${pushed.image}: pull secret ${ns}/absent not found`,
    );
  },
);

t.test(
  'catalog images - credentials only on the ServiceAccount named after the CatalogSource; removed, a 401 status',
  async (t) => {
    const registry = await registryFor(t, { htpasswd: true });
    const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
    const f = await catalogFunctionFor(t);
    const auth = Buffer.from(`${registry.username ?? ''}:${registry.password ?? ''}`).toString(
      'base64',
    );
    const config = JSON.stringify({ auths: { [registry.host]: { auth } } });
    await f.client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sa-pull', namespace: ns },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(config).toString('base64') },
    });
    // Upstream's registry Pod runs as the ServiceAccount named after its CatalogSource.
    await f.client.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'via-sa', namespace: ns },
      imagePullSecrets: [{ name: 'sa-pull' }],
    });
    await f.client.create(
      catalogSource(ns, 'via-sa', {
        sourceType: 'grpc',
        image: pushed.image,
        updateStrategy: { registryPoll: { interval: '1s' } },
      }),
    );
    const s = await waitState(f, 'via-sa', 'READY');
    t.notOk(s.reason, 'pulled with the ServiceAccount pull secret');
    t.equal((await record(f, 'via-sa'))?.packages, 1);

    await f.client.patch(
      { apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'via-sa' },
      'merge',
      { imagePullSecrets: null },
    );
    const refused = await waitState(f, 'via-sa', 'TRANSIENT_FAILURE', /401/);
    t.equal(refused.reason, 'RegistryServerError');
    t.match(
      refused.message,
      `failed to pull catalog image ${pushed.image}: manifest ${pushed.image}: registry ${registry.host} requires credentials (401)`,
    );
  },
);

t.test(
  'catalog images - the operator-wide auth file serves CatalogSources without spec.secrets',
  async (t) => {
    const registry = await registryFor(t, { htpasswd: true });
    const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
    const auth = Buffer.from(`${registry.username ?? ''}:${registry.password ?? ''}`).toString(
      'base64',
    );
    const authFile = await tempFile(
      t,
      'auth.json',
      JSON.stringify({ auths: { [registry.host]: { auth } } }),
    );
    const f = await catalogFunctionFor(t, { config: { registryAuthFile: authFile } });
    await f.client.create(catalogSource(ns, 'wide', { sourceType: 'grpc', image: pushed.image }));
    const s = await waitState(f, 'wide', 'READY');
    t.notOk(s.reason);
  },
);

t.test(
  'catalog images - registryPoll: a HEAD per poll, a rebuild only when the tag moves',
  async (t) => {
    const registry = await registryFor(t);
    const first = await pushCatalogImage(registry, smallCatalog, {
      packages: ['etcd'],
      tag: 'stable',
    });
    const f = await catalogFunctionFor(t);
    await f.client.create(
      catalogSource(ns, 'polled', {
        sourceType: 'grpc',
        image: first.image,
        updateStrategy: { registryPoll: { interval: '1s' } },
      }),
    );
    const ready = await waitState(f, 'polled', 'READY');
    t.ok(ready.latestImageRegistryPoll, 'latestImageRegistryPoll is set');
    const labels = { namespace: ns, name: 'polled' };
    t.equal(await f.metric('catalog_source_snapshots_total', labels), 1);
    // Two more polls with the same digest: the poll time moves, nothing is rebuilt.
    let seen = ready.latestImageRegistryPoll;
    for (let i = 0; i < 2; i++) {
      const later = await waitFor('another poll', async () => {
        const s = await status(f, 'polled');
        return s.latestImageRegistryPoll !== seen ? s : undefined;
      });
      seen = later.latestImageRegistryPoll;
    }
    t.equal(
      await f.metric('catalog_source_snapshots_total', labels),
      1,
      'unchanged digest: no rebuild',
    );

    await pushCatalogImage(registry, smallCatalog, {
      packages: ['etcd', 'prometheus'],
      tag: 'stable',
    });
    const moved = await waitFor('the new tag to be indexed', async () => {
      const r = await record(f, 'polled');
      return r?.packages === 2 ? r : undefined;
    });
    t.ok(moved.healthy);
    t.equal(await f.metric('catalog_source_snapshots_total', labels), 2);
  },
);

t.test(
  'catalog images - pod mode per CatalogSource (annotation) creates upstream registry objects',
  async (t) => {
    const f = await catalogFunctionFor(t);
    const source = catalogSource(ns, 'podded', {
      sourceType: 'grpc',
      image: 'quay.io/example/catalog:v1',
    });
    source.metadata.annotations = { [imageModeAnnotation]: 'pod' };
    await f.client.create(source);
    const pod = await waitFor('a registry pod', async () => {
      const pods = await f.client.list(
        { apiVersion: 'v1', kind: 'Pod', namespace: ns },
        { labelSelector: 'olm.catalogSource=podded' },
      );
      return pods.items[0];
    });
    t.ok(pod.metadata.name?.startsWith('podded-'));
  },
);

t.test('catalog images - bad inputs, each with a specific status message', async (t) => {
  const registry = await registryFor(t);
  const f = await catalogFunctionFor(t);
  const noFbc = await pushImage(registry, 'olmq-test/empty', 'v1', {
    layers: [new Map([['README', 'nothing here']])],
  });
  t.ok(noFbc.digest);
  await pushImage(registry, 'olmq-test/sqlite', 'v1', {
    layers: [new Map([['database/index.db', 'SQLite format 3']])],
    labels: { 'operators.operatorframework.io.index.database.v1': '/database/index.db' },
  });
  await pushImage(registry, 'olmq-test/broken', 'v1', {
    layers: [new Map([['configs/a/catalog.json', '{"schema": "olm.package", ']])],
  });
  const cases: [string, string, RegExp][] = [
    [
      'unknown-tag',
      `${registry.host}/olmq-test/empty:nope`,
      /failed to pull catalog image .*:nope: manifest .*: not found in .* \(MANIFEST_UNKNOWN/,
    ],
    [
      'unreachable',
      '127.0.0.1:9/olmq-test/catalog:v1',
      /failed to pull catalog image 127\.0\.0\.1:9\/olmq-test\/catalog:v1: .*cannot reach 127\.0\.0\.1:9/,
    ],
    [
      'no-fbc',
      `${registry.host}/olmq-test/empty:v1`,
      /catalog image .* has no File-Based Catalog under \/configs \(label operators\.operatorframework\.io\.index\.configs\.v1 not set, default \/configs\)/,
    ],
    [
      'sqlite',
      `${registry.host}/olmq-test/sqlite:v1`,
      /is a SQLite index image .* annotate the CatalogSource olmq\.operatorframework\.io\/catalog-image-mode=pod/,
    ],
    [
      'malformed',
      `${registry.host}/olmq-test/broken:v1`,
      /catalog image .* is not a usable catalog: .*a\/catalog\.json/,
    ],
    ['bad-ref', 'Not A Reference', /invalid image reference "Not A Reference"/],
  ];
  for (const [name, image] of cases)
    await f.client.create(catalogSource(ns, name, { sourceType: 'grpc', image }));
  for (const [name, , message] of cases) {
    const s = await waitState(f, name, 'TRANSIENT_FAILURE', message);
    t.equal(s.reason, 'RegistryServerError', `${name}: RegistryServerError`);
    t.match(s.message, message, `${name}: ${s.message ?? ''}`);
  }
});
