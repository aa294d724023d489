// Regression: a bundle whose CRD is apiextensions.k8s.io/v1beta1 (not served since kube 1.22,
// nor by the devcluster) left its InstallPlan Installing forever, every step Unknown, while the
// install function dead-lettered the work. It must fail as upstream's does after its retry
// window: Failed, Installed=False InstallComponentFailed, the message naming the CRD and version.
import t from 'tap';
import {
  installFunctionFor,
  installPlanStatus,
  namespaceWithOperatorGroup,
} from '../harness/install.js';
import { createInstallPlan, smallBundle } from '../harness/install-plan.js';
import { runOlmq } from '../harness/cli.js';
import { waitFor } from '../harness/wait.js';

t.test('install - a v1beta1 CRD step fails its InstallPlan after the retry window', async (t) => {
  const windowMs = 1_500;
  const { client, registry, natsUrl } = await installFunctionFor(t, {
    installPlanRetryTimeoutMs: windowMs,
  });
  await namespaceWithOperatorGroup(client, 'ns1');
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  for (const o of bundle.others)
    if (o.kind === 'CustomResourceDefinition') o.apiVersion = 'apiextensions.k8s.io/v1beta1';
  await createInstallPlan(client, { name: 'install-abc', namespace: 'ns1', bundles: [bundle] });

  // Within the window it keeps retrying, saying why.
  const retrying = await waitFor(
    'the plan to say it is retrying',
    async () => {
      const status = await installPlanStatus(client, 'ns1', 'install-abc');
      return status?.message?.startsWith('retrying execution due to error:') === true
        ? status
        : undefined;
    },
    10_000,
  );
  t.equal(retrying.phase, 'Installing', 'still Installing inside the window');

  const failed = await waitFor(
    'the plan to be Failed',
    async () => {
      const status = await installPlanStatus(client, 'ns1', 'install-abc');
      return status?.phase === 'Failed' ? status : undefined;
    },
    // The window, then the pass that notices it ended (every 5 s while Installing).
    windowMs + 10_000,
  );
  const crdNames = bundle.others
    .filter((o) => o.kind === 'CustomResourceDefinition')
    .map((o) => o.metadata.name);
  const named = /installing CustomResourceDefinition (\S+):/.exec(failed.message ?? '')?.[1];
  t.ok(named !== undefined && crdNames.includes(named), `the message names a CRD (${named})`);
  t.match(failed.message, 'apiextensions.k8s.io/v1beta1', 'and the API version');
  t.match(failed.conditions, [
    {
      type: 'Installed',
      status: 'False',
      reason: 'InstallComponentFailed',
      message: failed.message,
    },
  ]);

  // The Event is recorded after the status write that made the plan Failed.
  const event = await waitFor(
    'a Warning Event InstallComponentFailed on the plan',
    async () => {
      const events = await client.list({ apiVersion: 'v1', kind: 'Event', namespace: 'ns1' });
      return events.items.find(
        (e) =>
          (e['involvedObject'] as { kind?: string; name?: string }).name === 'install-abc' &&
          e['reason'] === 'InstallComponentFailed',
      );
    },
    10_000,
  );
  t.ok(event, 'a Warning Event InstallComponentFailed on the plan');
  t.equal(event?.['type'], 'Warning');
  t.equal(event?.['message'], failed.message);

  const metrics = await registry.getSingleMetricAsString('olmq_work_dead_lettered_total');
  t.notMatch(metrics, /function="install-plan"/, 'no install-plan work dead-lettered');

  const dlq = await runOlmq(['dlq', 'list', '--nats-url', natsUrl, '-o', 'json']);
  t.equal(dlq.code, 0, dlq.stderr);
  t.same(JSON.parse(dlq.stdout), [], 'olmq dlq list: no dead letters');
});
