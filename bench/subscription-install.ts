// Benchmark of the whole pipeline as a user drives it: Subscription created → CSV Succeeded,
// through the watcher and every function (catalog, resolve, plan, install, rbac, copy-csv) in
// this process, on the devcluster (pod-ready delay 0) with a real nats-server, and a catalog
// served by a real api.Registry server over the repository's catalogs/example.
// Run (after `npx tsc -p tsconfig.json`):
//   node dist/bench/subscription-install.js [--sequential 10] [--namespaces 100] [--large 3]
// Prints one JSON object: p50/p99 of single Subscriptions (one at a time on a settled system,
// and back to back), and of a burst of
// two Subscriptions (etcd, hawtio-operator) in each of `namespaces` namespaces at once; and of
// `--large` single installs of stackgres-community v1.18.8, whose 1 MB CSV (and InstallPlan)
// exceed NATS's default 1 MiB max payload and travel by reference (shared/bus/large-values.ts).
// `single.perSubscription` is what one Subscription costs, from its create until the system
// settled after it; `single.perNamespace` what preparing its namespace (Namespace, OperatorGroup,
// settled) cost before it.
//
// Process mode, as production runs it (./subscription-install-processes.ts):
//   node dist/bench/subscription-install.js --processes [--sequential 20] [--namespaces 100]
//     [--large 0] [--burst 200:100 --burst 1000:500] [--kube-api-qps 200]
// runs nats-server, `olmq devcluster`, `olmq watcher` and one `olmq run <function>` per function
// as processes, and reports per process CPU ms per Subscription and peak RSS, per function its
// reconciles, API requests by verb and NATS messages, totals, and each burst (`--burst S:N`: S
// Subscriptions across N namespaces at once, two per namespace; default 2×--namespaces across
// --namespaces) with its wall time, p50, p99 and each process's peak RSS.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { KubeClient } from '../shared/kube/client.js';
import { directGetLastSubject, mirrorStream, mirrorSubjectPrefix } from '../shared/bus/subjects.js';
import { startSystem } from '../system/index.js';
import { serveCatalog } from './harness/catalog.js';
import { settled } from './harness/settled.js';
import {
  largeCsvPackage,
  packages,
  perEach,
  prepareNamespace,
  round,
  SucceededCsvs,
  subscribe as subscribeWith,
  summary,
} from './harness/subscriptions.js';

const { values } = parseArgs({
  options: {
    sequential: { type: 'string', default: '10' },
    namespaces: { type: 'string', default: '100' },
    large: { type: 'string', default: '3' },
    processes: { type: 'boolean', default: false },
    burst: { type: 'string', multiple: true, default: [] },
    'kube-api-qps': { type: 'string', default: '200' },
  },
});
if (values.processes) {
  const { runProcessBench } = await import('./subscription-install-processes.js');
  await runProcessBench({
    sequential: Number(values.sequential),
    namespaces: Number(values.namespaces),
    large: Number(values.large),
    bursts: values.burst,
    kubeApiQps: Number(values['kube-api-qps']),
  });
  process.exit(0);
}
const largeCount = Number(values.large);
const largePackage = fileURLToPath(
  new URL('../../test/fixtures/catalogs/operatorhub/stackgres-community', import.meta.url),
);
const sequential = Number(values.sequential);
const namespaceCount = Number(values.namespaces);
const small = fileURLToPath(new URL('../../catalogs/example', import.meta.url));

const log = pino({ level: process.env.OLMQ_LOG_LEVEL ?? 'error' });
const system = await startSystem({
  log,
  podReadyDelayMs: 0,
  clusterId: 'c1',
  client: { userAgent: 'olmq', qps: 5000, burst: 5000 },
  // The watcher's requests (watches, lease renewals) are not counted with the functions'.
  watcher: { identity: 'bench', leaseName: 'olmq-watcher', registry: new Registry() },
  functions: { host: { concurrency: 16, baseBackoffMs: 50 }, stopGraceMs: 5_000 },
});
const { nc, registry } = system;
const admin = await KubeClient.fromKubeConfig('c1', system.cluster.kubeConfig, {
  userAgent: 'bench',
  qps: 5000,
  burst: 5000,
});
const served = await serveCatalog(admin, 'community', small);
const largeServed = await serveCatalog(admin, 'large', largePackage);
const csvs = await SucceededCsvs.open(admin);
const namespace = (name: string): Promise<void> => prepareNamespace(admin, name);
const subscribe = (ns: string, pkg: (typeof packages)[number]): Promise<number> =>
  subscribeWith(admin, csvs, ns, pkg);

/** Starts the inspector's CPU profiler when a file is given; stop() writes the profile there. */
async function profileTo(file: string | undefined): Promise<{ stop(): Promise<void> }> {
  if (file === undefined) return { stop: () => Promise.resolve() };
  const session = new Session();
  session.connect();
  const post = (method: string): Promise<unknown> =>
    new Promise((resolve, reject) =>
      session.post(method, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post('Profiler.enable');
  await post('Profiler.start');
  return {
    async stop() {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * OLMQ_BENCH_SUBJECTS=1: every message of the server (a second connection subscribed to `>`)
 * counted by subject group, printed per Subscription (namespace preparation included) to stderr
 * when stopped. Mirror direct gets
 * are grouped by the kind they read, other subjects by their first tokens.
 */
async function subjectTap(servers: string): Promise<{ stop(): Promise<void> }> {
  if (process.env.OLMQ_BENCH_SUBJECTS !== '1') return { stop: () => Promise.resolve() };
  const { connect } = await import('@nats-io/transport-node');
  const tap = await connect({ servers });
  const counts = new Map<string, number>();
  // Mirror direct gets by the kind (or index token) they read, the rest by their first tokens.
  const mirrorGet = directGetLastSubject(mirrorStream, mirrorSubjectPrefix);
  const group = (subject: string): string => {
    if (subject.startsWith(mirrorGet))
      return `direct get ${subject.slice(mirrorGet.length).split('.')[1] ?? ''}`;
    const tokens = subject.split('.');
    if (tokens[0] === '_INBOX') return '_INBOX';
    return tokens.slice(0, tokens[1] === 'API' ? (tokens[2] === 'DIRECT' ? 5 : 4) : 2).join('.');
  };
  tap.subscribe('>', {
    callback: (_error, m) => {
      const g = group(m.subject);
      counts.set(g, (counts.get(g) ?? 0) + 1);
    },
  });
  return {
    async stop() {
      await tap.close();
      const rows = [...counts].sort((a, b) => b[1] - a[1]);
      for (const [g, n] of rows) process.stderr.write(`${round(n / sequential)}\t${g}\n`);
    },
  };
}

/** Sum of a counter's samples, by the value of one label (that metric alone is collected). */
async function countsBy(name: string, label: string): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric(name)?.get();
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) {
    const key = String(v.labels[label]);
    out[key] = (out[key] ?? 0) + v.value;
  }
  return out;
}

/** The cost counters so far: read before the CPU at a start, after it at an end. */
interface Costs {
  cpuMs: number;
  natsOut: number;
  natsIn: number;
  reconciles: Record<string, number>;
  requests: Record<string, number>;
}
async function countersNow(): Promise<Omit<Costs, 'cpuMs'>> {
  const stats = nc.stats();
  return {
    natsOut: stats.outMsgs,
    natsIn: stats.inMsgs,
    reconciles: await countsBy('olmq_work_processed_total', 'function'),
    requests: await countsBy('olmq_api_requests_total', 'verb'),
  };
}
const cpuMsNow = (): number => {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1000;
};
async function costsAtStart(): Promise<Costs> {
  const counters = await countersNow();
  return { ...counters, cpuMs: cpuMsNow() };
}
async function costsAtEnd(): Promise<Costs> {
  const cpuMs = cpuMsNow();
  return { ...(await countersNow()), cpuMs };
}
const zero: Costs = { cpuMs: 0, natsOut: 0, natsIn: 0, reconciles: {}, requests: {} };
function add(total: Costs, from: Costs, to: Costs): Costs {
  const sum = (t: Record<string, number>, a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(
      [...new Set([...Object.keys(t), ...Object.keys(b)])].map((k) => [
        k,
        (t[k] ?? 0) + (b[k] ?? 0) - (a[k] ?? 0),
      ]),
    );
  return {
    cpuMs: total.cpuMs + to.cpuMs - from.cpuMs,
    natsOut: total.natsOut + to.natsOut - from.natsOut,
    natsIn: total.natsIn + to.natsIn - from.natsIn,
    reconciles: sum(total.reconciles, from.reconciles, to.reconciles),
    requests: sum(total.requests, from.requests, to.requests),
  };
}
const averaged = (total: Costs, n: number) => ({
  // Everything (devcluster, watcher, every function) shares this one process's CPU.
  cpuMs: round(total.cpuMs / n),
  natsMessages: { out: round(total.natsOut / n), in: round(total.natsIn / n) },
  reconcilesByFunction: perEach(total.reconciles, {}, n),
  apiRequestsByVerb: perEach(total.requests, {}, n),
});

// OLMQ_BENCH_PROFILE=FILE: a CPU profile of the sequential phase alone (no start-up).
const profile = await profileTo(process.env.OLMQ_BENCH_PROFILE);
const subjects = await subjectTap(system.natsUrl);
// One Subscription at a time, each into a namespace prepared beforehand and on a settled
// system: the latency of one install, which is what the target is about. Its costs run from
// its create until the system settled after it; the namespace's preparation is counted apart.
const single: number[] = [];
let namespaceCosts = zero;
let subscriptionCosts = zero;
for (let i = 0; i < sequential; i++) {
  const ns = `seq-${i}`;
  const prepare = await costsAtStart();
  await namespace(ns);
  await settled();
  const prepared = await costsAtEnd();
  namespaceCosts = add(namespaceCosts, prepare, prepared);
  const start = await costsAtStart();
  single.push(await subscribe(ns, packages[0]));
  await settled();
  subscriptionCosts = add(subscriptionCosts, start, await costsAtEnd());
  if (process.env.OLMQ_BENCH_VERBOSE) process.stderr.write(`single ${i}: ${single[i]}\n`);
}
await subjects.stop();
await profile.stop();
const costs = averaged(subscriptionCosts, sequential);
const perNamespace = averaged(namespaceCosts, sequential);

// The same back to back: each starts as soon as the previous CSV succeeded, while the work
// that follows an install (copied CSVs, RBAC) still runs.
const backToBack: number[] = [];
for (let i = 0; i < sequential; i++) {
  const ns = `b2b-${i}`;
  await namespace(ns);
  backToBack.push(await subscribe(ns, packages[0]));
}

const names = Array.from({ length: namespaceCount }, (_, i) => `burst-${i}`);
for (const ns of names) await namespace(ns);
const t0 = performance.now();
const burst = await Promise.all(names.flatMap((ns) => packages.map((pkg) => subscribe(ns, pkg))));
const burstWallMs = performance.now() - t0;

// The large CSV, one install at a time on a settled system: its CSV and InstallPlan are
// mirrored by reference (upload, then reference), read back whole by every function.
const large: number[] = [];
for (let i = 0; i < largeCount; i++) {
  const ns = `large-${i}`;
  await namespace(ns);
  await settled();
  large.push(await subscribe(ns, largeCsvPackage));
}

process.stdout.write(
  `${JSON.stringify({
    benchmark: 'subscription-install',
    note: 'Subscription create → CSV Succeeded through every function, in-process, pod-ready delay 0',
    targets: { singleP50Ms: 300 },
    single: { ...summary(single), perSubscription: costs, perNamespace },
    backToBack: summary(backToBack),
    burst: {
      subscriptions: burst.length,
      namespaces: namespaceCount,
      ...summary(burst),
      wallMs: round(burstWallMs),
    },
    largeCsv: { bundle: largeCsvPackage.csv, csvBytes: 1_060_684, ...summary(large) },
  })}\n`,
);
csvs.stop();
admin.close();
await system.stop();
await served.stop(0);
await largeServed.stop(0);
process.exit(0);
