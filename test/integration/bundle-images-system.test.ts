// Bundles given only by their image (olm.csv.metadata and `image`, as `opm render` writes
// catalogs), with every olmq function on the devcluster and a real local registry: the catalog
// image's packages are listed, a Subscription's bundle is unpacked from its image and its CSV
// Succeeds; through an htpasswd + TLS registry with the credentials in spec.secrets, or on the
// ServiceAccounts upstream's registry and unpack pods run as; and bad
// bundle images end the plan Failed with a specific message, the Subscription BundleUnpackFailed.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import {
  configsLabel,
  pushCatalogImage,
  pushImage,
  type PushedCatalog,
} from '../harness/images.js';
import { waitForCsvPhase } from '../harness/install.js';
import { capturingLogger } from '../harness/log.js';
import { registryFor, type TestRegistry } from '../harness/registry.js';
import { smallCatalog } from '../harness/repo.js';
import { systemFor } from '../harness/system.js';
import { waitFor } from '../harness/wait.js';

const group = 'operators.coreos.com/v1alpha1';
const head = 'etcdoperator.v0.9.4';

type Condition = { type: string; status: string; reason?: string; message?: string };
type Plan = KubeObject & {
  status?: {
    phase?: string;
    message?: string;
    conditions?: Condition[];
    plan?: unknown[];
    bundleLookups?: { path: string; identifier: string; conditions?: Condition[] }[];
  };
};
type Sub = KubeObject & {
  status?: { installPlanRef?: { name?: string }; conditions?: Condition[] };
};

async function startSystem(t: Test) {
  const { log } = capturingLogger('warn');
  return systemFor(t, {
    log,
    backbone: { leaseTtlMs: 2_000 },
    watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
    functions: { host: { baseBackoffMs: 20, contentionDelayMs: 20 }, stopGraceMs: 1_000 },
  });
}

// A namespace with its OperatorGroup, a spec.image CatalogSource and a Subscription to etcd.
async function subscribe(
  client: KubeClient,
  namespace: string,
  image: string,
  secret?: { name: string; config: string },
  annotations: Record<string, string> = {},
): Promise<void> {
  const secrets = secret === undefined ? [] : [secret.name];
  if ((await client.get({ apiVersion: 'v1', kind: 'Namespace', name: namespace })) === undefined)
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await client.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace, annotations },
    spec: { targetNamespaces: [namespace] },
  });
  if (secret !== undefined) await client.create(pullSecret(namespace, secret.name, secret.config));
  await client.create({
    apiVersion: group,
    kind: 'CatalogSource',
    metadata: { name: 'images', namespace },
    spec: { sourceType: 'grpc', image, ...(secrets.length === 0 ? {} : { secrets }) },
  });
  await client.create({
    apiVersion: group,
    kind: 'Subscription',
    metadata: { name: 'etcd', namespace },
    spec: {
      name: 'etcd',
      channel: 'singlenamespace-alpha',
      source: 'images',
      sourceNamespace: namespace,
    },
  });
}

function pullSecret(namespace: string, name: string, config: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(config).toString('base64') },
  };
}

const planOf = async (client: KubeClient, namespace: string): Promise<Plan | undefined> => {
  const sub = await client.get<Sub>({
    apiVersion: group,
    kind: 'Subscription',
    namespace,
    name: 'etcd',
  });
  const name = sub?.status?.installPlanRef?.name;
  return name === undefined
    ? undefined
    : client.get<Plan>({ apiVersion: group, kind: 'InstallPlan', namespace, name });
};

// The catalog of `pushed` again, under another tag, with the head bundle's image replaced.
async function catalogWithHeadImage(
  registry: TestRegistry,
  pushed: PushedCatalog,
  tag: string,
  image: string,
): Promise<string> {
  const objects = pushed.objects.map((o) =>
    o.schema === 'olm.bundle' && o.name === head ? { ...o, image } : o,
  );
  const files = new Map([
    ['configs/etcd/catalog.json', `${objects.map((o) => JSON.stringify(o)).join('\n')}\n`],
  ]);
  await pushImage(registry, 'olmq-test/catalog', tag, {
    layers: [files],
    labels: { [configsLabel]: '/configs' },
  });
  return `${registry.host}/olmq-test/catalog:${tag}`;
}

t.test(
  'bundle images - a bundle from its image installs, its plan records the lookup',
  async (t) => {
    const registry = await registryFor(t);
    const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
    t.ok(
      pushed.objects.every((o) => o.schema !== 'olm.bundle' || o.image !== undefined),
      'the catalog image gives bundles by image only',
    );
    const { client } = await startSystem(t);
    await subscribe(client, 'plain', pushed.image);
    await waitForCsvPhase(client, 'plain', head, 'Succeeded', undefined, 60_000);
    const plan = await planOf(client, 'plain');
    t.equal(plan?.status?.phase, 'Complete');
    t.same(
      plan?.status?.bundleLookups?.map((l) => [l.identifier, l.path, l.conditions]),
      [[head, pushed.bundleImages.get(head), undefined]],
      'status.bundleLookups names the bundle image, no condition left',
    );
    const deployment = await client.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'plain',
      name: 'etcd-operator',
    });
    t.ok(deployment, 'the CSV from the image made its Deployment');
  },
);

t.test(
  'bundle images - htpasswd + TLS registry with the credentials in spec.secrets',
  async (t) => {
    const registry = await registryFor(t, { htpasswd: true, tls: true });
    const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
    // The registry's CA, as an operator would give it (both the catalog and plan functions read it).
    const dir = await mkdtemp(join(tmpdir(), 'olmq-ca-'));
    await writeFile(join(dir, 'ca.pem'), registry.caPem ?? '');
    const before = process.env.OLMQ_REGISTRY_CA_FILES;
    process.env.OLMQ_REGISTRY_CA_FILES = join(dir, 'ca.pem');
    t.teardown(async () => {
      if (before === undefined) delete process.env.OLMQ_REGISTRY_CA_FILES;
      else process.env.OLMQ_REGISTRY_CA_FILES = before;
      await rm(dir, { recursive: true, force: true });
    });
    const auth = Buffer.from(`${registry.username ?? ''}:${registry.password ?? ''}`).toString(
      'base64',
    );
    const config = JSON.stringify({ auths: { [registry.host]: { auth } } });
    const { client } = await startSystem(t);
    await subscribe(client, 'private', pushed.image, { name: 'pull', config });
    await waitForCsvPhase(client, 'private', head, 'Succeeded', undefined, 60_000);
    const plan = await planOf(client, 'private');
    t.equal(plan?.status?.bundleLookups?.[0]?.path, pushed.bundleImages.get(head));
  },
);

t.test(
  "bundle images - credentials only on the ServiceAccounts upstream's pods run as; without them, a 401",
  async (t) => {
    const registry = await registryFor(t, { htpasswd: true });
    const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
    const auth = Buffer.from(`${registry.username ?? ''}:${registry.password ?? ''}`).toString(
      'base64',
    );
    const config = JSON.stringify({ auths: { [registry.host]: { auth } } });
    const { client } = await startSystem(t);
    // The catalog image is pulled as upstream's registry Pod would: ServiceAccount `images`
    // (the CatalogSource's name) holds the secret; the bundle unpack pod runs as `default`.
    const withAccounts = async (namespace: string, bundleCredentials: boolean) => {
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      await client.create(pullSecret(namespace, 'pull', config));
      await client.create({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'images', namespace },
        imagePullSecrets: [{ name: 'pull' }],
      });
      if (!bundleCredentials) return;
      const ref = { apiVersion: 'v1', kind: 'ServiceAccount', namespace, name: 'default' };
      await waitFor(`the default ServiceAccount of ${namespace}`, () => client.get(ref));
      await client.patch(ref, 'merge', { imagePullSecrets: [{ name: 'pull' }] });
    };
    // First the namespace without bundle credentials: a bundle, once unpacked, is served from
    // the store by digest with no pull.
    await withAccounts('sa-without', false);
    await subscribe(client, 'sa-without', pushed.image);
    const failed = await waitFor(
      'the sa-without plan to fail',
      async () => {
        const p = await planOf(client, 'sa-without');
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      60_000,
    );
    const condition = failed.status?.bundleLookups?.[0]?.conditions?.[0];
    t.equal(condition?.type, 'BundleLookupFailed');
    t.match(
      condition?.message,
      `failed to pull bundle image ${pushed.bundleImages.get(head) ?? ''}: manifest `,
    );
    t.match(condition?.message, `registry ${registry.host} requires credentials (401)`);

    await withAccounts('sa-with', true);
    await subscribe(client, 'sa-with', pushed.image);
    await waitForCsvPhase(client, 'sa-with', head, 'Succeeded', undefined, 60_000);
    const plan = await planOf(client, 'sa-with');
    t.equal(plan?.status?.bundleLookups?.[0]?.path, pushed.bundleImages.get(head));
  },
);

t.test('bundle images - bad bundle images fail the plan with a specific message', async (t) => {
  const registry = await registryFor(t);
  const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
  const annotations = 'annotations:\n  operators.operatorframework.io.bundle.package.v1: etcd\n';
  const csv = `apiVersion: ${group}\nkind: ClusterServiceVersion\nmetadata:\n  name: ${head}\n`;
  const noManifests = await pushImage(registry, 'olmq-test/bad', 'no-manifests', {
    layers: [new Map([['metadata/annotations.yaml', annotations]])],
  });
  const noAnnotations = await pushImage(registry, 'olmq-test/bad', 'no-annotations', {
    layers: [new Map([['manifests/csv.yaml', csv]])],
  });
  const corrupt = await pushImage(registry, 'olmq-test/bad', 'corrupt', {
    layers: [
      new Map([
        ['manifests/csv.yaml', csv],
        ['metadata/annotations.yaml', annotations],
      ]),
    ],
  });
  await registry.corruptBlob(corrupt.layers[0] ?? '', Buffer.from('not the layer'));
  const bad = `${registry.host}/olmq-test/bad`;
  const cases = [
    {
      namespace: 'unknown-tag',
      image: `${bad}:missing`,
      message: `failed to pull bundle image ${bad}:missing: manifest ${bad}:missing`,
    },
    {
      namespace: 'no-manifests',
      image: `${bad}@${noManifests.digest}`,
      message: `bundle image ${bad}@${noManifests.digest} has no manifests in /manifests/`,
    },
    {
      namespace: 'no-annotations',
      image: `${bad}@${noAnnotations.digest}`,
      message: `bundle image ${bad}@${noAnnotations.digest} has no metadata/annotations.yaml`,
    },
    {
      namespace: 'digest-mismatch',
      image: `${bad}@${corrupt.digest}`,
      message: `expected ${corrupt.layers[0] ?? ''}`,
    },
  ];
  const { client } = await startSystem(t);
  for (const c of cases) {
    const catalog = await catalogWithHeadImage(registry, pushed, c.namespace, c.image);
    await subscribe(client, c.namespace, catalog);
  }
  for (const c of cases) {
    const plan = await waitFor(
      `the ${c.namespace} plan to fail`,
      async () => {
        const p = await planOf(client, c.namespace);
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      60_000,
    );
    const failed = plan.status?.bundleLookups?.[0]?.conditions?.[0];
    t.equal(failed?.type, 'BundleLookupFailed', c.namespace);
    t.equal(failed?.reason, 'JobFailed', c.namespace);
    t.match(failed?.message, c.message, c.namespace);
    const installed = plan.status?.conditions?.find((x) => x.type === 'Installed');
    t.equal(installed?.reason, 'InstallComponentFailed', c.namespace);
    t.match(installed?.message, `bundle unpacking failed. Reason: JobFailed, and Message: `);
    t.notOk(plan.status?.plan, `${c.namespace}: no steps`);
    const sub = await waitFor(
      `the ${c.namespace} Subscription to say BundleUnpackFailed`,
      async () => {
        const s = await client.get<Sub>({
          apiVersion: group,
          kind: 'Subscription',
          namespace: c.namespace,
          name: 'etcd',
        });
        return s?.status?.conditions?.some((x) => x.type === 'BundleUnpackFailed') === true
          ? s
          : undefined;
      },
      30_000,
    );
    const condition = sub.status?.conditions?.find((x) => x.type === 'BundleUnpackFailed');
    t.equal(condition?.reason, 'BundleUnpackFailed');
    t.match(condition?.message, c.message);
  }
});

t.test(
  'bundle images - an unreachable registry keeps the lookup pending until the unpack timeout',
  async (t) => {
    const registry = await registryFor(t);
    const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
    // A registry that is gone: a port that was free a moment ago.
    const gone = await registryFor(t);
    const unreachable = `${gone.host}/olmq-test/bundle@sha256:${'0'.repeat(64)}`;
    await gone.stop();
    const catalog = await catalogWithHeadImage(registry, pushed, 'unreachable', unreachable);
    const { client } = await startSystem(t);
    await subscribe(client, 'waiting', catalog, undefined, {
      'operatorframework.io/bundle-unpack-timeout': '4s',
    });
    const pending = await waitFor(
      'the lookup to be pending',
      async () => {
        const p = await planOf(client, 'waiting');
        const c = p?.status?.bundleLookups?.[0]?.conditions?.[0];
        return c?.type === 'BundleLookupPending' ? c : undefined;
      },
      30_000,
    );
    t.equal(pending.reason, 'JobIncomplete');
    t.match(
      pending.message,
      `unpack job not completed: failed to pull bundle image ${unreachable}`,
    );
    const unpacking = await waitFor(
      'the Subscription to say BundleUnpacking',
      async () => {
        const s = await client.get<Sub>({
          apiVersion: group,
          kind: 'Subscription',
          namespace: 'waiting',
          name: 'etcd',
        });
        return s?.status?.conditions?.find(
          (c) => c.type === 'BundleUnpacking' && c.status === 'True',
        );
      },
      30_000,
    );
    t.equal(unpacking.reason, 'UnpackingInProgress');
    const failed = await waitFor(
      'the plan to fail after the timeout',
      async () => {
        const p = await planOf(client, 'waiting');
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      30_000,
    );
    const condition = failed.status?.bundleLookups?.[0]?.conditions?.[0];
    t.equal(condition?.type, 'BundleLookupFailed');
    t.equal(condition?.reason, 'DeadlineExceeded');
    t.match(failed.status?.message, 'bundle unpacking failed. Reason: DeadlineExceeded');
  },
);
