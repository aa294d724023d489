// The subscription-install benchmark in process mode, as production runs it: nats-server,
// `olmq devcluster` (pod-ready delay 0), `olmq watcher` and one `olmq run <function>` process per
// function of functions/index.ts; the catalogs served from this process. Started by
// `node dist/bench/subscription-install.js --processes` (options in its header). Costs are
// read from /proc and the processes' /metrics (bench/harness/process-costs.ts), per
// Subscription from its create until the whole system settled after it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNatsServer } from '../shared/bus/nats-server.js';
import { functionNames } from '../functions/index.js';
import { serveCatalog } from './harness/catalog.js';
import {
  difference,
  settle,
  snapshotAtStart,
  type ProcessCounters,
  type Snapshot,
  type SystemProcess,
} from './harness/process-costs.js';
import {
  killAll,
  launch,
  launchCluster,
  metricsUrlIn,
  olmq,
  processStats,
  stopAll,
} from './harness/processes.js';
import {
  largeCsvPackage,
  packages,
  prepareNamespace,
  round,
  SucceededCsvs,
  subscribe,
  summary,
  type BenchPackage,
} from './harness/subscriptions.js';

export interface ProcessBenchOptions {
  sequential: number;
  /** The burst when `bursts` is empty: 2 × namespaces Subscriptions across them. */
  namespaces: number;
  large: number;
  /** `SUBSCRIPTIONS:NAMESPACES` each. */
  bursts: string[];
  /** Each function's API request limit (`olmq run --kube-api-qps`; burst twice that). */
  kubeApiQps: number;
}

const started = performance.now();
/** Progress on stderr (stdout carries only the JSON). */
const progress = (what: string): void => {
  process.stderr.write(`[${Math.round(performance.now() - started)} ms] ${what}\n`);
};

interface Burst {
  subscriptions: number;
  namespaces: number;
}

/** A `--burst` value; exits 2 naming the flag when it is not one. */
function burstOf(text: string): Burst {
  const match = /^(\d+):(\d+)$/.exec(text);
  const subscriptions = Number(match?.[1]);
  const namespaces = Number(match?.[2]);
  if (match === null || namespaces < 1 || subscriptions < 1 || subscriptions > 2 * namespaces) {
    process.stderr.write(
      `subscription-install: --burst ${JSON.stringify(text)}: expected SUBSCRIPTIONS:NAMESPACES with at most two Subscriptions per namespace (e.g. 200:100)\n`,
    );
    process.exit(2);
  }
  return { subscriptions, namespaces };
}

const small = fileURLToPath(new URL('../../catalogs/example', import.meta.url));
const largeCatalog = fileURLToPath(
  new URL('../../test/fixtures/catalogs/operatorhub/stackgres-community', import.meta.url),
);

/** Runs `work` on every item, at most `size` at once. */
async function inBatches<T>(
  items: readonly T[],
  size: number,
  work: (item: T) => Promise<unknown>,
) {
  for (let i = 0; i < items.length; i += size)
    await Promise.all(items.slice(i, i + size).map(work));
}

/** Per-Subscription costs from the summed differences of the sequential phase. */
function report(
  processes: readonly SystemProcess[],
  total: ReturnType<typeof difference>,
  n: number,
) {
  const per = (v: number): number => round(v / n);
  const perEach = (values: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(values).map(([k, v]) => [k, per(v)]));
  const cpuMs = (name: string): number => (total.cpuSeconds[name] ?? 0) * 1000;
  const olmqNames = processes.filter((p) => p.metrics !== undefined).map((p) => p.name);
  const counters = Object.values(total.counters);
  const add = (pick: (c: ProcessCounters) => number): number =>
    counters.reduce((a, c) => a + pick(c), 0);
  const requests = (c: ProcessCounters): number =>
    Object.values(c.requests).reduce((a, b) => a + b, 0);
  return {
    processes: Object.fromEntries(
      processes.map((p) => [
        p.name,
        { cpuMs: per(cpuMs(p.name)), peakRssMb: processStats(p.pid).peakRssMb },
      ]),
    ),
    functions: Object.fromEntries(
      Object.entries(total.counters).map(([name, c]) => [
        name,
        {
          reconcilesByDefinition: perEach(c.reconciles),
          apiRequestsByVerb: perEach(c.requests),
          natsMessages: { in: per(c.natsIn), out: per(c.natsOut) },
        },
      ]),
    ),
    totals: {
      cpuMsWholeSystem: per(processes.reduce((a, p) => a + cpuMs(p.name), 0)),
      cpuMsOlmq: per(olmqNames.reduce((a, name) => a + cpuMs(name), 0)),
      reconciles: per(add((c) => Object.values(c.reconciles).reduce((a, b) => a + b, 0))),
      apiRequests: per(add(requests)),
      apiLists: per(add((c) => c.requests['list'] ?? 0)),
      natsMessages: { in: per(add((c) => c.natsIn)), out: per(add((c) => c.natsOut)) },
    },
  };
}

function accumulate(
  total: ReturnType<typeof difference> | undefined,
  from: Snapshot,
  to: Snapshot,
): ReturnType<typeof difference> {
  const step = difference(from, to);
  if (total === undefined) return step;
  const plus = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(
      [...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [
        k,
        (a[k] ?? 0) + (b[k] ?? 0),
      ]),
    );
  const counters: Record<string, ProcessCounters> = {};
  for (const [name, c] of Object.entries(step.counters)) {
    const t = total.counters[name];
    counters[name] = {
      reconciles: plus(t?.reconciles ?? {}, c.reconciles),
      requests: plus(t?.requests ?? {}, c.requests),
      natsIn: (t?.natsIn ?? 0) + c.natsIn,
      natsOut: (t?.natsOut ?? 0) + c.natsOut,
      mirrored: (t?.mirrored ?? 0) + c.mirrored,
    };
  }
  return { cpuSeconds: plus(total.cpuSeconds, step.cpuSeconds), counters };
}

/** Runs the process-mode benchmark and prints its JSON. */
export async function runProcessBench(options: ProcessBenchOptions): Promise<void> {
  const bursts = (
    options.bursts.length > 0 ? options.bursts : [`${2 * options.namespaces}:${options.namespaces}`]
  ).map(burstOf);
  const dir = mkdtempSync(join(tmpdir(), 'olmq-bench-subscriptions-'));
  const nats = await startNatsServer();
  // Stopped from outside (a timeout, Ctrl-C): leave no process of the system behind.
  const abort = (): void => {
    killAll();
    void nats.kill().finally(() => process.exit(1));
  };
  process.once('SIGTERM', abort).once('SIGINT', abort);
  try {
    const cluster = await launchCluster(dir, nats.url);
    const { admin } = cluster;
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olm' } });
    const processes: SystemProcess[] = [
      { name: 'nats-server', pid: nats.pid },
      { name: 'devcluster', pid: cluster.devcluster.pid ?? 0 },
      { name: 'watcher', pid: cluster.watcher.pid ?? 0, metrics: cluster.watcherMetrics },
    ];
    const qps = String(options.kubeApiQps);
    for (const name of functionNames) {
      let metrics: string | undefined;
      // prettier-ignore
      const child = await launch([olmq, 'run', name, '--kubeconfig', cluster.kubeconfigPath,
        '--cluster', 'c1', '--nats-url', nats.url, '--metrics-port', '0', '--log-level', 'info',
        '--kube-api-qps', qps, '--kube-api-burst', String(2 * options.kubeApiQps)],
        /function running/, {}, (line) => (metrics ??= metricsUrlIn(line)));
      if (metrics === undefined) throw new Error(`olmq run ${name} logged no metrics URL`);
      processes.push({ name, pid: child.pid ?? 0, metrics });
      progress(`olmq run ${name} ready`);
    }
    const served = [await serveCatalog(admin, 'community', small)];
    if (options.large > 0) served.push(await serveCatalog(admin, 'large', largeCatalog));
    const csvs = await SucceededCsvs.open(admin);

    // One Subscription at a time into a namespace prepared and settled beforehand.
    const single: number[] = [];
    let total: ReturnType<typeof difference> | undefined;
    let unsettled = 0;
    for (let i = 0; i < options.sequential; i++) {
      const ns = `seq-${i}`;
      await prepareNamespace(admin, ns);
      if (!(await settle(processes)).settled) unsettled++;
      const before = await snapshotAtStart(processes);
      single.push(await subscribe(admin, csvs, ns, packages[0]));
      const after = await settle(processes);
      if (!after.settled) unsettled++;
      total = accumulate(total, before, after);
      progress(
        `single ${i}: ${Math.round(single[i] ?? 0)} ms${after.settled ? '' : ' (not settled)'}`,
      );
    }
    const perSubscription =
      total === undefined ? undefined : report(processes, total, options.sequential);

    const burstResults = [];
    for (const [b, burst] of bursts.entries()) {
      const names = Array.from({ length: burst.namespaces }, (_, i) => `burst${b}-${i}`);
      // Namespaces and OperatorGroups exist, and the system settled, before the clock starts.
      await inBatches(names, 20, (ns) => prepareNamespace(admin, ns));
      if (!(await settle(processes, 300_000)).settled) unsettled++;
      progress(`burst ${burst.subscriptions}:${burst.namespaces}: namespaces ready`);
      const t0 = performance.now();
      const latencies = await Promise.all(
        Array.from({ length: burst.subscriptions }, (_, i) =>
          subscribe(
            admin,
            csvs,
            names[i % burst.namespaces] as string,
            packages[Math.floor(i / burst.namespaces)] as BenchPackage,
          ),
        ),
      );
      const wallMs = performance.now() - t0;
      progress(`burst ${burst.subscriptions}:${burst.namespaces}: ${Math.round(wallMs)} ms`);
      // The work after the last CSV succeeded (copies, RBAC, status) until the system is quiet.
      if (!(await settle(processes, 300_000)).settled) unsettled++;
      const settledMs = performance.now() - t0;
      burstResults.push({
        ...burst,
        wallMs: round(wallMs),
        settledMs: round(settledMs),
        ...summary(latencies),
        // VmHWM: the highest since each process started, so this burst's or an earlier phase's.
        peakRssMb: Object.fromEntries(
          processes.map((p) => [p.name, processStats(p.pid).peakRssMb]),
        ),
      });
    }

    const large: number[] = [];
    for (let i = 0; i < options.large; i++) {
      const ns = `large-${i}`;
      await prepareNamespace(admin, ns);
      await settle(processes);
      large.push(await subscribe(admin, csvs, ns, largeCsvPackage));
    }

    process.stdout.write(
      `${JSON.stringify({
        benchmark: 'subscription-install',
        mode: 'processes',
        note: 'Subscription create → CSV Succeeded; one process per function, pod-ready delay 0; per Subscription: create → settled, averaged over the sequential phase',
        kubeApiQps: options.kubeApiQps,
        single: { ...summary(single), perSubscription },
        bursts: burstResults,
        ...(options.large > 0
          ? { largeCsv: { bundle: largeCsvPackage.csv, ...summary(large) } }
          : {}),
        unsettled,
      })}\n`,
    );
    csvs.stop();
    admin.close();
    await stopAll();
    for (const s of served) await s.stop(0);
  } catch (error) {
    killAll();
    throw error;
  } finally {
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
