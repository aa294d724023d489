// What each function's giveUp writes when the host gives up on its work, against the devcluster:
// the InstallPlan Failed (Installed=False InstallComponentFailed), the CSVs being installed
// Failed InstallComponentFailed, the Subscriptions'
// ResolutionFailed ErrorPreventedResolution, the CatalogSource's reason and message — each with
// its Warning Event. (That the host calls giveUp is dead-work-host.test.ts.)
import t from 'tap';
import { failCatalogSourceOnDeadWork } from '../../functions/catalog/give-up.js';
import { failCsvsOnDeadWork } from '../../functions/install/csv/give-up.js';
import { failPlanOnDeadWork } from '../../functions/install/install-plan/give-up.js';
import { failResolutionOnDeadWork } from '../../functions/resolve/give-up.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import type { DeadWork, WorkContext } from '../../shared/runtime/types.js';
import { clusterFor } from '../harness/backbone.js';
import { catalogSource } from '../harness/catalog.js';
import { installPlanStatus, namespaceWithOperatorGroup } from '../harness/install.js';
import { createInstallPlan, smallBundle } from '../harness/install-plan.js';
import { capturingLogger } from '../harness/log.js';

function workOn<Key>(client: KubeClient, key: Key): WorkContext<Key> {
  return {
    cluster: 'c1',
    key,
    client,
    now: () => new Date(),
    failures: 0,
    log: capturingLogger().log,
    signal: new AbortController().signal,
  };
}

const dead: DeadWork = {
  reason: 'Permanent',
  message: 'the server could not find the requested resource',
  error: new Error('the server could not find the requested resource'),
  failures: 1,
};

async function warnings(client: KubeClient, namespace: string, name: string, reason: string) {
  const { items } = await client.list({ apiVersion: 'v1', kind: 'Event', namespace });
  return items.filter(
    (e: KubeObject) =>
      (e['involvedObject'] as { name?: string }).name === name &&
      e['reason'] === reason &&
      e['type'] === 'Warning',
  );
}

t.test('dead work - an InstallPlan given up on is Failed as upstream fails one', async (t) => {
  const { client } = await clusterFor(t);
  await namespaceWithOperatorGroup(client, 'ns1');
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  await createInstallPlan(client, { name: 'install-abc', namespace: 'ns1', bundles: [bundle] });
  await failPlanOnDeadWork(workOn(client, { namespace: 'ns1', name: 'install-abc' }), dead);
  const status = await installPlanStatus(client, 'ns1', 'install-abc');
  t.equal(status?.phase, 'Failed');
  t.equal(status?.message, dead.message);
  t.match(status?.conditions, [
    { type: 'Installed', status: 'False', reason: 'InstallComponentFailed', message: dead.message },
  ]);
  t.equal((await warnings(client, 'ns1', 'install-abc', 'InstallComponentFailed')).length, 1);
  // A settled plan stays as it is.
  await failPlanOnDeadWork(workOn(client, { namespace: 'ns1', name: 'install-abc' }), {
    ...dead,
    message: 'something else',
  });
  t.equal((await installPlanStatus(client, 'ns1', 'install-abc'))?.message, dead.message);
});

t.test(
  'dead work - a namespace given up on marks its Subscriptions ResolutionFailed',
  async (t) => {
    const { client } = await clusterFor(t);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
    for (const name of ['etcd', 'prometheus'])
      await client.create({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name, namespace: 'ns1' },
        spec: { name, source: 'community', sourceNamespace: 'olm', channel: 'alpha' },
      });
    await failResolutionOnDeadWork(workOn(client, { namespace: 'ns1' }), dead);
    const { items } = await client.list({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      namespace: 'ns1',
    });
    t.equal(items.length, 2);
    for (const sub of items)
      t.match((sub['status'] as { conditions?: unknown }).conditions, [
        {
          type: 'ResolutionFailed',
          status: 'True',
          reason: 'ErrorPreventedResolution',
          message: dead.message,
        },
      ]);
    t.equal((await warnings(client, 'default', 'ns1', 'ResolutionFailed')).length, 1);
  },
);

t.test('dead work - a CatalogSource given up on says why in reason and message', async (t) => {
  const { client } = await clusterFor(t);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olm' } });
  await client.create(catalogSource('olm', 'cm', { sourceType: 'configmap', configMap: 'cm' }));
  await client.create(catalogSource('olm', 'grpc', { sourceType: 'grpc', address: 'x:50051' }));
  for (const name of ['cm', 'grpc'])
    await failCatalogSourceOnDeadWork(workOn(client, { namespace: 'olm', name }), dead);
  const read = async (name: string) =>
    (
      await client.get({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'CatalogSource',
        namespace: 'olm',
        name,
      })
    )?.['status'];
  t.match(await read('cm'), { reason: 'ConfigMapError', message: dead.message });
  t.match(await read('grpc'), { reason: 'RegistryServerError', message: dead.message });
  t.equal((await warnings(client, 'olm', 'cm', 'ConfigMapError')).length, 1);
  t.equal((await warnings(client, 'olm', 'grpc', 'RegistryServerError')).length, 1);
});

t.test('dead work - a namespace of CSVs given up on fails the CSVs being installed', async (t) => {
  const { client } = await clusterFor(t);
  await namespaceWithOperatorGroup(client, 'ns1');
  const { csv } = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  const phases = { installing: 'Installing', succeeded: 'Succeeded', ready: 'InstallReady' };
  for (const [name, phase] of Object.entries(phases)) {
    const created = await client.create({
      ...csv,
      metadata: { name, namespace: 'ns1' },
    });
    await client.updateStatus({ ...created, status: { phase, reason: 'InstallSucceeded' } });
  }
  await failCsvsOnDeadWork(workOn(client, { namespace: 'ns1' }), dead);
  const read = async (name: string) =>
    (
      await client.get({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        namespace: 'ns1',
        name,
      })
    )?.['status'];
  const failed = {
    phase: 'Failed',
    reason: 'InstallComponentFailed',
    message: `install strategy failed: ${dead.message}`,
  };
  t.match(await read('installing'), failed);
  t.match(await read('ready'), failed);
  t.match(await read('succeeded'), { phase: 'Succeeded' }, 'an installed CSV keeps its phase');
  t.equal((await warnings(client, 'ns1', 'installing', 'InstallComponentFailed')).length, 1);
});
