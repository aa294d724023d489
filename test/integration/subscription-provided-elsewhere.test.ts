// #19 item 14: a Subscription to a package that an AllNamespaces operator installed in another
// namespace already serves is never left silent. It fails resolution with the reason (the CSV
// name is taken by the copy, the APIs are owned elsewhere), while an unrelated Subscription of
// the same namespace installs (beside a third that nothing can satisfy, as in the report).
import t from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { kubectlMissing } from '../harness/devcluster.js';
import { getCsv, namespaceWithOperatorGroup, waitForCsvPhase } from '../harness/install.js';
import { pipelineFor } from '../harness/pipeline.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

type Subscription = KubeObject & {
  status?: {
    installedCSV?: string;
    state?: string;
    installPlanRef?: { name?: string };
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
};

async function subscribe(client: KubeClient, namespace: string, name: string, channel: string) {
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name, namespace },
    spec: { name, channel, source: 'community', sourceNamespace: 'olm' },
  });
}

const subscription = (client: KubeClient, namespace: string, name: string) =>
  client.get<Subscription>({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    namespace,
    name,
  });

t.test(
  'subscription - a package already served by an AllNamespaces operator elsewhere fails resolution with the reason; the unrelated Subscription installs',
  async (t) => {
    const { client } = await pipelineFor(t);
    await namespaceWithOperatorGroup(client, 'team-x', {});
    await namespaceWithOperatorGroup(client, 'operators', {});
    await subscribe(client, 'operators', 'node-maintenance-operator', 'stable');
    await waitForCsvPhase(
      client,
      'operators',
      'node-maintenance-operator.v0.21.0',
      'Succeeded',
      undefined,
      60_000,
    );
    await waitFor(
      'the copied CSV in team-x',
      async () =>
        (await getCsv(client, 'team-x', 'node-maintenance-operator.v0.21.0')) !== undefined,
      30_000,
    );

    await subscribe(client, 'team-x', 'node-maintenance-operator', 'stable');
    await subscribe(client, 'team-x', 'etcd', 'clusterwide-alpha');
    // And, as in the report, one that cannot be satisfied at all: this bundle requires
    // an API (PoisonPillRemediation) no catalog provides.
    await subscribe(client, 'team-x', 'node-healthcheck-operator', 'alpha');
    const failed = await waitFor(
      'ResolutionFailed on the Subscription served from elsewhere',
      async () =>
        (
          await subscription(client, 'team-x', 'node-maintenance-operator')
        )?.status?.conditions?.find((c) => c.type === 'ResolutionFailed'),
      30_000,
    );
    t.equal(failed.status, 'True');
    t.equal(failed.reason, 'ConstraintsNotSatisfiable');
    t.match(
      failed.message,
      /^constraints not satisfiable: .*node-maintenance-operator\.v0\.21\.0 installed in namespace operators already serves namespace team-x/,
    );
    await waitFor(
      'etcd in team-x to be installed',
      async () => (await subscription(client, 'team-x', 'etcd'))?.status?.state === 'AtLatestKnown',
      60_000,
    );
    const unsatisfiable = await waitFor(
      'ResolutionFailed on the Subscription nothing can satisfy',
      async () =>
        (
          await subscription(client, 'team-x', 'node-healthcheck-operator')
        )?.status?.conditions?.find((c) => c.type === 'ResolutionFailed'),
    );
    t.match(unsatisfiable.message, /^constraints not satisfiable: .*PoisonPillRemediation/);
    const refused = await subscription(client, 'team-x', 'node-maintenance-operator');
    t.equal(refused?.status?.installPlanRef, undefined, 'no InstallPlan for it');
    t.notOk(
      (await subscription(client, 'team-x', 'etcd'))?.status?.conditions?.some(
        (c) => c.type === 'ResolutionFailed',
      ),
      'the unrelated Subscription is not failed with it',
    );
  },
);
