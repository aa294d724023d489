// Benchmark of the package server's per-catalog work over the full community catalog: load the
// index and content from their serialized bytes (as from JetStream), build every
// PackageManifest, and answer a namespace list as JSON and as kubectl's Table.
// Run (after `npx tsc -p tsconfig.json`):
//   node --expose-gc dist/bench/packageserver.js [catalog-dir]
// Prints one JSON object; *CpuMs are CPU time of this process (the machine is shared).
import { fileURLToPath } from 'node:url';
import { buildPackageRecords } from '../packageserver/manifest.js';
import { parseQuery, visiblePackages } from '../packageserver/query.js';
import { packageTable } from '../packageserver/table.js';
import {
  buildCatalogIndex,
  loadCatalogContent,
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

const built = buildCatalogIndex(await readCatalogDirectory(dir));
const indexBytes = serializeCatalogIndex(built.index);
const contentBytes = serializeCatalogContent(built.content);

const before = heapMB();
let cpu0 = cpuMs();
let t0 = performance.now();
const index = loadCatalogIndex(indexBytes);
const content = loadCatalogContent(contentBytes);
const { records, problems } = buildPackageRecords(
  {
    namespace: 'olm',
    name: 'operatorhubio',
    displayName: 'Community Operators',
    publisher: 'OperatorHub.io',
    labels: {},
    creationTimestamp: '2026-01-01T00:00:00Z',
  },
  index,
  content,
);
const buildMs = performance.now() - t0;
const buildCpuMs = cpuMs() - cpu0;
const catalogs = [{ namespace: 'olm', name: 'operatorhubio', priority: 0, records }];
const retainedHeapMB = heapMB() - before;

cpu0 = cpuMs();
t0 = performance.now();
const visible = visiblePackages(catalogs, parseQuery(new URLSearchParams(), 'team-a', 'olm'));
const listJson = JSON.stringify({ items: visible.map((p) => p.manifest) });
const listMs = performance.now() - t0;
const listCpuMs = cpuMs() - cpu0;
t0 = performance.now();
const tableJson = JSON.stringify(
  packageTable(
    visible.map((p) => p.manifest),
    '1',
    'Metadata',
    Date.now(),
  ),
);
const tableMs = performance.now() - t0;

process.stdout.write(
  `${JSON.stringify({
    catalog: dir.split('/').at(-1),
    packages: index.packages.length,
    manifests: records.length,
    problems: problems.length,
    buildMs: round(buildMs),
    buildCpuMs: round(buildCpuMs),
    retainedHeapMB: round(retainedHeapMB),
    listMs: round(listMs),
    listCpuMs: round(listCpuMs),
    listBytes: listJson.length,
    tableMs: round(tableMs),
    tableBytes: tableJson.length,
  })}\n`,
);
