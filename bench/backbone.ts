// Benchmark of the event backbone, end to end: an API write → the watcher → JetStream → a
// function replica → its API write, timed by a watch on the result. Everything runs as its own
// process, as in production: the devcluster, nats-server, `olmq watcher`, and 1, 2 or 4 replicas
// of the echo test function (for each ConfigMap x it writes x-echo).
//
//   npm run build && node dist/bench/backbone.js [--rate 1000] [--seconds 5] [--warmup-seconds 2]
//     [--replicas 1,2,4] [--burst 2000] [--concurrency 32]
//   (concurrency: reconciles in flight per replica)
//
// Prints one JSON object: per replica count, latency p50/p99 at the offered rate and the
// throughput reached when items are created as fast as possible, each with the CPU time per item
// of every process (a figure that holds when the machine is shared, unlike the timings) and the
// cores the whole machine kept busy (near the core count, the pipeline is CPU-bound).
//
// Latency is measured after a warm-up at the same rate: processes that just started run
// unoptimised code for their first thousands of items, a transient a long-running deployment
// does not see. The per-second worst latency shows whether a run held steady.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startNatsServer } from '../shared/bus/nats-server.js';
import { echoOfLabel } from '../test/fixtures/echo-function.js';
import { killAll, launch, launchCluster, processStats, stopAll } from './harness/processes.js';

const root = join(import.meta.dirname, '..', '..');
const replicaScript = join(root, 'dist', 'test', 'fixtures', 'echo-replica.js');

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
    'warmup-seconds': { type: 'string', default: '2' },
    replicas: { type: 'string', default: '1,2,4' },
    burst: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '32' },
  },
});
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const warmupSeconds = Number(values['warmup-seconds']);
const replicaCounts = values.replicas.split(',').map(Number);
const burst = Number(values.burst);
const concurrency = Number(values.concurrency);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-bench-backbone-'));
  const nats = await startNatsServer();
  try {
    const {
      kubeconfigPath,
      admin: client,
      devcluster,
      watcher,
    } = await launchCluster(dir, nats.url);

    // Echoes seen by a watch, with their arrival times.
    const seen = new Map<string, number>();
    const created = new Map<string, number>();
    // Over the admin client's HTTP/2 connection: this process shares the machine it measures.
    const watch = await client.watch(
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default' },
      { labelSelector: echoOfLabel },
      ({ type, object }) => {
        const name = object.metadata.name ?? '';
        if (type === 'ADDED' && !seen.has(name)) seen.set(name, performance.now());
      },
    );

    const results: Record<string, unknown>[] = [];
    const replicas: ChildProcess[] = [];
    // CPU seconds so far of each process of the pipeline (replicas summed), and of this one.
    const cpu = (): { wall: number; seconds: Record<string, number> } => {
      const of = (child: ChildProcess): number =>
        child.pid === undefined ? 0 : processStats(child.pid).cpuSeconds;
      const self = process.cpuUsage();
      return {
        wall: performance.now(),
        seconds: {
          devcluster: of(devcluster),
          natsServer: processStats(nats.pid).cpuSeconds,
          watcher: of(watcher),
          replicas: replicas.reduce((sum, r) => sum + of(r), 0),
          benchClient: (self.user + self.system) / 1e6,
        },
      };
    };
    // CPU milliseconds per item of each process between two readings, and the cores all of them
    // (this one included) kept busy meanwhile.
    const cpuPerItem = (
      before: ReturnType<typeof cpu>,
      after: ReturnType<typeof cpu>,
      items: number,
    ): Record<string, number> => {
      const out: Record<string, number> = {};
      let pipeline = 0;
      let all = 0;
      for (const [name, seconds] of Object.entries(after.seconds)) {
        const spent = seconds - (before.seconds[name] ?? 0);
        out[name] = Math.round(((spent * 1000) / items) * 100) / 100;
        all += spent;
        if (name !== 'benchClient') pipeline += spent;
      }
      out['pipelineTotal'] = Math.round(((pipeline * 1000) / items) * 100) / 100;
      out['coresBusy'] = Math.round((all / ((after.wall - before.wall) / 1000)) * 100) / 100;
      return out;
    };
    let serial = 0;
    const createItem = async (): Promise<string> => {
      const name = `item-${serial++}`;
      await client.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'default', labels: { 'olm.managed': 'true' } },
        data: { v: name },
      });
      created.set(name, performance.now());
      return name;
    };
    // Creates `total` items at the offered rate; resolves with their names once all are created.
    const offer = async (total: number): Promise<string[]> => {
      const names: string[] = [];
      const start = performance.now();
      const inflight: Promise<void>[] = [];
      for (let i = 0; i < total; i++) {
        const due = start + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
        inflight.push(createItem().then((n) => void names.push(n)));
      }
      await Promise.all(inflight);
      return names;
    };
    const waitEchoes = async (names: string[], timeoutMs: number): Promise<void> => {
      const deadline = performance.now() + timeoutMs;
      while (names.some((n) => !seen.has(`${n}-echo`)) && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    for (const count of replicaCounts) {
      while (replicas.length < count) {
        const env = {
          NATS_URL: nats.url,
          KUBECONFIG: kubeconfigPath,
          CLUSTER: 'c1',
          LEASE_TTL_MS: '15000',
          KUBE_QPS: '5000', // measure the pipeline, not the client's rate limit
          CONCURRENCY: String(concurrency),
          ECHO_QUIET: '1',
        };
        replicas.push(await launch([replicaScript], /^ready$/, env));
      }
      await waitEchoes([await createItem()], 10_000); // everything connected
      await waitEchoes(await offer(rate * warmupSeconds), 60_000);

      // Latency at the offered rate.
      const cpuStart = cpu();
      const start = performance.now();
      const names = await offer(rate * seconds);
      const offeredSeconds = (performance.now() - start) / 1000;
      await waitEchoes(names, 60_000);
      const cpuOffered = cpuPerItem(cpuStart, cpu(), names.length);
      // The worst latency of the items offered in each second.
      const worstPerSecond: number[] = [];
      for (const n of names) {
        const second = Math.floor(((created.get(n) ?? start) - start) / 1000);
        const latency = (seen.get(`${n}-echo`) ?? Number.NaN) - (created.get(n) ?? Number.NaN);
        worstPerSecond[second] = Math.round(Math.max(worstPerSecond[second] ?? 0, latency));
      }
      const latencies = names
        .map((n) => (seen.get(`${n}-echo`) ?? Number.NaN) - (created.get(n) ?? Number.NaN))
        .filter((l) => !Number.isNaN(l))
        .sort((a, b) => a - b);

      // Throughput: a burst created as fast as the API takes it.
      const burstNames: string[] = [];
      const cpuBurstStart = cpu();
      const burstStart = performance.now();
      const writers = Array.from({ length: 32 }, async () => {
        while (burstNames.length < burst) {
          burstNames.push('');
          burstNames[burstNames.length - 1] = await createItem();
        }
      });
      await Promise.all(writers);
      await waitEchoes(burstNames, 120_000);
      const cpuBurst = cpuPerItem(cpuBurstStart, cpu(), burstNames.length);
      const burstDone = Math.max(...burstNames.map((n) => seen.get(`${n}-echo`) ?? Number.NaN));

      results.push({
        replicas: count,
        offeredRatePerSecond: rate,
        warmupSeconds,
        achievedOfferRatePerSecond: Math.round(names.length / offeredSeconds),
        items: names.length,
        completed: latencies.length,
        latencyMs: {
          p50: Math.round(percentile(latencies, 50) * 10) / 10,
          p90: Math.round(percentile(latencies, 90) * 10) / 10,
          p99: Math.round(percentile(latencies, 99) * 10) / 10,
          max: Math.round((latencies.at(-1) ?? Number.NaN) * 10) / 10,
          worstPerSecond,
        },
        cpuMsPerItem: cpuOffered,
        burst: {
          items: burstNames.length,
          itemsPerSecond: Math.round(burstNames.length / ((burstDone - burstStart) / 1000)),
          cpuMsPerItem: cpuBurst,
        },
      });
    }
    process.stdout.write(
      `${JSON.stringify({ benchmark: 'backbone', targets: { p50Ms: 20, p99Ms: 100, atRatePerSecond: 1000 }, results }, null, 2)}\n`,
    );
    watch.stop();
    client.close();
  } finally {
    await stopAll();
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    killAll();
    process.exit(1);
  },
);
