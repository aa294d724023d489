// A plan pass reads its InstallPlan from the watcher's mirror while the mirror shows the status
// this replica last wrote of it: one GET per pass saved on every install. A status write the
// mirror does not show yet (a stalled watch), or a conflict, sends the load to the API.
import t from 'tap';
import { loadPlan } from '../../functions/install/install-plan/load.js';
import type { ServedInstallPlan } from '../../functions/install/install-plan/types.js';
import { getMirrored } from '../../shared/bus/mirror-read.js';
import { KubeClient } from '../../shared/kube/client.js';
import { OwnWrites } from '../../shared/kube/own-writes.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { createInstallPlan, smallBundle } from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';
import { stallWatcherWatch, watcherFor } from '../harness/watcher.js';

t.test('install plan - the plan comes from the mirror unless it lags own writes', async (t) => {
  const { fixture, client } = await clusterFor(t);
  const backbone = await backboneFor(t);
  await watcherFor(t, fixture, backbone);
  const counted = await KubeClient.fromKubeConfig('c1', fixture.kubeConfig, {
    userAgent: 'olmq-test',
  });
  // A fault that changes nothing counts the load's GETs of InstallPlans.
  const gets = fixture.cluster.faults.inject({
    verbs: ['get'],
    resources: ['operators.coreos.com/installplans'],
    userAgent: 'olmq-test',
    action: { kind: 'delay', ms: 0 },
  });
  const planGets = (): number => gets.hits;

  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  const created = await createInstallPlan(client, {
    name: 'install-a',
    namespace: 'ns1',
    bundles: [bundle],
  });
  const where = { cluster: 'c1', kind: 'InstallPlan', namespace: 'ns1', name: 'install-a' };
  const mirrored = () => getMirrored<ServedInstallPlan>(backbone, where);
  await waitFor(
    'the plan with its status in the mirror',
    async () => (await mirrored())?.metadata.resourceVersion === created.metadata.resourceVersion,
    15_000,
  );

  const ledger = new OwnWrites();
  const load = () =>
    loadPlan(
      counted,
      { source: backbone, cluster: 'c1', ownWrites: ledger },
      'ns1',
      'install-a',
      () => new Date(),
    );
  const first = await load();
  t.equal(first.plan?.metadata.resourceVersion, created.metadata.resourceVersion, 'the plan');
  t.equal(planGets(), 0, 'read from the mirror: nothing written of it yet');

  // The watcher's InstallPlan watch goes quiet; this replica writes the plan's status.
  const stall = await stallWatcherWatch(fixture, 'operators.coreos.com/installplans');
  const plan = first.plan!;
  const status = { ...plan.status!, message: 'written by this replica' };
  const written = await client.updateStatus({ ...plan, status }, { answer: 'metadata' });
  ledger.wrote(
    'c1',
    { op: 'updateStatus', object: { ...plan, status } },
    written.metadata.resourceVersion,
  );
  const lagging = await load();
  t.equal(planGets(), 1, 'the mirror lags the write: read from the API');
  t.equal(lagging.plan?.status?.message, 'written by this replica', 'so the pass sees it');

  stall.end();
  await waitFor(
    'the mirror to show the write',
    async () => (await mirrored())?.metadata.resourceVersion === written.metadata.resourceVersion,
    30_000,
  );
  const caughtUp = await load();
  t.equal(caughtUp.plan?.status?.message, 'written by this replica', 'as written');
  t.equal(planGets(), 1, 'from the mirror again once it shows the write');

  // A status write conflicted: the next load reads the API, the one after the mirror.
  ledger.conflicted('c1', 'ns1');
  await load();
  t.equal(planGets(), 2, 'after a conflict, from the API');
  await load();
  t.equal(planGets(), 2, 'and then from the mirror');
});
