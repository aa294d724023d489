// Watches that go quiet while their connection stays up (a stalled watch) are noticed and
// resumed; a periodic resync lists again and reports only what differs (shared/kube/informer.ts),
// and the watcher's mirror republishes only keys missing from JetStream (watcher/mirror.ts).
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { objectKey } from '../../shared/bus/subjects.js';
import { KubeClient, type KubeObject } from '../../shared/kube/client.js';
import { Informer, type InformerOptions } from '../../shared/kube/informer.js';
import { mirroredKinds } from '../../watcher/kinds.js';
import { backboneFor, installOlmApi } from '../harness/backbone.js';
import { startCluster, type ClusterFixture } from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';
import { watcherFor } from '../harness/watcher.js';

async function clusterFor(t: Test): Promise<{ fixture: ClusterFixture; client: KubeClient }> {
  // Bookmarks every 100 ms: a healthy watch is never quiet for long.
  const fixture = await startCluster({ bookmarkIntervalMs: 100 });
  const client = await KubeClient.fromKubeConfig('c1', fixture.kubeConfig, {
    userAgent: 'olmq-test',
  });
  t.teardown(async () => {
    client.close();
    await fixture.close();
  });
  return { fixture, client };
}

const configMap = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', labels: { watched: 'yes' } },
  data: { v: '1' },
});

function recorded(t: Test, client: KubeClient, options: InformerOptions) {
  const events: string[] = [];
  const errors: unknown[] = [];
  const counts = { stalled: 0, resynced: 0 };
  const informer = new Informer(
    client,
    { apiVersion: 'v1', kind: 'ConfigMap' },
    {
      add: (o) => void events.push(`add ${o.metadata.name}`),
      update: (o) => void events.push(`update ${o.metadata.name}`),
      delete: (o) => void events.push(`delete ${o.metadata.name}`),
      error: (e) => void errors.push(e),
      stalled: () => void counts.stalled++,
      resynced: () => void counts.resynced++,
    },
    { labelSelector: 'watched=yes', ...options },
  );
  t.teardown(() => informer.stop());
  return { informer, events, errors, counts };
}

/** Makes the informer's next watch stall: the running one ends, the one resumed hears nothing. */
function stallNextWatch(fixture: ClusterFixture) {
  const fault = fixture.cluster.faults.inject({
    verbs: ['watch'],
    resources: ['configmaps'],
    action: { kind: 'stall' },
    count: 1,
  });
  fixture.cluster.faults.dropWatches();
  return fault;
}

t.test(
  'kube informer - a watch that goes quiet is taken for stalled and resumed, missing no change',
  async (t) => {
    const { fixture, client } = await clusterFor(t);
    const { informer, events, errors, counts } = recorded(t, client, { stallTimeoutMs: 1_500 });
    await informer.start();
    const fault = stallNextWatch(fixture);
    await waitFor('the resumed watch to stall', () => fault.hits === 1);
    await client.create(configMap('during-stall'));
    await waitFor(
      'the change made during the stall',
      () => events.includes('add during-stall'),
      15_000,
    );
    t.ok(counts.stalled >= 1, 'the stall was noticed');
    t.same(errors, [], 'a stall is resumed, not an error');
  },
);

t.test('kube informer - a periodic resync reports only what differs from the cache', async (t) => {
  const { fixture, client } = await clusterFor(t);
  await client.create(configMap('a'));
  await client.create(configMap('b'));
  const { informer, events, counts } = recorded(t, client, { resyncMs: 300, stallTimeoutMs: 0 });
  await informer.start();
  await waitFor('two resyncs', () => counts.resynced >= 2);
  t.same(events, ['add a', 'add b'], 'nothing reported when nothing differs');
  // A watch that hears nothing (and no stall detection): only the resync can notice the change.
  const fault = stallNextWatch(fixture);
  await waitFor('the resumed watch to stall', () => fault.hits === 1);
  await client.create(configMap('c'));
  await waitFor('the resync to report c', () => events.includes('add c'), 10_000);
  t.same(events.slice(0, 3), ['add a', 'add b', 'add c']);
  fault.end();
});

t.test('watcher - a resync republishes only objects missing from the mirror', async (t) => {
  const { fixture, client } = await clusterFor(t);
  await installOlmApi(client);
  const backbone = await backboneFor(t);
  const registry = new Registry();
  for (const name of ['kept', 'lost'])
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const watcher = await watcherFor(t, fixture, backbone, {
    kinds: mirroredKinds.filter((k) => k.kind === 'Namespace'),
    registry,
    resyncMs: 300,
  });
  await watcher.synced();
  const key = (name: string): string =>
    objectKey({ cluster: 'c1', kind: 'Namespace', namespace: '', name });
  const present = async (name: string): Promise<boolean> => {
    const entry = await backbone.objects.get(key(name));
    return entry !== null && entry.operation === 'PUT';
  };
  await waitFor('both mirrored', async () => (await present('kept')) && (await present('lost')));
  const count = async (name: string, labels: Record<string, string>): Promise<number> => {
    const metric = registry.getSingleMetric(name);
    const values = metric === undefined ? [] : (await metric.get()).values;
    return values
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((n, v) => n + v.value, 0);
  };
  const puts = (): Promise<number> =>
    count('olmq_watcher_changes_published_total', { kind: 'Namespace', operation: 'put' });
  const resyncs = (): Promise<number> =>
    count('olmq_watcher_watch_events_total', { kind: 'Namespace', event: 'resync' });
  const before = await puts();
  // The mirror loses a key behind the watcher's back (a purge, a restored stream...).
  await backbone.objects.purge(key('lost'));
  await waitFor('the lost key republished', () => present('lost'), 10_000);
  // The watcher's cache keeps only names and versions: the object is read again, whole.
  const republished = (await backbone.objects.get(key('lost')))?.json<KubeObject>();
  t.equal(republished?.metadata.name, 'lost');
  t.ok(republished?.metadata.labels?.['kubernetes.io/metadata.name'], 'with its labels');
  t.ok(republished?.['spec'] ?? republished?.['status'], 'and its spec or status');
  const after = await resyncs();
  await waitFor('two more resyncs', async () => (await resyncs()) >= after + 2);
  t.equal((await puts()) - before, 1, 'only the missing object was published again');
});
