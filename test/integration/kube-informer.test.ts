// The informer on our own client (shared/kube/informer.ts) against the devcluster, over HTTP/2:
// it lists and watches, resumes a dropped watch without losing a change, and lists again when
// its resourceVersion expired, reporting what vanished meanwhile.
import { Registry, type Counter } from 'prom-client';
import t, { type Test } from 'tap';
import { KubeClient, type KubeObject } from '../../shared/kube/client.js';
import { Informer } from '../../shared/kube/informer.js';
import { createApiRequestCounter } from '../../shared/runtime/metrics.js';
import { startCluster, type ClusterFixture } from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

async function clusterFor(t: Test): Promise<{
  fixture: ClusterFixture;
  client: KubeClient;
  requests: Counter<'cluster' | 'verb' | 'code'>;
}> {
  const fixture = await startCluster();
  const requests = createApiRequestCounter(new Registry());
  const client = await KubeClient.fromKubeConfig('c1', fixture.kubeConfig, {
    userAgent: 'olmq-test',
    requests,
  });
  t.teardown(async () => {
    client.close();
    await fixture.close();
  });
  return { fixture, client, requests };
}

/** How many requests of `verb` the client made. */
async function countOf(
  requests: Counter<'cluster' | 'verb' | 'code'>,
  verb: string,
): Promise<number> {
  const metric = await requests.get();
  return metric.values.filter((v) => v.labels.verb === verb).reduce((n, v) => n + v.value, 0);
}

const configMap = (name: string, v: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', labels: { watched: 'yes' } },
  data: { v },
});

/** An informer on labelled ConfigMaps recording what its handlers hear, stopped at teardown. */
function recorded(t: Test, client: KubeClient) {
  const events: string[] = [];
  const errors: unknown[] = [];
  const informer = new Informer(
    client,
    { apiVersion: 'v1', kind: 'ConfigMap' },
    {
      add: (o) => void events.push(`add ${o.metadata.name}`),
      update: (o) =>
        void events.push(
          `update ${o.metadata.name} ${String((o as { data?: { v?: string } }).data?.v)}`,
        ),
      delete: (o) => void events.push(`delete ${o.metadata.name}`),
      error: (e) => void errors.push(e),
    },
    { labelSelector: 'watched=yes' },
  );
  t.teardown(() => informer.stop());
  return { informer, events, errors };
}

t.test('kube informer - lists, then hears creates, updates and deletions', async (t) => {
  const { client } = await clusterFor(t);
  await client.create(configMap('before', '1'));
  const { informer, events, errors } = recorded(t, client);
  await informer.start();
  t.same(events, ['add before'], 'the list reports what exists');
  const made = await client.create(configMap('later', '1'));
  await client.update({ ...made, data: { v: '2' } });
  await client.delete({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'default',
    name: 'before',
  });
  await waitFor('three watch events', () => events.length === 4);
  t.same(events.slice(1), ['add later', 'update later 2', 'delete before']);
  t.same(
    informer.list().map((o) => o.metadata.name),
    ['later'],
  );
  t.same(errors, []);
});

t.test('kube informer - a dropped watch resumes where it was, missing no change', async (t) => {
  const { fixture, client } = await clusterFor(t);
  const { informer, events, errors } = recorded(t, client);
  await informer.start();
  for (let i = 0; i < 5; i++) {
    fixture.cluster.faults.dropWatches();
    await client.create(configMap(`cm-${i}`, '1'));
  }
  await waitFor('five adds', () => events.length === 5);
  t.same(events, ['add cm-0', 'add cm-1', 'add cm-2', 'add cm-3', 'add cm-4']);
  t.same(errors, [], 'a watch the server ends is resumed, not an error');
});

t.test(
  'kube informer - an expired resourceVersion lists again and reports objects deleted meanwhile',
  async (t) => {
    const { fixture, client } = await clusterFor(t);
    await client.create(configMap('stays', '1'));
    await client.create(configMap('goes', '1'));
    const { informer, events, errors } = recorded(t, client);
    await informer.start();
    // While no watch runs, one object goes and one changes; then history is forgotten, so
    // resuming from the old resourceVersion is answered 410.
    informer.stop();
    await client.delete({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'default',
      name: 'goes',
    });
    const stays = await client.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'default',
      name: 'stays',
    });
    if (stays === undefined) throw new Error('stays vanished');
    await client.update({ ...stays, data: { v: '2' } });
    fixture.cluster.faults.expireWatches();
    await informer.start();
    t.same(events.slice(2).sort(), ['delete goes', 'update stays 2']);
    t.same(errors, []);
  },
);

t.test(
  'kube informer - a resumed watch answered 410 (history expired) lists again, missing no deletion',
  async (t) => {
    const { fixture, client, requests } = await clusterFor(t);
    await client.create(configMap('goes', '1'));
    const { informer, events, errors } = recorded(t, client);
    await informer.start();
    await client.delete({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'default',
      name: 'goes',
    });
    // A change the informer does not watch moves the cluster on: forgetting history through
    // it makes the informer's last resourceVersion too old, whether or not the deletion reached
    // it before the drop.
    await client.create({
      ...configMap('unwatched', '1'),
      metadata: { name: 'unwatched', namespace: 'default' },
    });
    fixture.cluster.faults.expireWatches();
    fixture.cluster.faults.dropWatches();
    await client.create(configMap('after', '1'));
    await waitFor('the create after the drop', () => events.includes('add after'));
    t.same(
      events.filter((e) => e === 'delete goes'),
      ['delete goes'],
      'the deletion is reported once, by the watch or by the list',
    );
    t.ok((await countOf(requests, 'list')) >= 2, 'the informer listed again');
    t.same(errors, []);
  },
);

t.test(
  'kube informer - with keep, the cache holds what keep keeps while handlers hear whole objects',
  async (t) => {
    const { client } = await clusterFor(t);
    await client.create(configMap('kept', '1'));
    const heard: KubeObject[] = [];
    const informer = new Informer(
      client,
      { apiVersion: 'v1', kind: 'ConfigMap' },
      {
        add: (o) => void heard.push(o),
        update: (o) => void heard.push(o),
        delete: () => undefined,
        error: () => undefined,
      },
      {
        labelSelector: 'watched=yes',
        keep: (o) => ({ apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata }),
      },
    );
    t.teardown(() => informer.stop());
    await informer.start();
    const made = await client.create(configMap('later', '1'));
    await client.update({ ...made, data: { v: '2' } });
    await waitFor('the update', () => heard.length === 3);
    t.same(
      heard.map((o) => (o as { data?: unknown }).data),
      [{ v: '1' }, { v: '1' }, { v: '2' }],
      'handlers get the data',
    );
    const cached = informer.get('default', 'later');
    t.equal(cached?.metadata.resourceVersion, heard[2]?.metadata.resourceVersion);
    t.equal((cached as { data?: unknown } | undefined)?.data, undefined, 'the cache does not');
    t.same(
      informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
      ['kept', 'later'],
    );
  },
);
