// Behaviour the side-by-side comparison with upstream OLM v0.26.0 found different, checked on the
// devcluster through every olmq function: a Manual upgrade records no ResolutionFailed (the CSV
// being replaced is no operator without a Subscription); a dependency Subscription links the
// plan that created it without an installPlanGeneration; a CSV records its bundle's properties
// in the catalog's order, escaped as Go writes JSON.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { getCsv, namespaceWithOperatorGroup, waitForCsvPhase } from '../harness/install.js';
import { pipelineFor } from '../harness/pipeline.js';
import { smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const v1alpha1 = 'operators.coreos.com/v1alpha1';

interface SubscriptionObject extends KubeObject {
  status?: {
    installedCSV?: string;
    currentCSV?: string;
    installPlanRef?: { name?: string };
    installPlanGeneration?: number;
    conditions?: { type: string; status: string }[];
  };
}

interface PlanObject extends KubeObject {
  spec: { clusterServiceVersionNames: string[]; approved: boolean; generation?: number };
  status?: { phase?: string; plan?: { resource: { kind: string; manifest?: string } }[] };
}

async function subscribe(
  client: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await client.create({
    apiVersion: v1alpha1,
    kind: 'Subscription',
    metadata: { name, namespace },
    spec: { source: 'community', sourceNamespace: 'olm', ...spec },
  });
}

const getSubscription = (client: KubeClient, namespace: string, name: string) =>
  client.get<SubscriptionObject>({ apiVersion: v1alpha1, kind: 'Subscription', namespace, name });

/** Waits for a plan of the namespace installing `csv` that requires approval, then approves it. */
async function approvePlanFor(client: KubeClient, namespace: string, csv: string): Promise<string> {
  const plan = await waitFor(
    `an InstallPlan for ${csv} requiring approval`,
    async () =>
      (
        await client.list<PlanObject>({ apiVersion: v1alpha1, kind: 'InstallPlan', namespace })
      ).items.find(
        (ip) =>
          ip.status?.phase === 'RequiresApproval' &&
          ip.spec.clusterServiceVersionNames.includes(csv),
      ),
    30_000,
  );
  await client.patch(
    { apiVersion: v1alpha1, kind: 'InstallPlan', namespace, name: plan.metadata.name ?? '' },
    'merge',
    { spec: { approved: true } },
  );
  return plan.metadata.name ?? '';
}

t.test(
  'parity - a Manual upgrade from a startingCSV records no ResolutionFailed while the old CSV is replaced',
  async (t) => {
    const { client } = await pipelineFor(t);
    await namespaceWithOperatorGroup(client, 'team-b');
    await subscribe(client, 'team-b', 'etcd', {
      name: 'etcd',
      channel: 'singlenamespace-alpha',
      installPlanApproval: 'Manual',
      startingCSV: 'etcdoperator.v0.9.2',
    });
    await approvePlanFor(client, 'team-b', 'etcdoperator.v0.9.2');
    await waitForCsvPhase(client, 'team-b', 'etcdoperator.v0.9.2', 'Succeeded', undefined, 60_000);
    await approvePlanFor(client, 'team-b', 'etcdoperator.v0.9.4');
    await waitForCsvPhase(client, 'team-b', 'etcdoperator.v0.9.4', 'Succeeded', undefined, 60_000);
    await waitFor(
      'etcdoperator.v0.9.2 to be gone',
      async () => (await getCsv(client, 'team-b', 'etcdoperator.v0.9.2')) === undefined,
      30_000,
    );
    const events = await client.list<
      KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } }
    >({ apiVersion: 'v1', kind: 'Event', namespace: 'default' });
    t.same(
      events.items
        .filter((e) => e.reason === 'ResolutionFailed' && e.involvedObject?.name === 'team-b')
        .map((e) => e.message),
      [],
      'no ResolutionFailed Event about team-b',
    );
    const sub = await getSubscription(client, 'team-b', 'etcd');
    t.equal(sub?.status?.installedCSV, 'etcdoperator.v0.9.4');
    t.equal(
      sub?.status?.conditions?.some((c) => c.type === 'ResolutionFailed' && c.status === 'True'),
      false,
    );
    t.equal(sub?.status?.installPlanGeneration, 2, 'the second plan of the namespace');
  },
);

t.test(
  'parity - a dependency Subscription links its plan without installPlanGeneration; properties keep the catalog order',
  async (t) => {
    const { client } = await pipelineFor(t);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nhc' } });
    await client.create({
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'global', namespace: 'nhc' },
      spec: {},
    });
    // node-healthcheck-operator 0.8.0 requires the GVK SelfNodeRemediation: self-node-remediation
    // comes along, through a Subscription the plan creates.
    await subscribe(client, 'nhc', 'nhc', {
      name: 'node-healthcheck-operator',
      channel: 'stable',
      installPlanApproval: 'Manual',
      startingCSV: 'node-healthcheck-operator.v0.8.0',
    });
    const planName = await approvePlanFor(client, 'nhc', 'node-healthcheck-operator.v0.8.0');
    const plan = await client.get<PlanObject>({
      apiVersion: v1alpha1,
      kind: 'InstallPlan',
      namespace: 'nhc',
      name: planName,
    });
    t.equal(plan?.spec.generation, 1);
    const dependency = await waitFor(
      'the dependency Subscription to follow the plan',
      async () => {
        const subs = await client.list<SubscriptionObject>({
          apiVersion: v1alpha1,
          kind: 'Subscription',
          namespace: 'nhc',
        });
        const dep = subs.items.find(
          (s) => s.metadata.annotations?.['olm.generated-by'] === planName,
        );
        return dep?.status?.installPlanRef?.name === planName ? dep : undefined;
      },
      30_000,
    );
    t.equal(dependency.metadata.name, 'self-node-remediation-stable-community-olm');
    t.notOk(
      dependency.status !== undefined && 'installPlanGeneration' in dependency.status,
      'upstream links a Subscription its plan created without an installPlanGeneration',
    );
    const own = await getSubscription(client, 'nhc', 'nhc');
    const followed = await client.get<PlanObject>({
      apiVersion: v1alpha1,
      kind: 'InstallPlan',
      namespace: 'nhc',
      name: own?.status?.installPlanRef?.name ?? '',
    });
    t.equal(
      own?.status?.installPlanGeneration,
      followed?.spec.generation,
      'the Subscription the resolution changed has its plan generation',
    );

    // The CSV records the bundle's properties as the catalog lists them (manifests left out).
    const csv = await waitFor(
      'node-healthcheck-operator.v0.8.0 to exist',
      () => getCsv(client, 'nhc', 'node-healthcheck-operator.v0.8.0'),
      30_000,
    );
    const text = await readFile(
      join(smallCatalog, 'node-healthcheck-operator', 'catalog.json'),
      'utf8',
    );
    const bundle = text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { name?: string; properties?: { type: string }[] })
      .find((o) => o.name === 'node-healthcheck-operator.v0.8.0');
    const listed = (bundle?.properties ?? []).filter(
      (p) => p.type !== 'olm.bundle.object' && p.type !== 'olm.csv.metadata',
    );
    t.ok(listed.length > 2, 'the catalog lists the bundle');
    t.equal(
      csv.metadata.annotations?.['operatorframework.io/properties'],
      JSON.stringify({ properties: listed }),
    );
  },
);
