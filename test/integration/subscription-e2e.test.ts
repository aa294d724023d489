// End to end, as a user drives OLM: a Subscription on the devcluster goes through every olmq
// function (resolve, plan, install, rbac, copy-csv) to a Succeeded CSV with its Deployment
// Available — with Automatic and Manual approval (approved by `kubectl patch`), from a
// startingCSV upgrading along the replaces chain, and upgrading by skipRange.
import t from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import { getCsv, namespaceWithOperatorGroup, waitForCsvPhase } from '../harness/install.js';
import { pipelineFor } from '../harness/pipeline.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

type Subscription = KubeObject & {
  status?: { installedCSV?: string; currentCSV?: string; installPlanRef?: { name?: string } };
};

async function subscribe(
  client: KubeClient,
  namespace: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: String(spec['name']), namespace },
    spec: { source: 'community', sourceNamespace: 'olm', ...spec },
  });
}

async function subscription(client: KubeClient, namespace: string, name: string) {
  return client.get<Subscription>({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    namespace,
    name,
  });
}

async function deploymentAvailable(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<void> {
  await waitFor(`Deployment ${namespace}/${name} to be Available`, async () => {
    const d = await client.get<
      KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
    >({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name });
    return d?.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
  });
}

async function gone(client: KubeClient, namespace: string, csv: string): Promise<void> {
  await waitFor(
    `CSV ${namespace}/${csv} to be gone`,
    async () => (await getCsv(client, namespace, csv)) === undefined,
    30_000,
  );
}

t.test(
  'e2e - Automatic: a Subscription from a startingCSV installs it and upgrades along the replaces chain',
  async (t) => {
    const { client } = await pipelineFor(t);
    await namespaceWithOperatorGroup(client, 'auto');
    await subscribe(client, 'auto', {
      name: 'etcd',
      channel: 'singlenamespace-alpha',
      startingCSV: 'etcdoperator.v0.9.2',
    });
    // The starting CSV installs first; once it is there, resolution moves to the channel head.
    await waitFor(
      'etcdoperator.v0.9.2 to be installed',
      async () =>
        (await subscription(client, 'auto', 'etcd'))?.status?.installedCSV ===
        'etcdoperator.v0.9.2',
      30_000,
    );
    const succeeded = await waitForCsvPhase(
      client,
      'auto',
      'etcdoperator.v0.9.4',
      'Succeeded',
      undefined,
      60_000,
    );
    t.same(
      (succeeded['spec'] as { cleanup?: unknown }).cleanup,
      { enabled: false },
      "upstream's spec.cleanup default",
    );
    await gone(client, 'auto', 'etcdoperator.v0.9.2');
    await deploymentAvailable(client, 'auto', 'etcd-operator');
    const sub = await subscription(client, 'auto', 'etcd');
    t.equal(sub?.status?.installedCSV, 'etcdoperator.v0.9.4');
    t.equal(sub?.status?.currentCSV, 'etcdoperator.v0.9.4');
  },
);

t.test(
  'e2e - Manual: the InstallPlan waits for approval; kubectl patch approves it and the CSV succeeds',
  async (t) => {
    const { client, fixture } = await pipelineFor(t);
    await namespaceWithOperatorGroup(client, 'manual');
    await subscribe(client, 'manual', {
      name: 'etcd',
      channel: 'singlenamespace-alpha',
      installPlanApproval: 'Manual',
    });
    const plan = await waitFor(
      'an InstallPlan requiring approval',
      async () => {
        const ref = (await subscription(client, 'manual', 'etcd'))?.status?.installPlanRef?.name;
        if (ref === undefined) return undefined;
        const ip = await client.get<KubeObject & { status?: { phase?: string } }>({
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'InstallPlan',
          namespace: 'manual',
          name: ref,
        });
        return ip?.status?.phase === 'RequiresApproval' ? ref : undefined;
      },
      30_000,
    );
    t.equal(
      await getCsv(client, 'manual', 'etcdoperator.v0.9.4'),
      undefined,
      'nothing installed yet',
    );
    const patched = await kubectl(fixture, [
      'patch',
      'installplan',
      plan,
      '-n',
      'manual',
      '--type',
      'merge',
      '-p',
      '{"spec":{"approved":true}}',
    ]);
    t.equal(patched.code, 0, patched.stderr);
    await waitForCsvPhase(client, 'manual', 'etcdoperator.v0.9.4', 'Succeeded', undefined, 60_000);
    await deploymentAvailable(client, 'manual', 'etcd-operator');
  },
);

t.test(
  'e2e - skipRange: an installed CSV in a newer bundle’s skipRange is upgraded past the versions between',
  async (t) => {
    const { client } = await pipelineFor(t);
    await namespaceWithOperatorGroup(client, 'skips');
    // stable-v1: v1.1.1 (skipRange >=1.0.0 <1.1.0) and the head v1.2.0 (>=1.0.0 <1.0.2) skip v1.0.0.
    await subscribe(client, 'skips', {
      name: 'hawtio-operator',
      channel: 'stable-v1',
      startingCSV: 'hawtio-operator.v1.0.0',
    });
    await waitFor(
      'hawtio-operator.v1.0.0 to be installed',
      async () =>
        (await subscription(client, 'skips', 'hawtio-operator'))?.status?.installedCSV ===
        'hawtio-operator.v1.0.0',
      30_000,
    );
    await waitForCsvPhase(
      client,
      'skips',
      'hawtio-operator.v1.2.0',
      'Succeeded',
      undefined,
      60_000,
    );
    await gone(client, 'skips', 'hawtio-operator.v1.0.0');
    const between = await Promise.all(
      ['hawtio-operator.v1.0.1', 'hawtio-operator.v1.1.0', 'hawtio-operator.v1.1.1'].map((name) =>
        getCsv(client, 'skips', name),
      ),
    );
    t.same(between, [undefined, undefined, undefined], 'no CSV left between');
    const plans = await client.list<
      KubeObject & { spec: { clusterServiceVersionNames: string[] } }
    >({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', namespace: 'skips' });
    t.same(
      plans.items.map((p) => p.spec.clusterServiceVersionNames).sort(),
      [['hawtio-operator.v1.0.0'], ['hawtio-operator.v1.2.0']],
      'one plan for the starting CSV, then one straight to the head: no version between installed',
    );
    t.equal(
      (await subscription(client, 'skips', 'hawtio-operator'))?.status?.installedCSV,
      'hawtio-operator.v1.2.0',
    );
  },
);
