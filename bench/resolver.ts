// Benchmark of the resolver on the full community catalog: one Subscription per package,
// namespaces with 25 Subscriptions, and synthetic worst cases with deep dependency chains.
// Run (after `npx tsc -p tsconfig.json`):
//   node --expose-gc dist/bench/resolver.js [catalog-dir]
// Prints one JSON object. Times are wall-clock milliseconds per resolution (the index loaded
// and cached as a resolve function would hold it); cpuMs totals are CPU time of this process.
import { fileURLToPath } from 'node:url';
import {
  buildCatalogFromTexts,
  loadCatalogIndex,
  readCatalogDirectory,
  buildCatalogIndex,
  serializeCatalogIndex,
  type CatalogIndex,
} from '../shared/catalog/index.js';
import {
  resolveNamespace,
  type Resolution,
  type ResolverCatalog,
  type SubscriptionFacts,
} from '../shared/resolver/index.js';

const defaultDir = fileURLToPath(new URL('../../../shared/catalogs/operatorhub', import.meta.url));
const dir = process.argv[2] ?? defaultDir;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  process.stderr.write('run with node --expose-gc to measure heap\n');
  process.exit(2);
}

const round = (n: number): number => Math.round(n * 100) / 100;
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let peakHeap = 0;
const sampleHeap = (): void => {
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
};

function stats(times: number[]): { n: number; p50: number; p99: number; max: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    n: sorted.length,
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    max: round(sorted[sorted.length - 1] ?? 0),
  };
}

function sub(name: string, pkg = name, source = 'operatorhub'): SubscriptionFacts {
  return {
    name,
    package: pkg,
    channel: null,
    source: { name: source, namespace: 'olm' },
    startingCSV: null,
    installedCSV: null,
  };
}

function timed(
  catalogs: ResolverCatalog[],
  subs: SubscriptionFacts[],
): { ms: number; cpu: number; r: Resolution } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = resolveNamespace({
    namespace: 'bench',
    subscriptions: subs,
    installed: [],
    operatorGroups: null,
    catalogs,
  });
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  sampleHeap();
  return { ms, cpu: (c.user + c.system) / 1000, r };
}

// The index as a resolve function holds it: loaded from its serialized form.
const built = buildCatalogIndex(await readCatalogDirectory(dir));
const bytes = serializeCatalogIndex(built.index);
gc();
const heapBefore = process.memoryUsage().heapUsed;
const index: CatalogIndex = loadCatalogIndex(bytes);
gc();
const indexHeapMB = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
const catalogs: ResolverCatalog[] = [{ name: 'operatorhub', namespace: 'olm', priority: 0, index }];
const packages = index.packages.map((p) => p.name);
peakHeap = 0;
const heapBase = process.memoryUsage().heapUsed;

// Single Subscription per package: a cold pass (per-index caches filling) then warm passes.
let cpu0 = cpuMs();
const cold = packages.map((p) => timed(catalogs, [sub(p)]).ms);
const warm: number[] = [];
const warmCpu: number[] = [];
let variables = 0;
for (let pass = 0; pass < 3; pass++) {
  for (const p of packages) {
    const { ms, cpu, r } = timed(catalogs, [sub(p)]);
    warm.push(ms);
    warmCpu.push(cpu);
    variables = Math.max(variables, r.stats.variables);
  }
}
const singleCpuMs = cpuMs() - cpu0;

// Namespaces of 25 Subscriptions: deterministic samples of distinct packages.
let seed = 7;
const rand = (): number => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const namespaces: string[][] = [];
for (let i = 0; i < 40; i++) {
  const chosen = new Set<string>();
  while (chosen.size < 25) chosen.add(packages[Math.floor(rand() * packages.length)] as string);
  namespaces.push([...chosen]);
}
cpu0 = cpuMs();
const ns25: number[] = [];
const ns25Cpu: number[] = [];
let ns25Problems = 0;
let ns25Bundles = 0;
for (let pass = 0; pass < 2; pass++) {
  for (const names of namespaces) {
    const { ms, cpu, r } = timed(
      catalogs,
      names.map((n) => sub(n)),
    );
    if (pass === 1) {
      ns25.push(ms);
      ns25Cpu.push(cpu);
      ns25Problems += r.problems.length;
      ns25Bundles += r.bundles.length;
    }
  }
}
const ns25CpuMs = cpuMs() - cpu0;

// Worst cases: a synthetic catalog where package d0 needs d1 needs ... d<depth-1>, each with
// many versions matching the range, next to the real catalog; satisfiable, and unsatisfiable
// at the bottom (the explanation is a minimal set across the whole chain).
function deepCatalog(depth: number, versions: number, brokenBottom: boolean): CatalogIndex {
  const lines: string[] = [];
  for (let d = 0; d < depth; d++) {
    const pkg = `d${d}`;
    lines.push(JSON.stringify({ schema: 'olm.package', name: pkg, defaultChannel: 'stable' }));
    const entries = [];
    for (let v = 1; v <= versions; v++) {
      entries.push({
        name: `${pkg}.v${v}.0.0`,
        ...(v > 1 ? { replaces: `${pkg}.v${v - 1}.0.0` } : {}),
      });
      const requires =
        d + 1 < depth
          ? [
              {
                type: 'olm.package.required',
                value: { packageName: `d${d + 1}`, versionRange: '>=1.0.0' },
              },
            ]
          : brokenBottom
            ? [
                {
                  type: 'olm.gvk.required',
                  value: { group: 'missing.example.com', version: 'v1', kind: 'Missing' },
                },
              ]
            : [];
      lines.push(
        JSON.stringify({
          schema: 'olm.bundle',
          name: `${pkg}.v${v}.0.0`,
          package: pkg,
          image: `example.com/${pkg}:v${v}`,
          properties: [
            { type: 'olm.package', value: { packageName: pkg, version: `${v}.0.0` } },
            {
              type: 'olm.gvk',
              value: { group: `${pkg}.example.com`, version: 'v1', kind: 'Thing' },
            },
            ...requires,
          ],
        }),
      );
    }
    lines.push(JSON.stringify({ schema: 'olm.channel', package: pkg, name: 'stable', entries }));
  }
  return buildCatalogFromTexts({ 'deep.json': lines.join('\n') }).index;
}

function worst(depth: number, versions: number, broken: boolean) {
  const deep: ResolverCatalog = {
    name: 'deep',
    namespace: 'olm',
    priority: 0,
    index: deepCatalog(depth, versions, broken),
  };
  const all = [deep, ...catalogs];
  const times: number[] = [];
  const cpus: number[] = [];
  let last: Resolution | null = null;
  for (let i = 0; i < 5; i++) {
    const { ms, cpu, r } = timed(all, [sub('top', 'd0', 'deep'), sub('etcd')]);
    times.push(ms);
    cpus.push(cpu);
    last = r;
  }
  return {
    depth,
    versions,
    status: last?.status,
    bundles: last?.bundles.length,
    variables: last?.stats.variables,
    solves: last?.stats.solves,
    ...stats(times),
    cpu: stats(cpus),
  };
}

const deepOk = worst(50, 20, false);
const deepBroken = worst(50, 20, true);

process.stdout.write(
  `${JSON.stringify({
    catalog: 'operatorhub',
    packages: packages.length,
    bundles: index.bundles.length,
    indexHeapMB: round(indexHeapMB),
    single: {
      ...stats(warm),
      cpu: stats(warmCpu),
      maxVariables: variables,
      cpuMs: round(singleCpuMs),
    },
    singleCold: stats(cold),
    namespace25: {
      ...stats(ns25),
      cpu: stats(ns25Cpu),
      avgBundles: round(ns25Bundles / ns25.length),
      avgProblems: round(ns25Problems / ns25.length),
      cpuMs: round(ns25CpuMs),
    },
    deepChain: deepOk,
    deepChainUnsatisfiable: deepBroken,
    peakHeapMB: round(peakHeap / 1e6),
    peakHeapAboveIndexMB: round((peakHeap - heapBase) / 1e6),
  })}\n`,
);
