// What a cluster costs a pool (issue 21): every function of this build in one process serves N
// clusters, each with its own durable consumers (one per queue and one per (queue, trigger
// kind): NATS 2.9 has one filter subject per consumer). For each N it prints the consumers per
// cluster, how long the pool took to open them, how long one more cluster takes to join the
// running pool, and what the idle pool costs: messages per second on NATS (pull requests,
// heartbeats, stall checks), nats-server CPU and memory, and the pool process's CPU.
//
//   npm run build && node dist/bench/pools.js [--clusters 1,10,50] [--idle-seconds 10]
//
// Every cluster id is served by one client of one devcluster (the clusters hold no work: the
// cost measured is the consumers'); nats-server is a child process with its monitoring port.
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { startDevcluster } from '../devcluster/index.js';
import { functionModules, functionNames } from '../functions/index.js';
import { openBackbone, type Backbone } from '../shared/bus/backbone.js';
import { startNatsServer } from '../shared/bus/nats-server.js';
import { assets, mirrorStream } from '../shared/bus/subjects.js';
import { KubeClient } from '../shared/kube/client.js';
import { ensureOlmApi } from '../shared/kube/olm-api.js';
import { ClusterMembership } from '../shared/runtime/cluster-membership.js';
import { createFunctionMetrics, createRegistry } from '../shared/runtime/metrics.js';
import { startFunctions, stopFunctions } from '../system/functions.js';

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '1,10,50' },
    'idle-seconds': { type: 'string', default: '10' },
  },
});
const sizes = (values.clusters ?? '').split(',').map(Number);
const idleSeconds = Number(values['idle-seconds']);
if (sizes.some((n) => !Number.isInteger(n) || n < 1) || !(idleSeconds > 0)) {
  process.stderr.write('pools: --clusters takes positive integers, --idle-seconds a number\n');
  process.exit(2);
}

interface Varz {
  cpu: number;
  mem: number;
  in_msgs: number;
  out_msgs: number;
}

async function varz(monitorUrl: string): Promise<Varz> {
  const response = await fetch(`${monitorUrl}/varz`);
  return (await response.json()) as Varz;
}

async function consumerCount(backbone: Backbone): Promise<number> {
  let count = 0;
  for (const stream of [assets.workStream, mirrorStream]) {
    for await (const _ of backbone.jsm.consumers.list(stream)) count++;
  }
  return count;
}

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const log = pino({ level: 'warn' });
const devcluster = await startDevcluster({ podReadyDelayMs: 0 });
const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(devcluster.kubeconfig());
const client = await KubeClient.fromKubeConfig('bench', kubeConfig, { userAgent: 'olmq-bench' });
await ensureOlmApi(client);

const results = [];
for (const clusters of sizes) {
  const server = await startNatsServer({ monitoring: true });
  const monitorUrl = server.monitorUrl ?? '';
  const nc = await connect({ servers: server.url });
  const backbone = await openBackbone(nc);
  const membership = new ClusterMembership(
    new Map(Array.from({ length: clusters }, (_, i) => [`c${i}`, client] as const)),
  );
  const registry = createRegistry();
  const opening = performance.now();
  const running = await startFunctions(functionNames, functionModules, {
    backbone,
    clients: membership,
    log,
    registry,
    metrics: createFunctionMetrics(registry),
    globalCatalogNamespace: 'olm',
    host: {},
  });
  const openMs = performance.now() - opening;
  const opened = await consumerCount(backbone);
  const perCluster = opened / clusters;

  // Idle: nothing to do but keep the consumes alive.
  const before = await varz(monitorUrl);
  const cpuBefore = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const after = await varz(monitorUrl);
  const cpu = process.cpuUsage(cpuBefore);

  const joining = performance.now();
  membership.set(`c${clusters}`, client);
  await until('the joining cluster to be served', async () => {
    return (await consumerCount(backbone)) === opened + perCluster;
  });
  const joinMs = performance.now() - joining;

  results.push({
    clusters,
    consumersPerCluster: perCluster,
    consumers: opened,
    openMs: Math.round(openMs),
    joinMs: Math.round(joinMs),
    idle: {
      natsMessagesPerSecond: Math.round(
        (after.in_msgs + after.out_msgs - before.in_msgs - before.out_msgs) / idleSeconds,
      ),
      natsServerCpuPercent: after.cpu,
      natsServerMemMiB: Math.round(after.mem / 2 ** 20),
      poolCpuPercent:
        Math.round(((cpu.user + cpu.system) / 1000 / (idleSeconds * 1000)) * 1000) / 10,
    },
  });
  await stopFunctions(running, 1_000);
  await nc.close();
  await server.stop();
}
client.close();
await devcluster.close();
process.stdout.write(`${JSON.stringify({ bench: 'pools', idleSeconds, results }, null, 2)}\n`);
