// Benchmark of the rbac and copy-csv functions at namespace scale. The devcluster, the watcher
// and each function (`olmq run rbac`, `olmq run copy-csv`) run as their own processes, as in
// production; their API writes and copies are read from the functions' /metrics.
//
//   npm run build && node dist/bench/rbac.js [--namespaces 10000] [--operators 5]
//     [--global-operators 20] [--concurrency 32] [--timeout-seconds 900] [--function-heap-mb 96]
//     [--kube-api-qps 200]
//
// OLMQ_BENCH_WATCHER_NODE_OPTIONS gives the watcher alone extra node options (e.g.
// `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=/tmp`, to see where its memory goes).
//
// Prints one JSON object:
// - addOneNamespace: a global group with --global-operators operators has converged; one
//   namespace is added: time until its copies exist, API writes of the functions meanwhile.
// - namespaces: a global group with --operators operators; --namespaces namespaces are
//   created: time until every copy exists, API writes, peak RSS (VmHWM) and CPU time of each
//   function, the watcher and the devcluster.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createServer } from 'node:net';
import { startNatsServer } from '../shared/bus/nats-server.js';
import {
  buildCatalogIndex,
  decodeBundleManifests,
  readCatalogDirectory,
} from '../shared/catalog/index.js';
import type { KubeClient, KubeObject } from '../shared/kube/client.js';
import {
  killAll,
  launch,
  launchCluster,
  olmq,
  processStats,
  stopAll,
} from './harness/processes.js';

const root = join(import.meta.dirname, '..', '..');
const catalogs = join(root, '..', 'shared', 'catalogs', 'small');

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '10000' },
    operators: { type: 'string', default: '5' },
    'global-operators': { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '32' },
    'timeout-seconds': { type: 'string', default: '900' },
    'function-heap-mb': { type: 'string', default: '96' },
    'kube-api-qps': { type: 'string', default: '200' },
  },
});
const namespaceCount = Number(values.namespaces);
const operatorCount = Number(values.operators);
const globalOperatorCount = Number(values['global-operators']);
const concurrency = Number(values.concurrency);
const timeoutMs = Number(values['timeout-seconds']) * 1000;
// The functions' heap limit, as their manifests in k8s/ set it (0: node's default, which on this
// 24 GB machine lets the heap grow far before collecting).
const heapMb = Number(values['function-heap-mb']);
// Each function's API request limit (`olmq run --kube-api-qps`; burst twice that). Copies cost
// two writes each, so at the default of 200 a single copy-csv replica needs 500 s for 10,000
// namespaces with 5 operators whatever the CPU: raise it, or run more replicas.
const kubeApiQps = Number(values['kube-api-qps']);
const heapEnv: NodeJS.ProcessEnv =
  heapMb > 0 ? { NODE_OPTIONS: `--max-old-space-size=${heapMb}` } : {};

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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** Sum of a counter's samples on the /metrics pages at `ports` whose labels pass `filter`. */
async function sum(
  ports: number[],
  name: string,
  filter: (labels: string) => boolean = () => true,
): Promise<number> {
  let total = 0;
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const line of text.split('\n')) {
      const match = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
      if (match?.[1] === name && filter(match[2] ?? '')) total += Number(match[3]);
    }
  }
  return total;
}

// Polls every 50 ms at first, then less often (up to every second): each look reads the
// functions' /metrics, whose consumer backlog gauges cost nats-server a pass over the stream
// since each trigger consumer's position, and a scrape every 200 ms for minutes is no
// Prometheus (15-30 s) but a load of its own.
async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let intervalMs = 50;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
    intervalMs = Math.min(intervalMs * 1.5, 1_000);
  }
}

// The client counts status updates as `update` (both are PUTs).
const writeVerbs = new Set(['create', 'update', 'patch', 'delete']);

async function scenario(
  operators: number,
  addNamespaces: number,
): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-bench-rbac-'));
  const nats = await startNatsServer();
  const { kubeconfigPath, admin, devcluster, watcher } = await launchCluster(dir, nats.url);

  const functions: Record<string, { process: ChildProcess; port: number }> = {};
  for (const name of ['rbac', 'copy-csv']) {
    const port = await freePort();
    // prettier-ignore
    const args = [olmq, 'run', name, '--kubeconfig', kubeconfigPath, '--cluster', 'c1',
      '--nats-url', nats.url, '--metrics-port', String(port), '--concurrency', String(concurrency),
      '--kube-api-qps', String(kubeApiQps), '--kube-api-burst', String(2 * kubeApiQps)];
    functions[name] = {
      process: await launch(args, /function started/, heapEnv),
      port,
    };
  }
  const ports = Object.values(functions).map((f) => f.port);
  const verbOf = (labels: string): string => /verb="([^"]*)"/.exec(labels)?.[1] ?? '';
  const writes = () => sum(ports, 'olmq_api_requests_total', (l) => writeVerbs.has(verbOf(l)));
  const copiesCreated = () =>
    sum(ports, 'olmq_copied_csv_writes_total', (l) => l.includes('operation="created"'));

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
  const reconcilesOf = (port: number) => sum([port], 'olmq_work_processed_total');
  const functionsBefore = Object.fromEntries(
    await Promise.all(
      Object.entries(functions).map(async ([name, f]) => [
        name,
        { ...processStats(f.process.pid ?? 0), reconciles: await reconcilesOf(f.port) },
      ]),
    ),
  );
  const devBefore = processStats(devcluster.pid ?? 0);
  const natsBefore = processStats(nats.pid);
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
          await sum(ports, 'olmq_api_requests_total', (l) => verbOf(l) === verb),
        ]),
      ),
    ),
    functions: Object.fromEntries(
      await Promise.all(
        Object.entries(functions).map(async ([name, f]) => {
          const after = processStats(f.process.pid ?? 0);
          const before = functionsBefore[name];
          const cpuSeconds = after.cpuSeconds - (before?.cpuSeconds ?? 0);
          const reconciles = (await reconcilesOf(f.port)) - (before?.reconciles ?? 0);
          return [
            name,
            {
              peakRssMb: after.peakRssMb,
              cpuSeconds: Math.round(cpuSeconds * 100) / 100,
              reconciles,
            },
          ];
        }),
      ),
    ),
    devcluster: {
      peakRssMb: devAfter.peakRssMb,
      cpuSeconds: Math.round((devAfter.cpuSeconds - devBefore.cpuSeconds) * 100) / 100,
    },
    watcher: processStats(watcher.pid ?? 0),
    natsServer: {
      peakRssMb: processStats(nats.pid).peakRssMb,
      cpuSeconds:
        Math.round((processStats(nats.pid).cpuSeconds - natsBefore.cpuSeconds) * 100) / 100,
    },
  };
  admin.close();
  await stopAll();
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
    killAll();
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
