// OperatorGroup upgradeStrategy on the devcluster with every olmq function: an upgrade whose
// Deployment the API refuses leaves a Failed CSV; once the catalog offers the next bundle, an
// OperatorGroup with TechPreviewUnsafeFailForward moves the Subscription on to it (the Failed CSV
// and its predecessor are replaced), while one with Default stays where it failed.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { capturingLogger } from '../harness/log.js';
import { getCsv, namespaceWithOperatorGroup, waitForCsvPhase } from '../harness/install.js';
import { smallCatalog } from '../harness/repo.js';
import { systemFor } from '../harness/system.js';
import { waitFor } from '../harness/wait.js';

type Json = Record<string, unknown>;
interface Property {
  type: string;
  value: Json;
}
interface FbcBundle {
  schema: 'olm.bundle';
  name: string;
  package: string;
  image: string;
  properties: Property[];
}

const encode = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64');
const decode = (data: unknown): Json =>
  JSON.parse(Buffer.from(String(data), 'base64').toString('utf8')) as Json;

// etcd v0.9.2 as another version: its CSV renamed, its Deployment named `deployment`.
function variant(base: FbcBundle, version: string, deployment: string, suffix = ''): FbcBundle {
  const name = `etcdoperator.v${version}${suffix}`;
  const properties = base.properties.map((p): Property => {
    if (p.type === 'olm.package') return { ...p, value: { ...p.value, version } };
    if (p.type !== 'olm.bundle.object') return p;
    const object = decode(p.value['data']);
    if (object['kind'] !== 'ClusterServiceVersion') return p;
    const spec = object['spec'] as Json;
    const install = spec['install'] as { spec: { deployments: Json[] } };
    const csv = {
      ...object,
      metadata: { ...(object['metadata'] as Json), name },
      spec: {
        ...spec,
        version,
        replaces: undefined,
        install: {
          ...install,
          spec: {
            ...install.spec,
            deployments: install.spec.deployments.map((d) => ({ ...d, name: deployment })),
          },
        },
      },
    };
    return { ...p, value: { data: encode(csv) } };
  });
  return { ...base, name, properties };
}

/** What fails: the CSV's install (its Deployment), or the InstallPlan (the CSV's name). */
type Failure = 'csv' | 'plan';

async function catalogText(stage: 1 | 2 | 3, failure: Failure): Promise<string> {
  const lines = (await readFile(join(smallCatalog, 'etcd', 'catalog.json'), 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Json);
  const base = lines.find(
    (o) => o['schema'] === 'olm.bundle' && o['name'] === 'etcdoperator.v0.9.2',
  ) as unknown as FbcBundle;
  const good = variant(base, '0.9.2', 'etcd-operator');
  // A Deployment name the API refuses fails the CSV's install; a CSV name it refuses, the plan.
  const broken =
    failure === 'csv'
      ? variant(base, '0.9.3', 'etcd-operator&invalid')
      : variant(base, '0.9.3', 'etcd-operator', '&invalid');
  const fixed = variant(base, '0.9.4', 'etcd-operator');
  // After a failed plan the installed CSV is still v0.9.2: the fix replaces it, skipping v0.9.3.
  const next =
    failure === 'csv'
      ? { name: fixed.name, replaces: broken.name }
      : { name: fixed.name, replaces: good.name, skips: [broken.name] };
  const entries = [
    { name: good.name },
    ...(stage >= 2 ? [{ name: broken.name, replaces: good.name }] : []),
    ...(stage >= 3 ? [next] : []),
  ];
  const bundles = [good, ...(stage >= 2 ? [broken] : []), ...(stage >= 3 ? [fixed] : [])];
  return [
    { schema: 'olm.package', name: 'etcd', defaultChannel: 'stable' },
    { schema: 'olm.channel', package: 'etcd', name: 'stable', entries },
    ...bundles,
  ]
    .map((o) => JSON.stringify(o))
    .join('\n');
}

async function setCatalog(
  client: KubeClient,
  namespace: string,
  stage: 1 | 2 | 3,
  failure: Failure = 'csv',
) {
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'ff-catalog' };
  const data = { 'catalog.json': await catalogText(stage, failure) };
  const existing = await client.get(ref);
  if (existing === undefined) {
    await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: ref.name, namespace },
      data,
    });
  } else {
    await client.update({ ...existing, data });
  }
}

type Subscription = KubeObject & {
  status?: {
    installedCSV?: string;
    currentCSV?: string;
    state?: string;
    installPlanRef?: { name?: string };
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
};

const subscription = (client: KubeClient, namespace: string) =>
  client.get<Subscription>({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    namespace,
    name: 'etcd',
  });

async function upgradeFails(
  client: KubeClient,
  namespace: string,
  upgradeStrategy: string,
  failure: Failure = 'csv',
) {
  await namespaceWithOperatorGroup(client, namespace, {
    targetNamespaces: [namespace],
    upgradeStrategy,
  });
  await setCatalog(client, namespace, 1, failure);
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'ff', namespace },
    spec: { sourceType: 'configmap', configMap: 'ff-catalog' },
  });
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: 'etcd', namespace },
    spec: { name: 'etcd', channel: 'stable', source: 'ff', sourceNamespace: namespace },
  });
  await waitForCsvPhase(client, namespace, 'etcdoperator.v0.9.2', 'Succeeded', undefined, 60_000);
  await setCatalog(client, namespace, 2, failure);
  if (failure === 'csv') {
    await waitForCsvPhase(client, namespace, 'etcdoperator.v0.9.3', 'Failed', undefined, 60_000);
    await waitForCsvPhase(client, namespace, 'etcdoperator.v0.9.2', 'Replacing', undefined, 60_000);
  } else {
    // The plan retries for a minute (upstream's window) before it Failed.
    await waitFor(
      `the ${namespace} InstallPlan of etcdoperator.v0.9.3&invalid to fail`,
      async () => {
        const sub = await subscription(client, namespace);
        const ref = sub?.status?.installPlanRef?.name;
        if (sub?.status?.currentCSV !== 'etcdoperator.v0.9.3&invalid' || ref === undefined) {
          return false;
        }
        const plan = await client.get<KubeObject & { status?: { phase?: string } }>({
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'InstallPlan',
          namespace,
          name: ref,
        });
        return plan?.status?.phase === 'Failed';
      },
      120_000,
    );
  }
  await setCatalog(client, namespace, 3, failure);
}

t.test(
  'fail forward - TechPreviewUnsafeFailForward moves on past a Failed CSV; Default stays',
  async (t) => {
    const { log } = capturingLogger('warn');
    const { client } = await systemFor(t, {
      log,
      backbone: { leaseTtlMs: 2_000 },
      watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
      functions: { host: { baseBackoffMs: 20, contentionDelayMs: 20 }, stopGraceMs: 1_000 },
    });
    await Promise.all([
      upgradeFails(client, 'forward', 'TechPreviewUnsafeFailForward'),
      upgradeFails(client, 'stay', 'Default'),
    ]);

    // TechPreviewUnsafeFailForward: the next bundle replaces the Failed CSV.
    await waitForCsvPhase(client, 'forward', 'etcdoperator.v0.9.4', 'Succeeded', undefined, 60_000);
    const installed = await waitFor(
      'the Subscription to have installed etcdoperator.v0.9.4',
      async () => {
        const sub = await subscription(client, 'forward');
        return sub?.status?.installedCSV === 'etcdoperator.v0.9.4' ? sub : undefined;
      },
      30_000,
    );
    t.equal(installed.status?.currentCSV, 'etcdoperator.v0.9.4');
    await waitFor(
      'the Failed CSV and its predecessor to be gone',
      async () =>
        (await getCsv(client, 'forward', 'etcdoperator.v0.9.3')) === undefined &&
        (await getCsv(client, 'forward', 'etcdoperator.v0.9.2')) === undefined,
      30_000,
    );
    const events = await client.list({ apiVersion: 'v1', kind: 'Event', namespace: 'forward' });
    t.ok(
      events.items.some(
        (e) =>
          (e as { reason?: string }).reason === 'BeingReplaced' &&
          (e as { message?: string }).message ===
            'Fail Forward is enabled, allowing Failed csv to be replaced by csv: etcdoperator.v0.9.4',
      ),
      "upstream's BeingReplaced Event for the Failed CSV",
    );

    // Default: resolution of the new catalog (its message names v0.9.4) refuses to step over
    // the failed upgrade, and says why.
    const held = await waitFor(
      'the Default Subscription to report ResolutionFailed with the new catalog',
      async () => {
        const sub = await subscription(client, 'stay');
        const failed = sub?.status?.conditions?.find(
          (c) => c.type === 'ResolutionFailed' && c.status === 'True',
        );
        return failed?.message?.includes('etcdoperator.v0.9.4') === true ? sub : undefined;
      },
      30_000,
    );
    t.match(
      held.status?.conditions?.find((c) => c.type === 'ResolutionFailed'),
      { reason: 'ConstraintsNotSatisfiable', message: /etcdoperator\.v0\.9\.2/ },
    );
    t.equal(held.status?.currentCSV, 'etcdoperator.v0.9.3', 'still at the failed upgrade');
    t.equal(await getCsv(client, 'stay', 'etcdoperator.v0.9.4'), undefined, 'no next bundle');
    t.equal(
      (await getCsv(client, 'stay', 'etcdoperator.v0.9.3'))?.status?.phase === 'Replacing',
      false,
    );
  },
);

t.test(
  'fail forward - TechPreviewUnsafeFailForward moves on past a Failed InstallPlan; Default stays',
  async (t) => {
    const { log } = capturingLogger('warn');
    const { client } = await systemFor(t, {
      log,
      backbone: { leaseTtlMs: 2_000 },
      watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
      functions: { host: { baseBackoffMs: 20, contentionDelayMs: 20 }, stopGraceMs: 1_000 },
    });
    await Promise.all([
      upgradeFails(client, 'forward', 'TechPreviewUnsafeFailForward', 'plan'),
      upgradeFails(client, 'stay', 'Default', 'plan'),
    ]);
    await waitForCsvPhase(client, 'forward', 'etcdoperator.v0.9.4', 'Succeeded', undefined, 60_000);
    await waitFor(
      'the Subscription to have installed etcdoperator.v0.9.4',
      async () =>
        (await subscription(client, 'forward'))?.status?.installedCSV === 'etcdoperator.v0.9.4',
      30_000,
    );
    // Default: the Subscription is held on its failed plan (both namespaces saw the new catalog
    // at once; the one failing forward has since planned and installed the next bundle).
    const held = await subscription(client, 'stay');
    t.equal(held?.status?.currentCSV, 'etcdoperator.v0.9.3&invalid', 'still at the failed plan');
    t.equal(held?.status?.state, 'UpgradePending');
    t.equal(held?.status?.installedCSV, 'etcdoperator.v0.9.2');
    t.equal(await getCsv(client, 'stay', 'etcdoperator.v0.9.4'), undefined, 'no next bundle');
  },
);
