// Benchmark of the install function: InstallPlan approved → CSV Succeeded, on the devcluster
// (pod-ready delay 0) with a real nats-server, the watcher and the install (and rbac) function in this
// process. Installs etcd (etcdoperator.v0.9.4, a real bundle of ../shared/catalogs/small).
// Run (after `npx tsc -p tsconfig.json`):
//   node dist/bench/install.js [--sequential 20] [--plans 200] [--namespaces 100]
// Prints one JSON object: latency p50/p99 of sequential single installs and of a burst of
// plans across namespaces, the API requests they cost, and this process's CPU time.
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { Counter, Registry } from 'prom-client';
import { startDevcluster } from '../devcluster/index.js';
import { createFunction as createInstall } from '../functions/install/index.js';
import { createFunction as createRbac } from '../functions/rbac/index.js';
import { startWatcher } from '../watcher/index.js';
import { openBackbone } from '../shared/bus/backbone.js';
import { startNatsServer } from '../shared/bus/nats-server.js';
import { KubeClient, type KubeObject } from '../shared/kube/client.js';
import { ensureOlmApi } from '../shared/kube/olm-api.js';
import { FunctionHost } from '../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../shared/runtime/metrics.js';
import { createInstallPlan, smallBundle } from '../test/harness/install-plan.js';
import { KubeConfig } from '@kubernetes/client-node';

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

const cluster = await startDevcluster({ podReadyDelayMs: 0 });
const nats = await startNatsServer();
const nc = await connect({ servers: nats.url, noAsyncTraces: true });
const backbone = await openBackbone(nc, {});
const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(cluster.kubeconfig());
const registry = new Registry();
const requests = new Counter({
  name: 'bench_requests',
  help: 'API requests of the install function',
  labelNames: ['cluster', 'verb', 'code'] as const,
  registers: [registry],
});
const admin = await KubeClient.fromKubeConfig('c1', kubeConfig, {
  userAgent: 'bench',
  qps: 5000,
  burst: 5000,
});
const functionClient = await KubeClient.fromKubeConfig('c1', kubeConfig, {
  userAgent: 'olmq-install',
  qps: 5000,
  burst: 5000,
  requests,
});
await ensureOlmApi(admin);
await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olmq-system' } });
const log = pino({ level: 'warn' });
const watcher = await startWatcher({
  cluster: { id: 'c1', kubeConfig },
  backbone,
  log,
  registry: new Registry(),
  identity: 'bench',
  leaseNamespace: 'olmq-system',
  leaseName: 'olmq-watcher',
  leaseDurationSeconds: 15,
});
const abort = new AbortController();
// The install function waits for the rbac function to sync OperatorGroups and annotate CSVs.
const context = {
  backbone,
  clients: new Map([['c1', functionClient]]),
  log,
  registry: new Registry(),
  globalCatalogNamespace: 'olm',
  signal: abort.signal,
};
const started = await Promise.all([createInstall(context), createRbac(context)]);
const hostMetrics = createFunctionMetrics(new Registry());
const hosts = started
  .flatMap((f) => f.definitions)
  .map(
    (d) => new FunctionHost(backbone, d, log, hostMetrics, { concurrency: 16, baseBackoffMs: 50 }),
  );
for (const host of hosts) await host.start();
const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');

async function namespace(name: string): Promise<void> {
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await admin.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: name },
    spec: { targetNamespaces: [name] },
  });
}

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

async function requestCount(): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'bench_requests');
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

// One install at a time: the latency a user sees.
const single: number[] = [];
let requests0 = await requestCount();
let cpu0 = cpuMs();
for (let i = 0; i < sequential; i++) {
  const ns = `seq-${i}`;
  await namespace(ns);
  const t0 = performance.now();
  await createInstallPlan(admin, { name: 'install-1', namespace: ns, bundles: [bundle] });
  await succeeded(ns, 'etcdoperator.v0.9.4');
  single.push(performance.now() - t0);
}
const singleRequests = (await requestCount()) - requests0;
const singleCpu = cpuMs() - cpu0;

// A burst: `plans` plans across `namespaceCount` namespaces (one CSV per namespace; extra
// plans in a namespace install the same CSV again and find it Present).
for (let i = 0; i < namespaceCount; i++) await namespace(`burst-${i}`);
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

abort.abort();
await Promise.all(hosts.map((h) => h.stop(1_000)));
for (const f of started) await f.close?.();
await watcher.stop();
await nc.close();
await nats.stop();
admin.close();
functionClient.close();
await cluster.close();
