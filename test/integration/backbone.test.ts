import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { startWatcher } from '../../watcher/index.js';
import { mirroredKinds } from '../../watcher/kinds.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import type { KubeClient } from '../../shared/kube/client.js';
import { type KubeObject } from '../../shared/kube/client.js';
import { executeWrites } from '../../shared/kube/executor.js';
import { FunctionHost, StaleDecisionError } from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { decideEcho, echoFunction, echoOfAnnotation } from '../fixtures/echo-function.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';
import { natsServerFor } from '../harness/nats.js';
import { repoRoot } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';
import { openBackbone } from '../../shared/bus/backbone.js';
import { connect } from '@nats-io/transport-node';

const configMapKind = mirroredKinds.filter((k) => k.kind === 'ConfigMap');
const cmRef = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  namespace: 'default',
  name,
});

function source(name: string, value: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels: { 'olm.managed': 'true' } },
    data: { value },
  };
}

async function watch(
  t: Test,
  id: string,
  cluster: Awaited<ReturnType<typeof clusterFor>>,
  backbone: Backbone,
) {
  const watcher = await startWatcher({
    cluster: { id, kubeConfig: cluster.fixture.kubeConfig },
    backbone,
    log: capturingLogger('warn').log,
    registry: new Registry(),
    identity: `watcher-${id}`,
    leaseNamespace: 'olmq-system',
    leaseName: 'olmq-watcher',
    leaseDurationSeconds: 15,
    kinds: configMapKind,
  });
  t.teardown(() => watcher.stop());
  await watcher.synced();
  return watcher;
}

async function echoHost(
  t: Test,
  backbone: Backbone,
  clients: Map<string, KubeClient>,
  registry = new Registry(),
) {
  const host = new FunctionHost(
    backbone,
    echoFunction(backbone),
    capturingLogger('warn').log,
    createFunctionMetrics(registry),
    {
      baseBackoffMs: 20,
    },
    clients,
  );
  await host.start();
  t.teardown(() => host.stop(2_000));
  return host;
}

// Every source's echo exists and carries the source's current digest; no echo without source.
async function converged(client: KubeClient): Promise<boolean> {
  const { items } = await client.list(cmRef(''), { labelSelector: 'olm.managed=true' });
  const byName = new Map(items.map((i) => [i.metadata.name ?? '', i]));
  const sources = items.filter((i) => !(i.metadata.name ?? '').endsWith('-echo'));
  const echoes = items.filter((i) => (i.metadata.name ?? '').endsWith('-echo'));
  if (echoes.length !== sources.length) return false;
  return sources.every((s) => {
    const echo = byName.get(`${s.metadata.name ?? ''}-echo`);
    return (
      echo !== undefined &&
      echo.metadata.annotations?.[echoOfAnnotation] !== undefined &&
      echoMatches(s, echo)
    );
  });
}

// The watcher's digest is of {data, binaryData}; compare through a fresh mirror trim.
function echoMatches(sourceObject: KubeObject, echo: KubeObject): boolean {
  const kind = configMapKind[0];
  if (kind === undefined) return false;
  const digest = kind.trim(sourceObject).metadata.annotations?.['olmq.io/content-digest'];
  return echo.metadata.annotations?.[echoOfAnnotation] === digest;
}

// The kill -9 test starts a hundred node processes one after another: minutes on a loaded
// 2-core machine, past the suite's 300 s per file.
t.setTimeout(900_000);

t.test(
  'backbone - a change flows from the API through the watcher and a function back to the API',
  async (t) => {
    const cluster = await clusterFor(t);
    const backbone = await backboneFor(t);
    await watch(t, 'c1', cluster, backbone);
    await echoHost(t, backbone, new Map([['c1', cluster.client]]));

    const created = await cluster.client.create(source('a', 'one'));
    await waitFor('the echo of a', () => converged(cluster.client));
    await cluster.client.update({ ...created, data: { value: 'two' } });
    await waitFor('the echo to follow the update', () => converged(cluster.client));
    await cluster.client.delete(cmRef('a'));
    await waitFor(
      'the echo to go with its source',
      async () => (await cluster.client.get(cmRef('a-echo'))) === undefined,
    );
  },
);

t.test(
  'backbone - two replicas racing on the same key never both land a stale decision',
  async (t) => {
    const { client } = await clusterFor(t);
    await client.create(source('raced', 'x'));
    const echo = await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'raced-echo',
        namespace: 'default',
        annotations: { [echoOfAnnotation]: 'old' },
      },
    });
    // Both replicas decided from the same snapshot (same resourceVersion) with different views.
    const first = decideEcho({
      namespace: 'default',
      name: 'raced',
      sourceDigest: 'digest-1',
      echo,
    });
    const second = decideEcho({
      namespace: 'default',
      name: 'raced',
      sourceDigest: 'digest-2',
      echo,
    });
    const results = await Promise.allSettled([
      executeWrites(client, first.writes, 'a'),
      executeWrites(client, second.writes, 'b'),
    ]);
    const landed = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    t.equal(landed.length, 1, 'exactly one decision lands');
    t.equal(refused.length, 1);
    t.type(refused[0]?.reason, StaleDecisionError, 'the other is told to re-read and decide again');
  },
);

t.test(
  'backbone - nats-server restarted mid-run: watcher and functions reconnect and catch up',
  async (t) => {
    const cluster = await clusterFor(t);
    const server = await natsServerFor(t);
    const nc = await connect({
      servers: server.url,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 100,
    });
    t.teardown(() => nc.close());
    const backbone = await openBackbone(nc);
    await watch(t, 'c1', cluster, backbone);
    await echoHost(t, backbone, new Map([['c1', cluster.client]]));
    for (let i = 0; i < 20; i++) await cluster.client.create(source(`before-${i}`, 'v'));
    await server.restart();
    for (let i = 0; i < 20; i++) await cluster.client.create(source(`after-${i}`, 'v'));
    await waitFor('every echo after the restart', () => converged(cluster.client), 60_000, 100);
    const { items } = await cluster.client.list(cmRef(''), { labelSelector: 'olm.managed=true' });
    t.equal(items.length, 80, '40 sources and their 40 echoes');
  },
);

t.test(
  'backbone - one function pool serves two clusters; metrics are labelled per cluster',
  async (t) => {
    const one = await clusterFor(t, 'c1');
    const two = await clusterFor(t, 'c2');
    const backbone = await backboneFor(t);
    await watch(t, 'c1', one, backbone);
    await watch(t, 'c2', two, backbone);
    const registry = new Registry();
    await echoHost(
      t,
      backbone,
      new Map([
        ['c1', one.client],
        ['c2', two.client],
      ]),
      registry,
    );
    await one.client.create(source('in-one', 'x'));
    await two.client.create(source('in-two', 'y'));
    await waitFor(
      'both clusters converged',
      async () => (await converged(one.client)) && (await converged(two.client)),
    );
    t.ok(await one.client.get(cmRef('in-one-echo')));
    t.equal(
      await one.client.get(cmRef('in-two-echo')),
      undefined,
      'no cross-talk between clusters',
    );
    const metrics = await registry.metrics();
    t.match(
      metrics,
      /olmq_work_processed_total\{cluster="c1",function="echo",outcome="success"\} [1-9]/,
    );
    t.match(
      metrics,
      /olmq_work_processed_total\{cluster="c2",function="echo",outcome="success"\} [1-9]/,
    );
  },
);

t.test(
  'backbone - kill -9 of replicas mid-processing, 100 times: nothing lost, nothing applied twice',
  async (t) => {
    const cluster = await clusterFor(t);
    const server = await natsServerFor(t);
    const nc = await connect({ servers: server.url });
    t.teardown(() => nc.close());
    const leaseTtlMs = 1_000;
    const backbone = await openBackbone(nc, { leaseTtlMs });
    await watch(t, 'c1', cluster, backbone);

    const env = {
      ...process.env,
      NATS_URL: server.url,
      KUBECONFIG: cluster.fixture.kubeconfigPath,
      CLUSTER: 'c1',
      LEASE_TTL_MS: String(leaseTtlMs),
    };
    const script = join(repoRoot, 'dist', 'test', 'fixtures', 'echo-replica.js');
    // Three replicas; each is killed right after it starts its second reconcile (mid-work) and
    // replaced at once, while new items keep arriving for as long as the killing goes on.
    let kills = 0;
    let loads = 0;
    let created = 0;
    let stopping = false;
    const live = new Set<ChildProcess>();
    const createItems = async (count: number): Promise<void> => {
      const names = Array.from({ length: count }, () => `item-${created++}`);
      await Promise.all(names.map((name) => cluster.client.create(source(name, name))));
    };
    const spawnReplica = (): void => {
      const child = spawn(process.execPath, [script], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      live.add(child);
      child.once('exit', () => live.delete(child));
      let ownLoads = 0;
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (!line.startsWith('load ')) return;
        loads++;
        if (++ownLoads !== 2 || kills >= 100 || stopping) return;
        kills++;
        child.kill('SIGKILL');
        spawnReplica();
      });
    };
    t.teardown(() => {
      stopping = true;
      for (const child of live) child.kill('SIGKILL');
    });
    for (let i = 0; i < 3; i++) spawnReplica();
    while (kills < 100) {
      const before = loads;
      await createItems(3);
      await waitFor(
        'replicas to keep working',
        () => loads >= before + 2 || kills >= 100,
        60_000,
        5,
      );
    }
    t.equal(kills, 100, 'replicas were killed 100 times while working');
    await waitFor('every item to be applied', () => converged(cluster.client), 120_000, 200);
    const { items } = await cluster.client.list(cmRef(''), { labelSelector: 'olm.managed=true' });
    t.equal(items.length, created * 2, `all ${created} items have exactly one echo, none lost`);
  },
);
