// Benchmark of the catalog index over the full community catalog: build it from the
// directory, serialize it, and load it back from bytes as a resolver would from JetStream.
// Run (after `npx tsc -p tsconfig.json`):
//   node --expose-gc dist/bench/catalog-index.js [catalog-dir]
// Prints one JSON object. Times are wall-clock; *CpuMs are CPU time of this process, which
// tells the code's cost apart from waiting on a busy shared machine.
import { fileURLToPath } from 'node:url';
import {
  buildCatalogIndex,
  loadCatalogIndex,
  readCatalogDirectory,
  serializeCatalogContent,
  serializeCatalogIndex,
} from '../shared/catalog/index.js';

const defaultDir = fileURLToPath(new URL('../../../shared/catalogs/operatorhub', import.meta.url));
const dir = process.argv[2] ?? defaultDir;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  process.stderr.write('run with node --expose-gc to measure heap\n');
  process.exit(2);
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function heapMB(): number {
  gc?.();
  return process.memoryUsage().heapUsed / 1e6;
}

const round = (n: number): number => Math.round(n * 10) / 10;

let cpu0 = cpuMs();
let t0 = performance.now();
const built = buildCatalogIndex(await readCatalogDirectory(dir));
const buildMs = performance.now() - t0;
const buildCpuMs = cpuMs() - cpu0;

const bytes = serializeCatalogIndex(built.index);
const contentBytes = serializeCatalogContent(built.content).byteLength;
const packages = built.index.packages.length;
const bundles = built.index.bundles.length;
const warnings = built.warnings.length;

const before = heapMB();
cpu0 = cpuMs();
t0 = performance.now();
const loaded = loadCatalogIndex(bytes);
const loadMs = performance.now() - t0;
const loadCpuMs = cpuMs() - cpu0;
const loadedHeapMB = heapMB() - before;

process.stdout.write(
  `${JSON.stringify({
    catalog: 'operatorhub',
    packages,
    bundles,
    warnings,
    buildMs: round(buildMs),
    buildCpuMs: round(buildCpuMs),
    serializedBytes: bytes.byteLength,
    contentBytes,
    loadMs: round(loadMs),
    loadCpuMs: round(loadCpuMs),
    loadedHeapMB: round(loadedHeapMB),
    peakRssMB: round(process.resourceUsage().maxRSS / 1024),
    loadedBundles: loaded.bundles.length,
  })}\n`,
);
