// Benchmark of the install function: InstallPlan approved → CSV Succeeded, on the devcluster
// (pod-ready delay 0) with a real nats-server, the watcher and the install (and rbac) function in this
// process. Installs etcd (etcdoperator.v0.9.4, a real bundle of ../shared/catalogs/small).
// Run (after `npx tsc -p tsconfig.json`):
//   node dist/bench/install.js [--sequential 20] [--plans 200] [--namespaces 100]
// Prints one JSON object: latency p50/p99 of sequential single installs and of a burst of
// plans across namespaces, the API requests they cost, and this process's CPU time.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createFunction as createInstall } from '../functions/install/index.js';
import { createFunction as createRbac } from '../functions/rbac/index.js';
import { KubeClient, type KubeObject } from '../shared/kube/client.js';
import { startSystem } from '../system/index.js';
import { prepareNamespace } from './harness/subscriptions.js';
import { createInstallPlan, smallBundle } from '../test/harness/install-plan.js';

const { values } = parseArgs({
  options: {
    sequential: { type: 'string', default: '20' },
    plans: { type: 'string', default: '200' },
    namespaces: { type: 'string', default: '100' },
  },
});
const sequential = Number(values.sequential);
const plans = Number(values.plans);
const namespaceCount = Number(values.namespaces);

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const round = (n: number): number => Math.round(n * 10) / 10;

const system = await startSystem({
  log: pino({ level: 'warn' }),
  podReadyDelayMs: 0,
  clusterId: 'c1',
  client: { userAgent: 'olmq-install', qps: 5000, burst: 5000 },
  namespaces: ['olmq-system'],
  // The watcher's requests are not counted with the functions'.
  watcher: { identity: 'bench', leaseName: 'olmq-watcher', registry: new Registry() },
  functions: {
    // The install function waits for the rbac function to sync OperatorGroups and annotate CSVs.
    table: {
      install: () => Promise.resolve(createInstall),
      rbac: () => Promise.resolve(createRbac),
    },
    host: { concurrency: 16, baseBackoffMs: 50 },
    stopGraceMs: 1_000,
  },
});
const { registry } = system;
const admin = await KubeClient.fromKubeConfig('c1', system.cluster.kubeConfig, {
  userAgent: 'bench',
  qps: 5000,
  burst: 5000,
});
const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');

async function succeeded(ns: string, csvName: string): Promise<void> {
  for (;;) {
    const csv = await admin.get<KubeObject & { status?: { phase?: string } }>({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: ns,
      name: csvName,
    });
    if (csv?.status?.phase === 'Succeeded') return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** API requests of the functions so far. */
async function requestCount(): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find(
    (m) => m.name === 'olmq_api_requests_total',
  );
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

// One install at a time: the latency a user sees.
const single: number[] = [];
let requests0 = await requestCount();
let cpu0 = cpuMs();
for (let i = 0; i < sequential; i++) {
  const ns = `seq-${i}`;
  await prepareNamespace(admin, ns);
  const t0 = performance.now();
  await createInstallPlan(admin, { name: 'install-1', namespace: ns, bundles: [bundle] });
  await succeeded(ns, 'etcdoperator.v0.9.4');
  single.push(performance.now() - t0);
}
const singleRequests = (await requestCount()) - requests0;
const singleCpu = cpuMs() - cpu0;

// A burst: `plans` plans across `namespaceCount` namespaces (one CSV per namespace; extra
// plans in a namespace install the same CSV again and find it Present).
for (let i = 0; i < namespaceCount; i++) await prepareNamespace(admin, `burst-${i}`);
requests0 = await requestCount();
cpu0 = cpuMs();
const burstStart = performance.now();
const burst = await Promise.all(
  Array.from({ length: plans }, async (_, i) => {
    const ns = `burst-${i % namespaceCount}`;
    const t0 = performance.now();
    await createInstallPlan(admin, { name: `install-${i}`, namespace: ns, bundles: [bundle] });
    await succeeded(ns, 'etcdoperator.v0.9.4');
    return performance.now() - t0;
  }),
);
const burstWall = performance.now() - burstStart;
const burstRequests = (await requestCount()) - requests0;
const burstCpu = cpuMs() - cpu0;

single.sort((a, b) => a - b);
burst.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({
    bundle: 'etcdoperator.v0.9.4',
    note: 'in-process devcluster, watcher and install function; admin polling included in CPU',
    single: {
      installs: sequential,
      p50Ms: round(percentile(single, 50)),
      p99Ms: round(percentile(single, 99)),
      apiRequestsPerInstall: round(singleRequests / Math.max(1, sequential)),
      cpuMsPerInstall: round(singleCpu / Math.max(1, sequential)),
    },
    burst: {
      plans,
      namespaces: namespaceCount,
      p50Ms: round(percentile(burst, 50)),
      p99Ms: round(percentile(burst, 99)),
      wallMs: round(burstWall),
      apiRequests: burstRequests,
      cpuMs: round(burstCpu),
    },
  })}\n`,
);

admin.close();
await system.stop();
