// SIGKILL of function replicas mid-work (issue #21): every function runs as its own
// `olmq run` process against a real nats-server and the devcluster; while Subscriptions install
// (two operators in each of three namespaces, and in a fourth a dependent chain,
// node-healthcheck-operator 0.8.0 requiring self-node-remediation, AllNamespaces so that its
// CSVs are copied everywhere), a random replica of install, plan, rbac or copy-csv is killed
// every 2 s and replaced. Every CSV must succeed with nothing made twice and no dead letters.
import t from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { chaosOutcome, deadLetterCount, notSucceeded } from '../harness/chaos-outcome.js';
import { runOlmq } from '../harness/cli.js';
import { capturingLogger } from '../harness/log.js';
import { getCsv, namespaceWithOperatorGroup } from '../harness/install.js';
import { natsServerFor } from '../harness/nats.js';
import { FunctionReplicas, startKiller } from '../harness/replicas.js';
import { communityCatalogFor } from '../harness/subscription.js';
import { systemFor } from '../harness/system.js';
import { waitFor } from '../harness/wait.js';

const v1alpha1 = 'operators.coreos.com/v1alpha1';
const killed = ['install', 'plan', 'rbac', 'copy-csv'] as const;
const spared = ['catalog', 'resolve', 'operator'] as const;
const packages = [
  { name: 'etcd', channel: 'singlenamespace-alpha', csv: 'etcdoperator.v0.9.4' },
  { name: 'hawtio-operator', channel: 'stable-v1', csv: 'hawtio-operator.v1.2.0' },
];
const namespaces = ['chaos-0', 'chaos-1', 'chaos-2'];
const chain = 'chaos-chain';

type Plan = KubeObject & {
  spec: { clusterServiceVersionNames: string[]; approved?: boolean };
  status?: { phase?: string };
};

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
    spec: { name, source: 'community', sourceNamespace: 'olm', ...spec },
  });
}

t.test(
  'replica kills - SIGKILL of install, plan, rbac and copy-csv replicas during installs: every CSV Succeeded, nothing twice, no dead letters',
  async (t) => {
    const nats = await natsServerFor(t);
    // The devcluster and the watcher in this process; every function in its own.
    const { log } = capturingLogger('warn');
    const { system, fixture, client } = await systemFor(t, {
      log,
      natsUrl: nats.url,
      watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
      functions: { names: [] },
    });
    const replicas = new FunctionReplicas({
      kubeconfigPath: fixture.kubeconfigPath,
      natsUrl: nats.url,
    });
    t.teardown(() => replicas.stop());
    await Promise.all([...spared, ...killed].map((fn) => replicas.start(fn)));
    await communityCatalogFor(t, client);

    for (const namespace of namespaces) {
      await namespaceWithOperatorGroup(client, namespace);
      for (const pkg of packages)
        await subscribe(client, namespace, pkg.name, { channel: pkg.channel });
    }
    // AllNamespaces: a global group; Manual so that the chain stops at 0.8.0 (the last version
    // with the dependency) instead of upgrading on.
    await namespaceWithOperatorGroup(client, chain, {});
    await subscribe(client, chain, 'node-healthcheck-operator', {
      channel: 'stable',
      installPlanApproval: 'Manual',
      startingCSV: 'node-healthcheck-operator.v0.8.0',
    });
    const killer = startKiller(replicas, { functions: killed, everyMs: 2_000, maxKills: 8 });
    t.teardown(() => killer.stop().catch(() => undefined));

    const plan = await waitFor(
      'the plan of the chain to require approval',
      async () =>
        (
          await client.list<Plan>({ apiVersion: v1alpha1, kind: 'InstallPlan', namespace: chain })
        ).items.find((p) => p.status?.phase === 'RequiresApproval'),
      90_000,
      200,
    );
    const chainCsvs = plan.spec.clusterServiceVersionNames;
    t.ok(chainCsvs.includes('node-healthcheck-operator.v0.8.0'), 'the operator is planned');
    t.ok(
      chainCsvs.some((n) => n.startsWith('self-node-remediation.')),
      'with its dependency',
    );
    await client.patch(
      {
        apiVersion: v1alpha1,
        kind: 'InstallPlan',
        namespace: chain,
        name: plan.metadata.name ?? '',
      },
      'merge',
      { spec: { approved: true } },
    );

    const expected = [
      ...namespaces.flatMap((ns) => packages.map((p) => `${ns}/${p.csv}`)),
      ...chainCsvs.map((n) => `${chain}/${n}`),
    ];
    await waitFor(
      'every CSV to be Succeeded',
      async () => (await notSucceeded(client, expected)).length === 0,
      150_000,
      500,
    );
    // The chain's CSVs are copied into the other namespaces (the copy-csv function's work).
    await waitFor(
      'the chain copied into chaos-0',
      async () => {
        for (const name of chainCsvs)
          if ((await getCsv(client, 'chaos-0', name)) === undefined) return false;
        return true;
      },
      60_000,
      500,
    );
    const kills = await killer.stop();
    t.ok(kills.length >= 4, `${kills.length} replicas killed`);
    const outcome = await chaosOutcome(client, expected);
    t.same(outcome.lost, [], 'every CSV Succeeded');
    t.equal(outcome.succeeded, expected.length);
    t.same(outcome.extraCsvs, [], 'no CSV nobody asked for');
    t.equal(outcome.duplicatedPlanGenerations, 0, 'one InstallPlan per namespace and generation');
    t.equal(outcome.duplicatedPlannedCsvs, 0, 'no CSV planned twice');
    t.same(outcome.duplicatedRbac, [], 'no RBAC created twice');
    t.equal(await deadLetterCount(system.backbone), 0, 'no dead letters');
    const dlq = await runOlmq(['dlq', 'list', '--nats-url', nats.url]);
    t.equal(dlq.code, 0);
    t.match(dlq.stderr, 'No dead letters found.');
    t.same(replicas.crashes, [], 'no replica exited by itself');
  },
);
