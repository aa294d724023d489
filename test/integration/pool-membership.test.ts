// Pools (issue 21), the parts below the whole-pipeline test (pools.test.ts): a function host
// follows its ClusterMembership (per-cluster consumers opened and closed, another cluster's
// work never pulled), the server deletes the consumers of a cluster nobody serves after the
// inactivity threshold, and a pool follows its kubeconfig directory.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import type { Backbone } from '../../shared/bus/backbone.js';
import { assets, mirrorStream, objectKey } from '../../shared/bus/subjects.js';
import { publishWork, triggerConsumerName, workConsumerName } from '../../shared/bus/work-queue.js';
import { KubeClient } from '../../shared/kube/client.js';
import { ClusterMembership } from '../../shared/runtime/cluster-membership.js';
import { FunctionHost, type FunctionDefinition } from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { workKeyType, type NamespacedName } from '../../shared/runtime/work-keys.js';
import { startPool } from '../../system/pool.js';
import { backboneFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';
import { waitFor } from '../harness/wait.js';

const gadgetKey = workKeyType('gadgets', ['namespace', 'name']);

/** A definition that records the (cluster, key) of every reconcile. */
function gadgets(seen: string[]): FunctionDefinition<NamespacedName, string, string> {
  return {
    key: gadgetKey,
    triggers: [
      {
        kind: 'Gadget',
        workKeys: (c) => [gadgetKey.of({ namespace: c.ref.namespace, name: c.ref.name })],
      },
    ],
    load: (work) => Promise.resolve(`${work.cluster}/${work.key.namespace}/${work.key.name}`),
    decide: (snapshot) => ({ writes: snapshot }),
    apply: (writes) => {
      seen.push(writes);
      return Promise.resolve();
    },
  };
}

const kubeconfigText = (server: string): string =>
  [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: x, cluster: {server: "' + server + '"}}]',
    'users: [{name: x, user: {token: t}}]',
    'contexts: [{name: x, context: {cluster: x, user: x}}]',
    'current-context: x',
  ].join('\n');

// A client nobody calls: the definition reads no API.
async function idleClient(cluster: string): Promise<KubeClient> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfigText('https://127.0.0.1:9'));
  return KubeClient.fromKubeConfig(cluster, kubeConfig, { userAgent: 'olmq-test' });
}

async function consumerNames(backbone: Backbone, stream: string): Promise<string[]> {
  const names: string[] = [];
  for await (const info of backbone.jsm.consumers.list(stream)) names.push(info.name);
  return names.sort();
}

const putGadget = (backbone: Backbone, cluster: string, name: string) =>
  backbone.objects.put(
    objectKey({ cluster, kind: 'Gadget', namespace: 'ns', name }),
    JSON.stringify({ metadata: { name } }),
  );

async function hostFor(t: Test, backbone: Backbone, membership: ClusterMembership, seen: string[]) {
  const { log, lines } = capturingLogger('info');
  const host = new FunctionHost(
    backbone,
    gadgets(seen),
    log,
    createFunctionMetrics(new Registry()),
    { baseBackoffMs: 20, contentionDelayMs: 20, consumerInactiveMs: 1_000 },
    membership,
  );
  await host.start();
  t.teardown(() => host.stop(1_000));
  return { host, lines };
}

t.test(
  'pools - a host pulls only the work of the clusters it serves, as they join and leave',
  async (t) => {
    const backbone = await backboneFor(t, { leaseTtlMs: 2_000 });
    const membership = new ClusterMembership(new Map([['c1', await idleClient('c1')]]));
    const seen: string[] = [];
    const { host } = await hostFor(t, backbone, membership, seen);
    t.same(host.workConsumers, ['gadgets-work-c1']);
    t.same(await consumerNames(backbone, mirrorStream), ['gadgets-trigger-Gadget-c1']);

    await putGadget(backbone, 'c1', 'one');
    await putGadget(backbone, 'c2', 'two');
    await publishWork(
      backbone,
      { queue: 'gadgets', cluster: 'c2', key: ['ns', 'direct'] },
      'direct',
    );
    await waitFor('c1 gadget reconciled', () => seen.includes('c1/ns/one'));
    const work = await backbone.jsm.consumers.info(assets.workStream, 'gadgets-work-c1');
    t.equal(work.num_pending + work.num_ack_pending, 0, "c1's work is done");
    t.same(seen, ['c1/ns/one'], "c2's change and work item are not pulled");

    membership.set('c2', await idleClient('c2'));
    await waitFor('c2 gadget and work item reconciled', () =>
      ['c2/ns/two', 'c2/ns/direct'].every((k) => seen.includes(k)),
    );
    t.same(host.workConsumers.sort(), ['gadgets-work-c1', 'gadgets-work-c2']);

    membership.remove('c2');
    await waitFor('c2 lane closed', () => host.workConsumers.length === 1);
    const before = seen.length;
    await publishWork(backbone, { queue: 'gadgets', cluster: 'c2', key: ['ns', 'late'] }, 'late');
    await putGadget(backbone, 'c1', 'three');
    await waitFor('c1 gadget reconciled after c2 left', () => seen.includes('c1/ns/three'));
    t.same(seen.slice(before), ['c1/ns/three'], 'work of a cluster that left stays in its stream');
    const pending = await backbone.jsm.streams.info(assets.workStream, {
      subjects_filter: 'olmq.work.gadgets.c2.>',
    });
    t.equal(pending.state.messages, 1, "c2's item waits for the pool that serves c2");
  },
);

t.test(
  "pools - the server deletes a departed cluster's consumers after the inactivity threshold; served ones stay",
  async (t) => {
    const backbone = await backboneFor(t, { leaseTtlMs: 2_000 });
    const membership = new ClusterMembership(
      new Map([
        ['c1', await idleClient('c1')],
        ['c2', await idleClient('c2')],
      ]),
    );
    const { lines } = await hostFor(t, backbone, membership, []);
    const created = async (stream: string, name: string) =>
      (await backbone.jsm.consumers.info(stream, name)).created;
    const c1Work = await created(assets.workStream, workConsumerName('gadgets', 'c1'));
    const c1Trigger = await created(mirrorStream, triggerConsumerName('gadgets', 'Gadget', 'c1'));

    membership.remove('c2');
    await waitFor('c2 consumers closed', () =>
      lines.some((l) => l['msg'] === 'stopped serving cluster: its consumers are closed'),
    );
    await waitFor(
      "c2's consumers to be deleted by the server (threshold 1 s)",
      async () =>
        (await consumerNames(backbone, assets.workStream)).length === 1 &&
        (await consumerNames(backbone, mirrorStream)).length === 1,
      15_000,
      100,
    );
    t.equal(
      await created(assets.workStream, workConsumerName('gadgets', 'c1')),
      c1Work,
      "c1's work consumer, pulled all along, is the same one",
    );
    t.equal(
      await created(mirrorStream, triggerConsumerName('gadgets', 'Gadget', 'c1')),
      c1Trigger,
      "c1's trigger consumer is the same one",
    );
  },
);

t.test(
  'pools - a kubeconfig directory: files join, change and leave; bad files refused',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'olmq-pool-dir-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'c1.yaml'), kubeconfigText('https://127.0.0.1:9'));
    const { log, lines } = capturingLogger('info');
    const registry = new Registry();
    const pool = await startPool({
      source: { dir },
      registry,
      log,
      userAgent: 't',
      closeAfterMs: 10,
    });
    t.teardown(() => pool.stop());
    const { membership } = pool;
    t.same(membership.clusters, ['c1']);
    const changes: string[] = [];
    membership.onChange((c) => changes.push(`${c.kind} ${c.cluster}`));

    // Seen through fs.watch, without asking.
    writeFileSync(join(dir, 'c2.yaml'), kubeconfigText('https://127.0.0.1:10'));
    await waitFor('c2 to join', () => membership.clusters.includes('c2'));
    const c1 = membership.clients.get('c1');
    writeFileSync(join(dir, 'c1.yaml'), kubeconfigText('https://127.0.0.1:11'));
    await pool.rescan();
    await waitFor('c1 client re-created', () => membership.clients.get('c1') !== c1);
    writeFileSync(join(dir, 'c3.yaml'), 'not: a kubeconfig: [');
    rmSync(join(dir, 'c2.yaml'));
    await pool.rescan();
    await waitFor('c2 to leave', () => !membership.clusters.includes('c2'));
    t.same(membership.clusters.sort(), ['c1'], 'the bad file is no cluster');
    t.same(changes, ['joined c2', 'left c2'], 'a re-created client is no join');
    const messages = lines.map((l) => `${String(l['msg'])} ${String(l['cluster'])}`);
    for (const m of [
      'cluster joined the pool c2',
      'cluster kubeconfig changed: client re-created c1',
      'kubeconfig file refused c3',
      'cluster left the pool c2',
    ])
      t.ok(messages.includes(m), m);
    await pool.rescan();
    t.equal(messages.filter((m) => m.startsWith('kubeconfig file refused')).length, 1, 'once');
    const gauge = (await registry.getMetricsAsJSON()).find(
      (m) => m.name === 'olmq_served_clusters',
    );
    t.equal(gauge?.values[0]?.value, 1);
  },
);

t.test('pools - a bad kubeconfig file in the directory at start fails the start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-pool-dir-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'broken.yaml'), 'not: a kubeconfig: [');
  const { log } = capturingLogger('info');
  await t.rejects(startPool({ source: { dir }, registry: new Registry(), log, userAgent: 't' }), {
    name: 'KubeconfigError',
    message: /broken\.yaml/,
  });
});
