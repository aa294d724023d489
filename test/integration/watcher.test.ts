import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { connect } from '@nats-io/transport-node';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { assets, openBackbone } from '../../shared/bus/backbone.js';
import {
  partsDiffer,
  partsHeader,
  pickParts,
  type ObjectPart,
} from '../../shared/bus/object-parts.js';
import { natsServerFor } from '../harness/nats.js';
import { olmqBin } from '../harness/repo.js';
import t, { type Test } from 'tap';
import { startWatcher, type Watcher } from '../../watcher/index.js';
import { nameIndexLimit } from '../../watcher/name-index.js';
import { mirroredKinds } from '../../watcher/kinds.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import { indexedKey, namesKey, objectKey } from '../../shared/bus/subjects.js';
import { listMirrored } from '../../shared/bus/mirror-read.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { ClusterFixture } from '../harness/devcluster.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';
import { waitFor } from '../harness/wait.js';

const subscriptionKinds = mirroredKinds.filter((k) =>
  ['Subscription', 'Namespace', 'ConfigMap'].includes(k.kind),
);

function subscription(name: string, channel = 'stable'): KubeObject {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name, namespace: 'default' },
    spec: { name: 'etcd', source: 'community', sourceNamespace: 'olm', channel },
  };
}

const subscriptionRef = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  namespace: 'default',
};

async function watcherFor(
  t: Test,
  cluster: { fixture: ClusterFixture },
  backbone: Backbone,
  identity: string,
  leaseDurationSeconds = 15,
  registry = new Registry(),
): Promise<Watcher> {
  const watcher = await startWatcher({
    cluster: { id: 'c1', kubeConfig: cluster.fixture.kubeConfig },
    backbone,
    log: capturingLogger('warn').log,
    registry,
    identity,
    leaseNamespace: 'olmq-system',
    leaseName: 'olmq-watcher',
    leaseDurationSeconds,
    kinds: subscriptionKinds,
  });
  t.teardown(() => watcher.stop());
  return watcher;
}

async function mirrored(
  backbone: Backbone,
  kind: string,
  namespace: string,
  name: string,
): Promise<unknown> {
  const entry = await backbone.objects.get(objectKey({ cluster: 'c1', kind, namespace, name }));
  return entry === null || entry.operation !== 'PUT' ? undefined : entry.json<unknown>();
}

async function channelOf(backbone: Backbone, name: string): Promise<string | undefined> {
  const object = (await mirrored(backbone, 'Subscription', 'default', name)) as
    { spec?: { channel?: string } } | undefined;
  return object?.spec?.channel;
}

t.test(
  'watcher - mirrors creates, updates and deletions of watched kinds into JetStream',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const watcher = await watcherFor(t, cluster, backbone, 'replica-a');
    await watcher.synced();
    t.ok(watcher.isLeading());
    t.ok(
      await mirrored(backbone, 'Namespace', '', 'default'),
      'existing objects are mirrored by the first list',
    );

    const created = await cluster.client.create(subscription('etcd'));
    await waitFor(
      'the new subscription in the mirror',
      async () => (await channelOf(backbone, 'etcd')) === 'stable',
    );
    await cluster.client.update({
      ...created,
      spec: { ...(created.spec as object), channel: 'alpha' },
    });
    await waitFor(
      'the update in the mirror',
      async () => (await channelOf(backbone, 'etcd')) === 'alpha',
    );
    const entry = await backbone.objects.get(
      objectKey({ cluster: 'c1', kind: 'Subscription', namespace: 'default', name: 'etcd' }),
    );
    t.notOk(JSON.stringify(entry?.json()).includes('managedFields'), 'managedFields are trimmed');

    await cluster.client.delete({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      namespace: 'default',
      name: 'etcd',
    });
    await waitFor(
      'the deletion in the mirror',
      async () => (await mirrored(backbone, 'Subscription', 'default', 'etcd')) === undefined,
    );
  },
);

t.test(
  'watcher - ConfigMap and Secret contents are replaced by a digest; unmanaged ones are not mirrored',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const watcher = await watcherFor(t, cluster, backbone, 'replica-a');
    await watcher.synced();
    await cluster.client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'mine', namespace: 'default', labels: { 'olm.managed': 'true' } },
      data: { big: 'x'.repeat(10_000) },
    });
    await cluster.client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'theirs', namespace: 'default' },
      data: { a: 'b' },
    });
    const mine = (await waitFor('the managed ConfigMap', () =>
      mirrored(backbone, 'ConfigMap', 'default', 'mine'),
    )) as KubeObject;
    t.notOk('data' in mine, 'data is not mirrored');
    t.match(mine.metadata.annotations, { 'olmq.io/content-digest': /^[0-9a-f]{16}$/ });
    t.equal(
      await mirrored(backbone, 'ConfigMap', 'default', 'theirs'),
      undefined,
      'unmanaged ConfigMap not mirrored',
    );
  },
);

t.test(
  'watcher - after a restart the mirror converges: objects deleted meanwhile are removed',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const first = await watcherFor(t, cluster, backbone, 'replica-a', 2);
    await first.synced();
    await cluster.client.create(subscription('gone'));
    await cluster.client.create(subscription('kept'));
    await waitFor(
      'both mirrored',
      async () =>
        (await channelOf(backbone, 'gone')) !== undefined &&
        (await channelOf(backbone, 'kept')) !== undefined,
    );
    await first.stop();

    await cluster.client.delete({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      namespace: 'default',
      name: 'gone',
    });
    const second = await watcherFor(t, cluster, backbone, 'replica-b', 2);
    await second.synced();
    t.equal(
      await channelOf(backbone, 'gone'),
      undefined,
      'the object deleted while no watcher ran is gone from the mirror',
    );
    t.equal(await channelOf(backbone, 'kept'), 'stable');
  },
);

t.test(
  "watcher - keeps the names of each namespace's objects beside them: listings read them, a restart drops names deleted meanwhile",
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const list = async (namespace: string): Promise<string[]> =>
      (await listMirrored<KubeObject>(backbone, { cluster: 'c1', kind: 'Subscription', namespace }))
        .map((o) => o.metadata.name ?? '')
        .sort();
    const names = async (namespace: string): Promise<unknown> => {
      const entry = await backbone.objects.get(namesKey('c1', 'Subscription', namespace));
      return entry === null || entry.operation !== 'PUT' ? undefined : entry.json<unknown>();
    };
    const first = await watcherFor(t, cluster, backbone, 'replica-a', 2);
    await first.synced();
    t.ok(
      await backbone.objects.get(indexedKey('c1', 'Subscription')),
      'the kind is marked indexed',
    );
    await cluster.client.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'other' },
    });
    for (const name of ['a', 'b']) await cluster.client.create(subscription(name));
    await cluster.client.create({
      ...subscription('c'),
      metadata: { name: 'c', namespace: 'other' },
    });
    await waitFor(
      'both namespaces listed',
      async () => (await list('default')).length === 2 && (await list('other')).length === 1,
    );
    t.same(((await names('default')) as string[]).sort(), ['a', 'b'], 'the index entry names both');
    t.same(await list('other'), ['c']);

    // A key written past the watcher is not in its index: listings read the index, not the keys.
    await backbone.objects.put(
      objectKey({ cluster: 'c1', kind: 'Subscription', namespace: 'default', name: 'stray' }),
      JSON.stringify(subscription('stray')),
    );
    t.same(await list('default'), ['a', 'b'], 'a name outside the index is not listed');

    await cluster.client.delete({ ...subscriptionRef, name: 'b' });
    // The name leaves the index after the deletion is published: wait for the index itself.
    await waitFor(
      'the deleted name gone',
      async () => JSON.stringify(await names('default')) === '["a"]',
    );
    t.same(await list('default'), ['a']);

    await first.stop();
    await cluster.client.delete({ ...subscriptionRef, name: 'a' });
    const second = await watcherFor(t, cluster, backbone, 'replica-b', 2);
    await second.synced();
    await waitFor('the entry of the emptied namespace removed', async () =>
      (await names('default')) === undefined ? true : undefined,
    );
    t.same(await list('default'), [], 'nothing listed where every object went meanwhile');
    t.same(await list('other'), ['c'], 'other namespaces keep their names');
    await cluster.client.create(subscription('d'));
    await waitFor('a new name after the restart', async () => (await list('default')).length === 1);
    t.same(await names('default'), ['d']);
  },
);

t.test(
  'watcher - a namespace with more objects of a kind than the index lists is marked so, and listed by its keys',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const watcher = await watcherFor(t, cluster, backbone, 'replica-a');
    await watcher.synced();
    await cluster.client.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'many' },
    });
    const count = nameIndexLimit + 1;
    const names = Array.from({ length: count }, (_, i) => `s${i}`);
    for (let i = 0; i < count; i += 32)
      await Promise.all(
        names
          .slice(i, i + 32)
          .map((name) =>
            cluster.client.create({ ...subscription(name), metadata: { name, namespace: 'many' } }),
          ),
      );
    const list = async () =>
      listMirrored<KubeObject>(backbone, {
        cluster: 'c1',
        kind: 'Subscription',
        namespace: 'many',
      });
    await waitFor('every object listed', async () => (await list()).length === count);
    const entry = async () =>
      (await backbone.objects.get(namesKey('c1', 'Subscription', 'many')))?.json<unknown>();
    t.same(await entry(), { tooMany: true }, 'the entry says too many, instead of the names');

    for (const name of names.slice(0, 2))
      await cluster.client.delete({ ...subscriptionRef, namespace: 'many', name });
    await waitFor('a list again below the limit', async () => {
      const value = await entry();
      return Array.isArray(value) && value.length === count - 2;
    });
    t.equal((await list()).length, count - 2);
  },
);

t.test(
  'watcher - a standby takes over when the active watcher dies, missing no change',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const active = await watcherFor(t, cluster, backbone, 'replica-a', 2);
    await active.synced();
    const standby = await watcherFor(t, cluster, backbone, 'replica-b', 2);
    t.notOk(standby.isLeading(), 'the second replica stands by');

    await active.stop({ releaseLease: false }); // dies as in a crash: the standby must wait the lease out
    await cluster.client.create(subscription('during-failover'));
    await standby.synced();
    t.ok(standby.isLeading(), 'the standby leads');
    await waitFor(
      'the change made during failover',
      async () => (await channelOf(backbone, 'during-failover')) === 'stable',
    );
    const lease = await cluster.client.get<
      KubeObject & { spec: { holderIdentity: string; leaseTransitions: number } }
    >({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: 'olmq-system',
      name: 'olmq-watcher',
    });
    t.equal(lease?.spec.holderIdentity, 'replica-b');
    t.equal(lease?.spec.leaseTransitions, 1);
  },
);

t.test(
  'watcher - a replica shutting down cleanly hands the lease to the standby at once',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const active = await watcherFor(t, cluster, backbone, 'replica-a', 60);
    await active.synced();
    const standby = await watcherFor(t, cluster, backbone, 'replica-b', 60);
    await active.stop();
    await standby.synced(); // well before the 60 s lease would have expired
    t.ok(standby.isLeading());
  },
);

t.test(
  'watcher - olmq_watcher_leading is 1 on the active replica and 0 on the standby',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const registries = { a: new Registry(), b: new Registry() };
    const leading = async (registry: Registry): Promise<number | undefined> => {
      const metric = (await registry.getMetricsAsJSON()).find(
        (m) => m.name === 'olmq_watcher_leading',
      );
      return metric?.values.find((v) => v.labels.cluster === 'c1')?.value;
    };
    const active = await watcherFor(t, cluster, backbone, 'replica-a', 60, registries.a);
    await active.synced();
    const standby = await watcherFor(t, cluster, backbone, 'replica-b', 60, registries.b);
    t.equal(await leading(registries.a), 1, 'the leader reports 1');
    t.equal(await leading(registries.b), 0, 'the standby reports 0');
    await active.stop();
    await standby.synced();
    t.equal(await leading(registries.a), 0, 'the former leader reports 0');
    t.equal(await leading(registries.b), 1, 'the new leader reports 1');
  },
);

t.test(
  'watcher - the olmq watcher process mirrors, serves readiness and exits 0 on SIGTERM',
  async (t) => {
    const cluster = await clusterFor(t);
    const server = await natsServerFor(t);
    const args = [
      'watcher',
      '--kubeconfig',
      cluster.fixture.kubeconfigPath,
      '--nats-url',
      server.url,
    ];
    args.push('--metrics-port', '0', '--cluster', 'c1', '--identity', 'proc-1');
    const child = spawn(process.execPath, [olmqBin, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    t.teardown(() => child.kill('SIGKILL'));
    const lines: Record<string, unknown>[] = [];
    createInterface({ input: child.stderr }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ msg: line });
      }
    });
    const started = await waitFor(
      'the started log line',
      () => lines.find((l) => l.msg === 'watcher started'),
      20_000,
    );
    const metricsUrl = String(started.metrics).replace('0.0.0.0', '127.0.0.1');
    await waitFor(
      'readiness',
      async () => (await fetch(`${metricsUrl}/readyz`)).status === 200,
      20_000,
    );
    await cluster.client.create(subscription('via-process'));
    const nc = await connect({ servers: server.url });
    t.teardown(() => nc.close());
    const backbone = await openBackbone(nc);
    await waitFor(
      'the subscription mirrored by the process',
      async () => (await channelOf(backbone, 'via-process')) === 'stable',
    );
    const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
    t.match(
      metrics,
      /olmq_watcher_changes_published_total\{cluster="c1",kind="Subscription",operation="put"\} [1-9]/,
    );
    child.kill('SIGTERM');
    t.equal(await exited, 0, 'clean exit on SIGTERM');
    const lease = await cluster.client.get<KubeObject & { spec: { holderIdentity: string } }>({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: 'olmq-system',
      name: 'olmq-watcher-c1',
    });
    t.equal(lease?.spec.holderIdentity, '', 'the lease was handed back');
  },
);

t.test(
  'watcher - a kind it may not list keeps it unsynced (not ready), instead of a silent gap',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    // A ServiceAccount that may list Namespaces and Subscriptions but not ConfigMaps.
    const sa = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'limited', namespace: 'olmq-system' },
    };
    await cluster.client.create(sa);
    const rules = [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['operators.coreos.com'],
        resources: ['subscriptions'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'create', 'update'],
      },
    ];
    await cluster.client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'limited' },
      rules,
    });
    await cluster.client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'limited' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'limited' },
      subjects: [{ kind: 'ServiceAccount', name: 'limited', namespace: 'olmq-system' }],
    });
    const tokenRequest = (await cluster.client.request(
      'POST',
      '/api/v1/namespaces/olmq-system/serviceaccounts/limited/token',
      'create',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
    )) as { status: { token: string } };
    const admin = cluster.fixture.kubeConfig;
    const limited = new KubeConfig();
    limited.loadFromClusterAndUser(admin.getCurrentCluster()!, {
      name: 'limited',
      token: tokenRequest.status.token,
    });
    const watcher = await startWatcher({
      cluster: { id: 'c1', kubeConfig: limited },
      backbone,
      log: capturingLogger('error').log,
      registry: new Registry(),
      identity: 'limited-1',
      leaseNamespace: 'olmq-system',
      leaseName: 'olmq-watcher',
      leaseDurationSeconds: 15,
      kinds: subscriptionKinds,
    });
    t.teardown(() => watcher.stop());
    await waitFor('leadership', () => watcher.isLeading(), 30_000);
    const synced = await Promise.race([
      watcher.synced().then(() => true),
      new Promise((r) => setTimeout(() => r(false), 2_000)),
    ]);
    t.equal(synced, false, 'ConfigMaps could not be listed, so the mirror is not synced');
  },
);

t.test(
  'kube client - typed errors: conflict on a stale resourceVersion, not found, already exists',
  async (t) => {
    const { client } = await clusterFor(t);
    const created = await client.create(subscription('s1'));
    await client.update({ ...created, spec: { ...(created.spec as object), channel: 'beta' } });
    await t.rejects(client.update(created), { code: 409, reason: 'Conflict' });
    await t.rejects(client.create(subscription('s1')), { code: 409, reason: 'AlreadyExists' });
    t.equal(
      await client.get({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        namespace: 'default',
        name: 'nope',
      }),
      undefined,
    );
    t.equal(
      await client.delete({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: 'default',
        name: 'nope',
      }),
      false,
    );
  },
);

t.test(
  'watcher - each mirrored version carries the signature of its parts, for triggers that read only some',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    const watcher = await watcherFor(t, cluster, backbone, 'replica-a');
    await watcher.synced();
    const subject = `$KV.${assets.objects}.${objectKey({ cluster: 'c1', kind: 'Subscription', namespace: 'default', name: 'parts' })}`;
    // The signature of the newest mirror message of the Subscription, once it shows `rv`.
    const signatureAt = async (rv: string | undefined): Promise<string | undefined> =>
      waitFor(`the mirror at resourceVersion ${String(rv)}`, async () => {
        const m = await backbone.jsm.streams
          .getMessage(`KV_${assets.objects}`, { last_by_subj: subject })
          .catch(() => undefined);
        const object = m?.json<KubeObject>();
        if (object?.metadata.resourceVersion !== rv) return undefined;
        return { signature: m?.header.has(partsHeader) ? m.header.get(partsHeader) : undefined };
      }).then((r) => r.signature);
    const parts: ObjectPart[] = [
      'metadata',
      'spec',
      'status',
      'status.state',
      'status.lastUpdated',
    ];
    const differing = (before: string | undefined, after: string | undefined): ObjectPart[] =>
      parts.filter((part) =>
        partsDiffer(before === undefined ? undefined : pickParts(before, parts), after, [part]),
      );

    const created = await cluster.client.create(subscription('parts'));
    const first = await signatureAt(created.metadata.resourceVersion);
    t.ok(first, 'the first version is signed too');
    const withStatus = await cluster.client.updateStatus({
      ...created,
      status: { state: 'UpgradePending', lastUpdated: '2026-11-22T00:00:00Z' },
    });
    const second = await signatureAt(withStatus.metadata.resourceVersion);
    t.same(
      differing(first, second),
      ['status', 'status.state', 'status.lastUpdated'],
      'a status write differs in the status fields it changed',
    );
    const moved = await cluster.client.update({
      ...withStatus,
      spec: { ...(subscription('parts')['spec'] as object), channel: 'beta' },
    });
    const third = await signatureAt(moved.metadata.resourceVersion);
    t.same(
      differing(second, third),
      ['metadata', 'spec'],
      'a spec change bumps metadata.generation',
    );
    const labelled = await cluster.client.update({
      ...moved,
      metadata: { ...moved.metadata, labels: { team: 'a' } },
    });
    t.same(differing(third, await signatureAt(labelled.metadata.resourceVersion)), ['metadata']);
  },
);
