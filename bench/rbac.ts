// Benchmark of the rbac and copy-csv functions at namespace scale. The devcluster and the
// watcher run as their own processes (as in production); rbac and copy-csv run in this process,
// so its peak RSS is an upper bound for each of them.
//
//   npm run build && node dist/bench/rbac.js [--namespaces 10000] [--operators 5]
//     [--global-operators 20] [--concurrency 32] [--timeout-seconds 900]
//
// Prints one JSON object:
// - addOneNamespace: a global group with --global-operators operators has converged; one
//   namespace is added: time until its copies exist, API writes of the functions meanwhile.
// - namespaces: a global group with --operators operators; --namespaces namespaces are
//   created: time until every copy exists, API writes, peak RSS of the functions' process
//   and of the devcluster (VmHWM), CPU time of both.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { copyCsvFunction } from '../functions/copy-csv/index.js';
import { rbacFunction } from '../functions/rbac/index.js';
import { openBackbone } from '../shared/bus/backbone.js';
import { startNatsServer } from '../shared/bus/nats-server.js';
import {
  buildCatalogIndex,
  decodeBundleManifests,
  readCatalogDirectory,
} from '../shared/catalog/index.js';
import { KubeClient, type KubeObject } from '../shared/kube/client.js';
import { ensureOlmApi } from '../shared/kube/olm-api.js';
import { FunctionHost } from '../shared/runtime/function-host.js';
import { createApiRequestCounter, createFunctionMetrics } from '../shared/runtime/metrics.js';

const root = join(import.meta.dirname, '..', '..');
const olmq = join(root, 'dist', 'cli', 'main.js');
const catalogs = join(root, '..', 'shared', 'catalogs', 'small');

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '10000' },
    operators: { type: 'string', default: '5' },
    'global-operators': { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '32' },
    'timeout-seconds': { type: 'string', default: '900' },
  },
});
const namespaceCount = Number(values.namespaces);
const operatorCount = Number(values.operators);
const globalOperatorCount = Number(values['global-operators']);
const concurrency = Number(values.concurrency);
const timeoutMs = Number(values['timeout-seconds']) * 1000;

const children: ChildProcess[] = [];
function launch(args: string[], readyPattern: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${args.join(' ')} not ready in 120 s`)),
      120_000,
    );
    const onLine = (line: string): void => {
      if (readyPattern.test(line)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/** Peak RSS (VmHWM) and CPU seconds of a process, from /proc. */
function processStats(pid: number): { peakRssMb: number; cpuSeconds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(stat[11] ?? 0) + Number(stat[12] ?? 0);
  return { peakRssMb: Math.round(hwm / 1024), cpuSeconds: ticks / 100 };
}

/** AllNamespaces CSVs from the small catalogs, renamed apart when more are needed than exist. */
async function allNamespacesCsvs(count: number): Promise<KubeObject[]> {
  const found: KubeObject[] = [];
  for (const pkg of [
    'node-maintenance-operator',
    'self-node-remediation',
    'node-healthcheck-operator',
    'etcd',
  ]) {
    const { content } = buildCatalogIndex(await readCatalogDirectory(join(catalogs, pkg)));
    for (const [p, name] of content.keys()) {
      const bundle = content.get(p, name);
      const csv =
        bundle === undefined
          ? undefined
          : (decodeBundleManifests(bundle).csv as KubeObject | undefined);
      const modes =
        (csv?.['spec'] as { installModes?: { type: string; supported: boolean }[] } | undefined)
          ?.installModes ?? [];
      if (csv !== undefined && modes.some((m) => m.type === 'AllNamespaces' && m.supported))
        found.push(csv);
    }
  }
  if (found.length === 0) throw new Error('no AllNamespaces bundle in the small catalogs');
  return Array.from({ length: count }, (_, i) => {
    const csv = structuredClone(found[i % found.length] as KubeObject);
    if (i >= found.length) csv.metadata.name = `${csv.metadata.name ?? ''}-b${i}`;
    return csv;
  });
}

async function installCsv(client: KubeClient, csv: KubeObject, namespace: string): Promise<void> {
  const { status: _status, ...body } = csv;
  const created = await client.create({
    ...body,
    metadata: {
      name: csv.metadata.name ?? '',
      namespace,
      annotations: csv.metadata.annotations ?? {},
    },
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await client.updateStatus({
    ...created,
    status: {
      phase: 'Succeeded',
      reason: 'InstallSucceeded',
      message: 'install strategy completed with no errors',
      lastUpdateTime: now,
      lastTransitionTime: now,
    },
  });
}

async function inBatches<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

async function sum(
  registry: Registry,
  name: string,
  filter: (labels: Partial<Record<string, string | number>>) => boolean = () => true,
): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []).filter((v) => filter(v.labels)).reduce((n, v) => n + v.value, 0);
}

async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// The client counts status updates as `update` (both are PUTs).
const writeVerbs = new Set(['create', 'update', 'patch', 'delete']);

async function scenario(
  operators: number,
  addNamespaces: number,
): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-bench-rbac-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const nats = await startNatsServer();
  const devcluster = await launch(
    [
      olmq,
      'devcluster',
      '--kubeconfig',
      kubeconfigPath,
      '--pod-ready-delay',
      '0',
      '--log-level',
      'warn',
    ],
    /ready/,
  );
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const admin = await KubeClient.fromKubeConfig('c1', kubeConfig, { qps: 100_000, burst: 100_000 });
  await ensureOlmApi(admin);
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olmq-system' } });
  const watcher = await launch(
    [
      olmq,
      'watcher',
      '--kubeconfig',
      kubeconfigPath,
      '--cluster',
      'c1',
      '--nats-url',
      nats.url,
      '--metrics-port',
      '0',
      '--log-level',
      'info',
    ],
    /mirror synced/,
  );

  const registry = new Registry();
  const requests = createApiRequestCounter(registry);
  const client = await KubeClient.fromKubeConfig('c1', kubeConfig, {
    qps: 2_000,
    burst: 4_000,
    requests,
  });
  const nc = await connect({ servers: nats.url });
  const backbone = await openBackbone(nc);
  const clients = new Map([['c1', client]]);
  const log = pino({ level: 'warn' });
  const metrics = createFunctionMetrics(registry);
  const hosts = [
    new FunctionHost(backbone, rbacFunction(backbone, clients, registry), log, metrics, {
      concurrency,
    }),
    new FunctionHost(backbone, copyCsvFunction(backbone, clients, registry), log, metrics, {
      concurrency,
    }),
  ];
  for (const host of hosts) await host.start();
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);

  const writes = () =>
    sum(registry, 'olmq_api_requests_total', (l) => writeVerbs.has(String(l['verb'])));
  const copiesCreated = () =>
    sum(registry, 'olmq_copied_csv_writes_total', (l) => l['operation'] === 'created');

  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'operators' } });
  await admin.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'global', namespace: 'operators' },
    spec: {},
  });
  for (const csv of await allNamespacesCsvs(operators)) await installCsv(admin, csv, 'operators');
  const initialNamespaces = (await admin.list({ apiVersion: 'v1', kind: 'Namespace' })).items
    .length;
  const baseline = operators * (initialNamespaces - 1);
  await waitUntil(
    'copies in the initial namespaces',
    async () => (await copiesCreated()) >= baseline,
  );
  // Let the setup's follow-up work drain so the measured window holds only the new namespaces.
  await new Promise((r) => setTimeout(r, 2_000));

  const writesBefore = await writes();
  const cpuBefore = process.cpuUsage();
  const devBefore = processStats(devcluster.pid ?? 0);
  const start = performance.now();
  const names = Array.from({ length: addNamespaces }, (_, i) => `tenant-${i}`);
  await inBatches(names, 64, (name) =>
    admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
  );
  const createdAllMs = performance.now() - start;
  await waitUntil(
    'every copy',
    async () => (await copiesCreated()) >= baseline + operators * addNamespaces,
  );
  const convergeMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  const devAfter = processStats(devcluster.pid ?? 0);
  const result = {
    operators,
    namespacesAdded: addNamespaces,
    copiesCreated: (await copiesCreated()) - baseline,
    namespacesCreatedMs: Math.round(createdAllMs),
    convergeMs: Math.round(convergeMs),
    apiWrites: (await writes()) - writesBefore,
    apiWritesByVerb: Object.fromEntries(
      await Promise.all(
        [...writeVerbs].map(async (verb) => [
          verb,
          await sum(registry, 'olmq_api_requests_total', (l) => l['verb'] === verb),
        ]),
      ),
    ),
    functionsProcess: {
      peakRssMb: Math.round(peakRss / 1024 / 1024),
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    },
    devcluster: {
      peakRssMb: devAfter.peakRssMb,
      cpuSeconds: Math.round((devAfter.cpuSeconds - devBefore.cpuSeconds) * 100) / 100,
    },
    watcher: processStats(watcher.pid ?? 0),
  };
  clearInterval(sampler);
  for (const host of hosts) await host.stop(1_000);
  await nc.close();
  client.close();
  admin.close();
  for (const child of children.splice(0)) child.kill('SIGTERM');
  await nats.stop();
  return result;
}

async function main(): Promise<void> {
  const addOneNamespace = await scenario(globalOperatorCount, 1);
  const namespaces = await scenario(operatorCount, namespaceCount);
  process.stdout.write(`${JSON.stringify({ addOneNamespace, namespaces }, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    for (const child of children) child.kill('SIGKILL');
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
