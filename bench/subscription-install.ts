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
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { KubeClient, type KubeObject } from '../shared/kube/client.js';
import { loadRegistryCatalog, startRegistryServer } from '../shared/registry/index.js';
import { directGetLastSubject, mirrorStream, mirrorSubjectPrefix } from '../shared/bus/subjects.js';
import { startSystem } from '../system/index.js';
import { catalogReady } from './harness/catalog.js';
import { settled } from './harness/settled.js';

const { values } = parseArgs({
  options: {
    sequential: { type: 'string', default: '10' },
    namespaces: { type: 'string', default: '100' },
    large: { type: 'string', default: '3' },
  },
});
const largeCount = Number(values.large);
const largePackage = fileURLToPath(
  new URL('../../test/fixtures/catalogs/operatorhub/stackgres-community', import.meta.url),
);
const sequential = Number(values.sequential);
const namespaceCount = Number(values.namespaces);
const small = fileURLToPath(new URL('../../catalogs/example', import.meta.url));

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const round = (n: number): number => Math.round(n * 10) / 10;
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
  };
};

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
const served = await startRegistryServer({
  catalog: (await loadRegistryCatalog(small)).catalog,
  host: '127.0.0.1',
  port: 0,
});
await admin.create({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'CatalogSource',
  metadata: { name: 'community', namespace: 'olm' },
  spec: { sourceType: 'grpc', address: served.address },
});

const largeServed = await startRegistryServer({
  catalog: (await loadRegistryCatalog(largePackage)).catalog,
  host: '127.0.0.1',
  port: 0,
});
await admin.create({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'CatalogSource',
  metadata: { name: 'large', namespace: 'olm' },
  spec: { sourceType: 'grpc', address: largeServed.address },
});

async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
await catalogReady(admin, 'community');

async function namespace(name: string): Promise<void> {
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await admin.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: name },
    spec: { targetNamespaces: [name] },
  });
}

interface BenchPackage {
  name: string;
  channel: string;
  csv: string;
  source?: string;
}

const packages: readonly BenchPackage[] = [
  { name: 'etcd', channel: 'singlenamespace-alpha', csv: 'etcdoperator.v0.9.4' },
  { name: 'hawtio-operator', channel: 'stable-v1', csv: 'hawtio-operator.v1.2.0' },
];

const largeCsvPackage: BenchPackage = {
  name: 'stackgres-community',
  channel: 'stable',
  csv: 'stackgres-community.v1.18.8',
  source: 'large',
};

/** Creates the Subscription and resolves with the ms until its CSV is Succeeded. */
async function subscribe(ns: string, pkg: BenchPackage): Promise<number> {
  const t0 = performance.now();
  if (process.env.OLMQ_BENCH_VERBOSE) process.stderr.write(`SUBSCRIBE ${ns} ${Date.now()}\n`);
  await admin.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: pkg.name, namespace: ns },
    spec: {
      name: pkg.name,
      channel: pkg.channel,
      source: pkg.source ?? 'community',
      sourceNamespace: 'olm',
    },
  });
  await until(async () => {
    const csv = await admin.get<KubeObject & { status?: { phase?: string } }>({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: ns,
      name: pkg.csv,
    });
    return csv?.status?.phase === 'Succeeded' ? true : undefined;
  });
  return performance.now() - t0;
}

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
 * counted by subject group, printed per Subscription to stderr when stopped. Mirror direct gets
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

/** Sum of a counter's samples, by the value of one label. */
async function countsBy(name: string, label: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) {
    const key = String(v.labels[label]);
    out[key] = (out[key] ?? 0) + v.value;
  }
  return out;
}
const perSubscription = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after).map(([k, v]) => [k, round((v - (before[k] ?? 0)) / sequential)]),
  );

const reconcilesBefore = await countsBy('olmq_work_processed_total', 'function');
const requestsBefore = await countsBy('olmq_api_requests_total', 'verb');
// OLMQ_BENCH_PROFILE=FILE: a CPU profile of the sequential phase alone (no start-up).
const profile = await profileTo(process.env.OLMQ_BENCH_PROFILE);
const cpuBefore = process.cpuUsage();
const natsBefore = nc.stats();
const subjects = await subjectTap(system.natsUrl);
// One Subscription at a time, each into a namespace prepared beforehand and on a settled
// system: the latency of one install, which is what the target is about.
const single: number[] = [];
for (let i = 0; i < sequential; i++) {
  const ns = `seq-${i}`;
  await namespace(ns);
  await settled();
  single.push(await subscribe(ns, packages[0] as BenchPackage));
  if (process.env.OLMQ_BENCH_VERBOSE) process.stderr.write(`single ${i}: ${single[i]}\n`);
}

// What one Subscription costs the functions, averaged over the sequential ones.
const cpu = process.cpuUsage(cpuBefore);
await subjects.stop();
await profile.stop();
const costs = {
  // Everything (devcluster, watcher, every function) shares this one process's CPU.
  cpuMs: round((cpu.user + cpu.system) / 1000 / sequential),
  natsMessages: {
    out: round((nc.stats().outMsgs - natsBefore.outMsgs) / sequential),
    in: round((nc.stats().inMsgs - natsBefore.inMsgs) / sequential),
  },
  reconcilesByFunction: perSubscription(
    await countsBy('olmq_work_processed_total', 'function'),
    reconcilesBefore,
  ),
  apiRequestsByVerb: perSubscription(
    await countsBy('olmq_api_requests_total', 'verb'),
    requestsBefore,
  ),
};

// The same back to back: each starts as soon as the previous CSV succeeded, while the work
// that follows an install (copied CSVs, RBAC) still runs.
const backToBack: number[] = [];
for (let i = 0; i < sequential; i++) {
  const ns = `b2b-${i}`;
  await namespace(ns);
  backToBack.push(await subscribe(ns, packages[0] as BenchPackage));
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
    single: { ...summary(single), perSubscription: costs },
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
admin.close();
await system.stop();
await served.stop(0);
await largeServed.stop(0);
process.exit(0);
