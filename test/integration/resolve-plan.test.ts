// The resolve and plan functions on the devcluster with a real nats-server: Subscriptions
// against the real small/ catalog become InstallPlans with upstream's steps, Manual plans wait
// for approval, an unsatisfiable Subscription says why without holding the others back, and a
// Subscription whose CSV appears is AtLatestKnown.
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { functionModules } from '../../functions/index.js';
import type { InstallPlan, Subscription } from '../../shared/api/index.js';
import { loadCatalogDirectory } from '../../shared/catalog/index.js';
import {
  openCatalogStore,
  putCatalogIndexRecord,
  resolutionRecords,
  resolutionRef,
  storeCatalog,
} from '../../shared/handoff/index.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import { getMirrored } from '../../shared/bus/mirror-read.js';
import { KubeClient, type KubeObject } from '../../shared/kube/client.js';
import { FunctionHost } from '../../shared/runtime/function-host.js';
import { createApiRequestCounter, createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { kubectl, type ClusterFixture } from '../harness/devcluster.js';
import { capturingLogger } from '../harness/log.js';
import { smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';
import { stallWatcherWatch, watcherFor } from '../harness/watcher.js';

const globalNamespace = 'olm';
const v1alpha1 = 'operators.coreos.com/v1alpha1';

interface Rig {
  fixture: ClusterFixture;
  client: KubeClient;
  backbone: Backbone;
  /** A counter of the functions' metrics or API requests, summed over `label` = `value`. */
  count: (metric: string, label: string, value: string) => Promise<number>;
}

async function startRig(t: Test): Promise<Rig> {
  const { fixture, client } = await clusterFor(t);
  const backbone = await backboneFor(t, { leaseTtlMs: 5_000 });
  const log = capturingLogger('warn').log;
  await watcherFor(t, fixture, backbone, { log, identity: 'w1' });
  // The catalog: the real small/ catalog, stored as the catalog function stores it.
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: globalNamespace } });
  await client.create({
    apiVersion: v1alpha1,
    kind: 'CatalogSource',
    metadata: { name: 'community', namespace: globalNamespace },
    spec: { sourceType: 'grpc', address: 'localhost:50051', displayName: 'Community' },
  });
  const { index, content } = await loadCatalogDirectory(smallCatalog);
  await storeCatalog(await openCatalogStore(backbone), index, content);
  await putCatalogIndexRecord(backbone, 'c1', {
    namespace: globalNamespace,
    name: 'community',
    digest: index.digest,
    priority: 0,
    displayName: 'Community',
    publisher: '',
    sourceType: 'grpc',
    healthy: true,
    updatedAt: new Date().toISOString(),
    packages: index.packages.length,
    bundles: index.bundles.length,
  });
  const registry = new Registry();
  const metrics = createFunctionMetrics(registry);
  const stopping = new AbortController();
  // The functions' own client, whose requests are counted apart from the test's.
  const functionsClient = await KubeClient.fromKubeConfig('c1', fixture.kubeConfig, {
    userAgent: 'olmq-test-functions',
    requests: createApiRequestCounter(registry),
  });
  t.teardown(() => functionsClient.close());
  const clients = new Map([['c1', functionsClient]]);
  for (const name of ['resolve', 'plan'] as const) {
    const load = functionModules[name];
    if (load === undefined) throw new Error(`${name} is not registered`);
    const started = await (
      await load()
    )({
      backbone,
      clients,
      log,
      registry,
      globalCatalogNamespace: globalNamespace,
      signal: stopping.signal,
    });
    for (const definition of started.definitions) {
      const host = new FunctionHost(
        backbone,
        definition,
        log,
        metrics,
        { concurrency: 4, baseBackoffMs: 50, maxBackoffMs: 500 },
        clients,
      );
      await host.start();
      t.teardown(() => host.stop(2_000));
    }
  }
  t.teardown(() => stopping.abort());
  const count = async (metric: string, label: string, value: string): Promise<number> =>
    ((await registry.getMetricsAsJSON()).find((m) => m.name === metric)?.values ?? [])
      .filter((v) => v.labels[label] === value)
      .reduce((sum, v) => sum + v.value, 0);
  return { fixture, client, backbone, count };
}

async function namespaceWithGroup(client: KubeClient, name: string): Promise<void> {
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await client.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: name },
    spec: { targetNamespaces: [name] },
  });
}

function subscription(
  namespace: string,
  name: string,
  spec: Partial<Subscription['spec']>,
): KubeObject {
  return {
    apiVersion: v1alpha1,
    kind: 'Subscription',
    metadata: { name, namespace },
    spec: { source: 'community', sourceNamespace: globalNamespace, name, ...spec },
  };
}

const getSub = async (client: KubeClient, namespace: string, name: string) =>
  (await client.get({ apiVersion: v1alpha1, kind: 'Subscription', namespace, name })) as unknown as
    Subscription | undefined;

const getPlan = async (client: KubeClient, namespace: string, name: string) =>
  (await client.get({ apiVersion: v1alpha1, kind: 'InstallPlan', namespace, name })) as unknown as
    InstallPlan | undefined;

/** Waits until the Subscription follows an InstallPlan with steps, and returns both. */
async function plannedSubscription(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<{ sub: Subscription; plan: InstallPlan }> {
  return waitFor(
    `subscription ${namespace}/${name} linked to a planned InstallPlan`,
    async () => {
      const sub = await getSub(client, namespace, name);
      const ref = sub?.status?.installPlanRef?.name;
      if (sub === undefined || ref === undefined) return undefined;
      const plan = await getPlan(client, namespace, ref);
      return plan?.status?.plan === undefined ? undefined : { sub, plan };
    },
    30_000,
  );
}

t.test(
  'Subscriptions become InstallPlans; the installed CSV makes them AtLatestKnown',
  async (t) => {
    const { client, fixture } = await startRig(t);
    await namespaceWithGroup(client, 'team-a');
    await client.create(subscription('team-a', 'etcd', { channel: 'singlenamespace-alpha' }));
    // Manual approval, in the same namespace: a plan of its own, which does not hold etcd back.
    await client.create(
      subscription('team-a', 'prometheus', { channel: 'beta', installPlanApproval: 'Manual' }),
    );
    // Nothing provides this package: a clear failure that touches no one else.
    await client.create(subscription('team-a', 'no-such-operator', { channel: 'stable' }));

    const etcd = await plannedSubscription(client, 'team-a', 'etcd');
    t.equal(etcd.sub.status?.state, 'UpgradePending');
    t.equal(etcd.sub.status?.currentCSV, 'etcdoperator.v0.9.4', 'the channel head');
    t.equal(etcd.plan.spec.approval, 'Automatic');
    t.equal(etcd.plan.spec.approved, true);
    t.equal(etcd.plan.status?.phase, 'Installing');
    t.same(etcd.plan.spec.clusterServiceVersionNames, ['etcdoperator.v0.9.4']);
    t.same(etcd.plan.status?.catalogSources, ['community']);
    const steps = etcd.plan.status?.plan ?? [];
    t.equal(steps[0]?.resource.kind, 'ClusterServiceVersion', 'the CSV step comes first');
    t.equal(steps[0]?.resource.name, 'etcdoperator.v0.9.4');
    t.equal(steps[0]?.resource.sourceName, 'community');
    t.equal(steps[0]?.resource.sourceNamespace, globalNamespace);
    t.equal(steps[0]?.status, 'Unknown');
    const csvManifest = JSON.parse(steps[0]?.resource.manifest ?? '{}') as {
      metadata: { namespace?: string; annotations: Record<string, string> };
      spec: { replaces?: string };
    };
    // As upstream: the catalog's replaces edge even on a fresh install (kubectl's REPLACES
    // column), and the CSV in the plan's namespace rather than the bundle's `placeholder`.
    t.equal(csvManifest.spec.replaces, 'etcdoperator.v0.9.2', "the channel entry's replaces");
    t.equal(csvManifest.metadata.namespace, 'team-a', 'the CSV step names the real namespace');
    t.match(
      csvManifest.metadata.annotations['operatorframework.io/properties'],
      /^\{"properties":\[\{"type":"olm\.gvk".*\{"type":"olm\.package"/,
      'the CSV records its properties, olm.gvk before olm.package as upstream',
    );
    t.equal(etcd.plan.metadata.generateName, 'install-', "upstream's generateName");
    t.match(
      JSON.parse(steps[0]?.resource.manifest ?? '{}'),
      { spec: { cleanup: { enabled: false } }, status: { cleanup: {} } },
      'the CSV step carries cleanup as upstream serialises it',
    );
    for (const kind of ['ServiceAccount', 'Role', 'RoleBinding']) {
      const rbac = JSON.parse(
        steps.find((s) => s.resource.kind === kind)?.resource.manifest ?? '{}',
      ) as KubeObject;
      t.notOk('apiVersion' in rbac || 'kind' in rbac, `${kind} step: untyped manifest`);
      t.match(
        rbac.metadata.ownerReferences,
        [{ kind: 'ClusterServiceVersion', name: 'etcdoperator.v0.9.4', controller: false }],
        `${kind} step: owned by its CSV`,
      );
    }
    const crdSteps = steps.filter((s) => s.resource.kind === 'CustomResourceDefinition');
    t.ok(crdSteps.length >= 3, 'the etcd CRDs are steps');
    t.ok(
      steps.findIndex((s) => s.resource.kind === 'CustomResourceDefinition') === 1,
      'CRDs follow the CSV',
    );
    t.equal(etcd.sub.status?.installPlanGeneration, etcd.plan.spec.generation);
    t.match(etcd.sub.status?.catalogHealth, [
      { catalogSourceRef: { name: 'community', namespace: globalNamespace }, healthy: true },
    ]);
    t.match(etcd.sub.status?.conditions, [
      { type: 'CatalogSourcesUnhealthy', status: 'False', reason: 'AllCatalogSourcesHealthy' },
    ]);
    t.same(
      etcd.sub.status?.conditions?.find((c) => c.type === 'BundleUnpacking'),
      { type: 'BundleUnpacking', status: 'False' },
      "upstream's BundleUnpacking=False on a resolved Subscription",
    );

    const prometheus = await plannedSubscription(client, 'team-a', 'prometheus');
    t.not(prometheus.plan.metadata.name, etcd.plan.metadata.name, 'independent plans');
    t.equal(prometheus.plan.spec.approval, 'Manual');
    t.equal(prometheus.plan.spec.approved, false);
    t.equal(prometheus.plan.status?.phase, 'RequiresApproval');
    await waitFor('prometheus InstallPlanPending RequiresApproval', async () =>
      (await getSub(client, 'team-a', 'prometheus'))?.status?.conditions?.some(
        (c) => c.type === 'InstallPlanPending' && c.reason === 'RequiresApproval',
      ),
    );
    // A person approves it the documented way.
    const approve = await kubectl(fixture, [
      'patch',
      'ip',
      prometheus.plan.metadata.name ?? '',
      '-n',
      'team-a',
      '--type',
      'merge',
      '-p',
      '{"spec":{"approved":true}}',
    ]);
    t.equal(approve.code, 0, approve.stderr);

    const failed = await waitFor('ResolutionFailed on the unknown package', async () =>
      (await getSub(client, 'team-a', 'no-such-operator'))?.status?.conditions?.find(
        (c) => c.type === 'ResolutionFailed',
      ),
    );
    t.equal(failed.status, 'True');
    t.equal(failed.reason, 'ConstraintsNotSatisfiable');
    t.notOk(
      (await getSub(client, 'team-a', 'no-such-operator'))?.status?.conditions?.some(
        (c) => c.type === 'BundleUnpacking',
      ),
      'no BundleUnpacking on a Subscription that never resolved (as upstream)',
    );
    t.match(failed.message, /no-such-operator/);
    // As upstream: about the Namespace (so in `default`), from operator-lifecycle-manager.
    const event = await waitFor('a ResolutionFailed Event on the namespace', async () => {
      const list = await client.list({ apiVersion: 'v1', kind: 'Event', namespace: 'default' });
      return list.items.find(
        (e) =>
          (e as { reason?: string }).reason === 'ResolutionFailed' &&
          (e as { involvedObject?: { name?: string } }).involvedObject?.name === 'team-a',
      );
    });
    t.match(event, {
      message: /^constraints not satisfiable: .*no-such-operator/,
      type: 'Warning',
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Namespace',
        name: 'team-a',
        uid: (await client.get({ apiVersion: 'v1', kind: 'Namespace', name: 'team-a' }))?.metadata
          .uid,
      },
      source: { component: 'operator-lifecycle-manager' },
      reportingComponent: 'operator-lifecycle-manager',
    });
    t.equal(
      (await getSub(client, 'team-a', 'no-such-operator'))?.status?.installPlanRef,
      undefined,
      'no plan for it',
    );

    // The install function's part, by hand: the CSV of the plan appears.
    const csv = JSON.parse(steps[0]?.resource.manifest ?? '{}') as KubeObject;
    await client.create({ ...csv, metadata: { ...csv.metadata, namespace: 'team-a' } });
    const installed = await waitFor('etcd AtLatestKnown', async () => {
      const sub = await getSub(client, 'team-a', 'etcd');
      return sub?.status?.state === 'AtLatestKnown' ? sub : undefined;
    });
    t.equal(installed.status?.installedCSV, 'etcdoperator.v0.9.4');
    t.equal(installed.status?.currentCSV, 'etcdoperator.v0.9.4');

    // The same resolution never yields a second plan.
    const plans = await client.list({
      apiVersion: v1alpha1,
      kind: 'InstallPlan',
      namespace: 'team-a',
    });
    t.equal(plans.items.length, 2, 'one plan for etcd, one for prometheus');
  },
);

t.test('startingCSV and an upgrade along the replaces chain', async (t) => {
  const { client } = await startRig(t);
  await namespaceWithGroup(client, 'team-b');
  await client.create(
    subscription('team-b', 'etcd', {
      channel: 'singlenamespace-alpha',
      startingCSV: 'etcdoperator.v0.9.2',
    }),
  );
  const first = await plannedSubscription(client, 'team-b', 'etcd');
  t.same(first.plan.spec.clusterServiceVersionNames, ['etcdoperator.v0.9.2']);
  const csv = JSON.parse(first.plan.status?.plan?.[0]?.resource.manifest ?? '{}') as KubeObject;
  await client.create({ ...csv, metadata: { ...csv.metadata, namespace: 'team-b' } });
  // Installed: the next resolution upgrades along replaces to the head.
  const upgrade = await waitFor(
    'an upgrade plan for etcdoperator.v0.9.4',
    async () => {
      const sub = await getSub(client, 'team-b', 'etcd');
      const ref = sub?.status?.installPlanRef?.name;
      if (ref === undefined || ref === first.plan.metadata.name) return undefined;
      const plan = await getPlan(client, 'team-b', ref);
      return plan?.status?.plan === undefined ? undefined : { sub, plan };
    },
    30_000,
  );
  t.same(upgrade.plan.spec.clusterServiceVersionNames, ['etcdoperator.v0.9.4']);
  t.ok(
    (upgrade.plan.spec.generation ?? 0) > (first.plan.spec.generation ?? 0),
    'a later generation',
  );
  const manifest = JSON.parse(upgrade.plan.status?.plan?.[0]?.resource.manifest ?? '{}') as {
    spec: { replaces?: string };
  };
  t.equal(manifest.spec.replaces, 'etcdoperator.v0.9.2', 'the CSV replaces the installed one');
  t.equal(upgrade.sub?.status?.installedCSV, 'etcdoperator.v0.9.2');
  t.equal(upgrade.sub?.status?.currentCSV, 'etcdoperator.v0.9.4');
  t.equal(upgrade.sub?.status?.state, 'UpgradePending');
});

t.test(
  'plan - regression: CSVs appearing while their plan executes never get a second (stray) plan',
  async (t) => {
    const { client, backbone } = await startRig(t);
    await namespaceWithGroup(client, 'team-d');
    await client.create(
      subscription('team-d', 'node-healthcheck-operator', { channel: 'candidate' }),
    );
    const first = await plannedSubscription(client, 'team-d', 'node-healthcheck-operator');
    const names = [...first.plan.spec.clusterServiceVersionNames].sort();
    t.equal(names.length, 2, 'the operator and the dependency providing its required API');
    // The install function's part, half done: the dependency's CSV appears, the plan runs on.
    const step = first.plan.status?.plan?.find(
      (s) => s.resource.kind === 'ClusterServiceVersion' && s.resource.name !== names[0],
    );
    const csv = JSON.parse(step?.resource.manifest ?? '{}') as KubeObject;
    await client.create({ ...csv, metadata: { ...csv.metadata, namespace: 'team-d' } });
    // Resolution now finds the dependency installed and plans the rest: a smaller group, another name.
    await waitFor('the resolution to no longer install the dependency', async () => {
      const record = await resolutionRecords.read(backbone, resolutionRef('c1', 'team-d'));
      const rest = record?.bundles.filter((b) => b.action !== 'keep').map((b) => b.name);
      return rest?.length === 1 && rest[0] !== csv.metadata.name;
    });
    // Another Subscription makes the plan function decide the namespace again (and visibly).
    await client.create(subscription('team-d', 'etcd', { channel: 'singlenamespace-alpha' }));
    await plannedSubscription(client, 'team-d', 'etcd');
    const plans = await client.list({
      apiVersion: v1alpha1,
      kind: 'InstallPlan',
      namespace: 'team-d',
    });
    t.same(
      (plans.items as unknown as InstallPlan[])
        .map((p) => p.spec.clusterServiceVersionNames)
        .sort(),
      [['etcdoperator.v0.9.4'], first.plan.spec.clusterServiceVersionNames].sort(),
      "the executing plan and etcd's, no plan for the rest of the first",
    );
  },
);

t.test(
  'resolve status - an unhealthy catalog of the namespace makes CatalogSourcesUnhealthy True, with every visible catalog listed',
  async (t) => {
    const { client, backbone } = await startRig(t);
    await namespaceWithGroup(client, 'team-e');
    await client.create({
      apiVersion: v1alpha1,
      kind: 'CatalogSource',
      metadata: { name: 'broken', namespace: 'team-e' },
      spec: { sourceType: 'grpc', address: 'localhost:1' },
    });
    await putCatalogIndexRecord(backbone, 'c1', {
      namespace: 'team-e',
      name: 'broken',
      digest: null,
      priority: 0,
      displayName: '',
      publisher: '',
      sourceType: 'grpc',
      healthy: false,
      updatedAt: new Date().toISOString(),
      packages: 0,
      bundles: 0,
    });
    // The Subscription's own catalog (olm/community) is healthy.
    await client.create(subscription('team-e', 'etcd', { channel: 'singlenamespace-alpha' }));
    const sub = await waitFor('catalog health for both catalogs', async () => {
      const s = await getSub(client, 'team-e', 'etcd');
      return s?.status?.catalogHealth?.length === 2 ? s : undefined;
    });
    t.same(
      sub.status?.catalogHealth
        ?.map((h) => `${h.catalogSourceRef.namespace}/${h.catalogSourceRef.name}=${h.healthy}`)
        .sort(),
      ['olm/community=true', 'team-e/broken=false'],
    );
    t.match(
      sub.status?.conditions?.find((c) => c.type === 'CatalogSourcesUnhealthy'),
      {
        status: 'True',
        reason: 'UnhealthyCatalogSourceFound',
        message: 'catalogsource team-e/broken unhealthy',
      },
    );
  },
);

t.test(
  'resolve - a copied CSV appearing after the Subscription re-resolves it: ResolutionFailed names the operator serving the namespace',
  async (t) => {
    const { client } = await startRig(t);
    await namespaceWithGroup(client, 'team-f');
    await client.create(subscription('team-f', 'etcd', { channel: 'singlenamespace-alpha' }));
    const planned = await plannedSubscription(client, 'team-f', 'etcd');
    // Before this plan runs, the same operator installed for all namespaces elsewhere is copied in.
    const csv = JSON.parse(planned.plan.status?.plan?.[0]?.resource.manifest ?? '{}') as KubeObject;
    await client.create({
      ...csv,
      metadata: {
        ...csv.metadata,
        namespace: 'team-f',
        labels: { ...csv.metadata.labels, 'olm.copiedFrom': 'operators' },
      },
    });
    const failed = await waitFor('ResolutionFailed on etcd', async () =>
      (await getSub(client, 'team-f', 'etcd'))?.status?.conditions?.find(
        (c) => c.type === 'ResolutionFailed',
      ),
    );
    t.match(failed.message, /installed in namespace operators already serves namespace team-f/);
  },
);

t.test(
  'resolve and plan - a change neither decision acts on is decided on the mirror, with no API list',
  async (t) => {
    const { client, backbone, count } = await startRig(t);
    await namespaceWithGroup(client, 'quiet');
    await client.create(subscription('quiet', 'etcd', { channel: 'singlenamespace-alpha' }));
    await plannedSubscription(client, 'quiet', 'etcd');
    // Settled: the plan linked and resolution's catalog health written (the last writes of both).
    await waitFor(
      'etcd with its plan and catalog conditions',
      async () => {
        const types = (await getSub(client, 'quiet', 'etcd'))?.status?.conditions?.map(
          (c) => c.type,
        );
        return types?.includes('InstallPlanPending') === true &&
          types.includes('CatalogSourcesUnhealthy')
          ? true
          : undefined;
      },
      30_000,
    );
    const processed = (fn: string) => count('olmq_work_processed_total', 'function', fn);
    const lists = () => count('olmq_api_requests_total', 'verb', 'list');
    // A label is metadata, which both read: each reconciles, and neither has anything to write.
    const label = async (team: string): Promise<void> => {
      const [planBefore, resolveBefore] = await Promise.all([
        processed('plan'),
        processed('resolve'),
      ]);
      await client.patch(
        { apiVersion: v1alpha1, kind: 'Subscription', namespace: 'quiet', name: 'etcd' },
        'merge',
        { metadata: { labels: { team } } },
      );
      await waitFor(
        `a plan and a resolve reconcile after the label ${team}, the label in the mirror`,
        async () => {
          const mirrored = await getMirrored<Subscription>(backbone, {
            cluster: 'c1',
            kind: 'Subscription',
            namespace: 'quiet',
            name: 'etcd',
          });
          return mirrored?.metadata.labels?.['team'] === team &&
            (await processed('plan')) > planBefore &&
            (await processed('resolve')) > resolveBefore
            ? true
            : undefined;
        },
        30_000,
      );
    };
    // The first lets reconciles of the install's own writes (echoes through the mirror) end.
    await label('one');
    const listsBefore = await lists();
    await label('two');
    t.equal(await lists(), listsBefore, 'no list from the API for decisions that write nothing');
    const sub = await getSub(client, 'quiet', 'etcd');
    t.equal(sub?.status?.state, 'UpgradePending', 'the Subscription still follows its plan');
  },
);

t.test(
  'plan - a status-only decision stands on the mirror once it shows the plan function’s writes',
  async (t) => {
    const { client, fixture, count } = await startRig(t);
    await namespaceWithGroup(client, 'own');
    await client.create(subscription('own', 'etcd', { channel: 'singlenamespace-alpha' }));
    const { plan } = await plannedSubscription(client, 'own', 'etcd');
    const planName = plan.metadata.name ?? '';
    const lists = () => count('olmq_api_requests_total', 'verb', 'list');
    const pendingReason = async () =>
      (await getSub(client, 'own', 'etcd'))?.status?.conditions?.find(
        (c) => c.type === 'InstallPlanPending',
      )?.reason;
    await waitFor('the Subscription pending on its plan', async () =>
      (await pendingReason()) === 'Installing' ? true : undefined,
    );
    // A plan phase the Subscription reports: the plan function writes its condition again.
    const phase = async (to: string): Promise<void> => {
      const current = await getPlan(client, 'own', planName);
      await client.updateStatus({
        ...(current as unknown as KubeObject),
        status: { ...current?.status, phase: to },
      });
      await waitFor(`the Subscription to report the plan ${to}`, async () =>
        (await pendingReason()) === to ? true : undefined,
      );
    };
    // Settle: reconciles of the install's own writes end (with their API reads, if any).
    await phase('RequiresApproval');
    await phase('Installing');
    const settled = await lists();
    await phase('RequiresApproval');
    t.equal(await lists(), settled, 'no list from the API: the mirror shows the last writes');

    // The Subscription watch goes quiet: the plan function's next write stays out of the mirror.
    const stall = await stallWatcherWatch(fixture, 'operators.coreos.com/subscriptions');
    const beforeStalled = await lists();
    await phase('Installing');
    // That decision read a mirror holding the plan function's earlier writes: no list.
    t.equal(
      await lists(),
      beforeStalled,
      'the write made during the stall was decided on the mirror',
    );
    // The mirror still shows the condition before it (RequiresApproval): this decision writes,
    // on a mirror that lacks the plan function's last write, so it reads the API.
    await phase('Planning');
    t.ok(
      (await lists()) > beforeStalled,
      'the next decision, on a mirror lacking that write, read the API',
    );
    stall.end();
  },
);

t.test(
  'resolve - a status-only decision stands on the mirror once it shows resolve’s own writes',
  async (t) => {
    const { client, count } = await startRig(t);
    await namespaceWithGroup(client, 'res');
    await client.create(subscription('res', 'etcd', { channel: 'singlenamespace-alpha' }));
    await plannedSubscription(client, 'res', 'etcd');
    const failure = async () =>
      (await getSub(client, 'res', 'etcd'))?.status?.conditions?.find(
        (c) => c.type === 'ResolutionFailed',
      );
    // A Subscription asking for a package the catalog lacks, and back: resolve writes its
    // ResolutionFailed condition each time, every write after its previous one is mirrored.
    const ask = async (name: string, failed: boolean): Promise<void> => {
      await client.patch(
        { apiVersion: v1alpha1, kind: 'Subscription', namespace: 'res', name: 'etcd' },
        'merge',
        { spec: { name } },
      );
      await waitFor(`ResolutionFailed ${failed ? 'set' : 'cleared'} for ${name}`, async () => {
        const c = await failure();
        return (failed ? c?.status === 'True' : c?.status !== 'True') ? true : undefined;
      });
    };
    const lists = () => count('olmq_api_requests_total', 'verb', 'list');
    await ask('no-such-package', true);
    await ask('etcd', false);
    const settled = await lists();
    await ask('no-such-package', true);
    await ask('etcd', false);
    t.equal(await lists(), settled, 'no list from the API: the mirror showed resolve’s writes');
  },
);
