// Pools (issue 21): two pools of every function on one NATS, each serving one of two devclusters
// from a watched kubeconfig directory. Each pool reconciles only its own cluster's keys; a
// cluster moved from one pool's directory to the other's at run time (no restart) is served by
// the pool it joined.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { functionModules, functionNames } from '../../functions/index.js';
import { openBackbone } from '../../shared/bus/backbone.js';
import type { RunningFunction } from '../../shared/runtime/function-runner.js';
import { createFunctionMetrics, createRegistry } from '../../shared/runtime/metrics.js';
import { startFunctions, stopFunctions } from '../../system/functions.js';
import { connectNats } from '../../system/nats.js';
import { startPool, type Pool } from '../../system/pool.js';
import { capturingLogger } from '../harness/log.js';
import { natsServerFor } from '../harness/nats.js';
import { communityCatalogFor, etcdSucceeded, subscribeEtcd } from '../harness/subscription.js';
import { systemFor } from '../harness/system.js';
import { waitFor } from '../harness/wait.js';

/** A pool of every function, in this process, as `olmq run` hosts one (system/pool.ts). */
interface PoolFixture {
  pool: Pool;
  dir: string;
  /** The pool's log lines (debug: every reconcile is a `reconciled` line with its cluster). */
  lines: Record<string, unknown>[];
  /** olmq_served_clusters of the pool's registry. */
  served(): Promise<number>;
}

async function poolFor(t: Test, name: string, natsUrl: string): Promise<PoolFixture> {
  const dir = mkdtempSync(join(tmpdir(), `olmq-pool-${name}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { log, lines } = capturingLogger('debug');
  const registry = createRegistry();
  const nc = await connectNats({ servers: [natsUrl] }, `olmq-pool-${name}`, log);
  t.teardown(() => nc.close());
  const backbone = await openBackbone(nc, { leaseTtlMs: 2_000 });
  const pool = await startPool({
    source: { dir },
    registry,
    log,
    userAgent: `olmq-test-pool-${name}`,
    closeAfterMs: 1_000,
  });
  t.teardown(() => pool.stop());
  let running: RunningFunction[] = [];
  t.teardown(() => stopFunctions(running, 1_000));
  running = await startFunctions(functionNames, functionModules, {
    backbone,
    clients: pool.membership,
    log,
    registry,
    metrics: createFunctionMetrics(registry),
    globalCatalogNamespace: 'olm',
    host: { baseBackoffMs: 20, contentionDelayMs: 20 },
  });
  const served = async (): Promise<number> => {
    const metric = (await registry.getMetricsAsJSON()).find(
      (m) => m.name === 'olmq_served_clusters',
    );
    return metric?.values[0]?.value ?? -1;
  };
  return { pool, dir, lines, served };
}

const reconciled = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => l['msg'] === 'reconciled');
const clustersOf = (lines: Record<string, unknown>[]) =>
  [...new Set(lines.map((l) => String(l['cluster'])))].sort();
const logged = (lines: Record<string, unknown>[], msg: string, cluster: string) =>
  lines.filter((l) => l['msg'] === msg && l['cluster'] === cluster);

t.test(
  'pools - each pool serves only its clusters; a cluster moves between running pools',
  async (t) => {
    const nats = await natsServerFor(t);
    const { log } = capturingLogger('warn');
    // Two devclusters, each with its watcher (one per cluster, as always), no functions.
    const systems = [];
    for (const cluster of ['c1', 'c2'])
      systems.push(
        await systemFor(t, {
          log,
          clusterId: cluster,
          natsUrl: nats.url,
          backbone: { leaseTtlMs: 2_000 },
          watcher: { identity: `watcher-${cluster}`, leaseName: 'olmq-watcher' },
          functions: { names: [] },
        }),
      );
    const [one, two] = systems as [(typeof systems)[0], (typeof systems)[0]];
    const a = await poolFor(t, 'a', nats.url);
    const b = await poolFor(t, 'b', nats.url);
    t.equal(await a.served(), 0, 'pool A starts empty, waiting for clusters');

    // Each pool is given its cluster at run time: the directories were empty at start.
    copyFileSync(one.fixture.kubeconfigPath, join(a.dir, 'c1.yaml'));
    copyFileSync(two.fixture.kubeconfigPath, join(b.dir, 'c2.yaml'));
    await waitFor('pool A to serve c1', async () => (await a.served()) === 1);
    await waitFor('pool B to serve c2', async () => (await b.served()) === 1);
    t.ok(logged(a.lines, 'cluster joined the pool', 'c1').length === 1, 'the join is logged');

    await communityCatalogFor(t, one.client);
    await communityCatalogFor(t, two.client);
    await subscribeEtcd(one.client, 'first');
    await subscribeEtcd(two.client, 'first');
    await etcdSucceeded(one.client, 'first');
    await etcdSucceeded(two.client, 'first');
    t.same(clustersOf(reconciled(a.lines)), ['c1'], "pool A reconciled only c1's keys");
    t.same(clustersOf(reconciled(b.lines)), ['c2'], "pool B reconciled only c2's keys");

    // c2 joins pool A and leaves pool B, neither restarted.
    copyFileSync(two.fixture.kubeconfigPath, join(a.dir, 'c2.yaml'));
    rmSync(join(b.dir, 'c2.yaml'));
    await waitFor('pool A to serve c1 and c2', async () => (await a.served()) === 2);
    await waitFor('pool B to serve nothing', async () => (await b.served()) === 0);
    t.ok(logged(b.lines, 'cluster left the pool', 'c2').length === 1, 'the leave is logged');
    // Every host of B (one per definition) has closed c2's consumers.
    const hosts = hostsOf(b.lines);
    await waitFor(
      "pool B's hosts to close c2's consumers",
      () =>
        logged(b.lines, 'stopped serving cluster: its consumers are closed', 'c2').length === hosts,
      20_000,
    );
    const bAfterLeave = reconciled(b.lines).length;

    await subscribeEtcd(two.client, 'second');
    await etcdSucceeded(two.client, 'second');
    const second = (l: Record<string, unknown>) =>
      l['cluster'] === 'c2' && String(l['key']).startsWith('second');
    t.ok(reconciled(a.lines).some(second), "pool A reconciled the new Subscription's keys");
    t.notOk(
      reconciled(b.lines).slice(bAfterLeave).some(second),
      'pool B reconciled nothing of the new Subscription after c2 left it',
    );
    t.same(clustersOf(reconciled(b.lines)), ['c2'], 'pool B never reconciled a c1 key');
  },
);

// How many function hosts (definitions) a pool runs: one `function started` line per function
// lists its definitions.
function hostsOf(lines: Record<string, unknown>[]): number {
  return lines
    .filter((l) => l['msg'] === 'function started')
    .reduce((sum, l) => sum + (Array.isArray(l['definitions']) ? l['definitions'].length : 0), 0);
}
