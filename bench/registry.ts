// Benchmark of the registry gRPC path over the full community catalog: start
// `olmq registry serve` as a child process (time until it prints "serving"), then read the whole
// catalog over gRPC with the client and build its index, as the catalog function does for a
// grpc-address CatalogSource, then once more with the manifest cache (the next poll).
// Run (after `npx tsc -p tsconfig.json`):
//   node dist/bench/registry.js [catalog-dir]
// Prints one JSON object. Times are wall-clock; *CpuMs are CPU time (this process, or the
// server's from /proc), which tells the code's cost apart from waiting on a busy machine.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildCatalogIndex } from '../shared/catalog/index.js';
import { fetchRegistryCatalog, type BundleManifestData } from '../shared/registry/index.js';

const defaultDir = fileURLToPath(new URL('../../../shared/catalogs/operatorhub', import.meta.url));
const dir = process.argv[2] ?? defaultDir;
const olmq = fileURLToPath(new URL('../cli/main.js', import.meta.url));

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

// utime + stime of another process, from /proc (Linux), in ms.
function processCpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / 100 : null;
  } catch {
    return null;
  }
}

const round = (n: number): number => Math.round(n * 10) / 10;

const t0 = performance.now();
const server = spawn(
  process.execPath,
  [
    olmq,
    'registry',
    'serve',
    '--fbc',
    dir,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--log-level',
    'error',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const address = await new Promise<string>((resolve, reject) => {
  let out = '';
  server.stdout.setEncoding('utf8');
  server.stdout.on('data', (chunk: string) => {
    out += chunk;
    const found = /serving api\.Registry on (\S+)/.exec(out)?.[1];
    if (found !== undefined) resolve(found);
  });
  server.on('exit', (code) => reject(new Error(`olmq registry serve exited with ${code}: ${out}`)));
});
const serveStartMs = performance.now() - t0;
const serverStartCpuMs = processCpuMs(server.pid ?? -1);

let cpu0 = cpuMs();
let t1 = performance.now();
const manifestCache = new Map<string, BundleManifestData>();
const objects = await fetchRegistryCatalog({ address, timeoutMs: 10_000, manifestCache });
const fetchMs = performance.now() - t1;
const fetchCpuMs = cpuMs() - cpu0;
const serverCpuAfterFetch = processCpuMs(server.pid ?? -1);

// The next poll of an unchanged registry: manifests come from the cache.
cpu0 = cpuMs();
t1 = performance.now();
await fetchRegistryCatalog({ address, timeoutMs: 10_000, manifestCache });
const pollMs = performance.now() - t1;
const pollCpuMs = cpuMs() - cpu0;

cpu0 = cpuMs();
t1 = performance.now();
const { index, warnings } = buildCatalogIndex(objects);
const indexMs = performance.now() - t1;
const indexCpuMs = cpuMs() - cpu0;

const t2 = performance.now();
const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
server.kill('SIGTERM');
const exitCode = await exited;
const stopMs = performance.now() - t2;

const bundleObjects = objects.filter((o) => o.schema === 'olm.bundle').length;
process.stdout.write(
  `${JSON.stringify({
    catalog: dir.split('/').pop(),
    packages: index.packages.length,
    bundles: index.bundles.length,
    warnings: warnings.length,
    serveStartMs: round(serveStartMs),
    serverStartCpuMs: serverStartCpuMs,
    fetchMs: round(fetchMs),
    fetchCpuMs: round(fetchCpuMs),
    serverFetchCpuMs:
      serverCpuAfterFetch === null || serverStartCpuMs === null
        ? null
        : serverCpuAfterFetch - serverStartCpuMs,
    // ListPackages + GetPackage per package + ListBundles + GetBundle per bundle with an image.
    calls: 2 + index.packages.length + bundleObjects,
    pollMs: round(pollMs),
    pollCpuMs: round(pollCpuMs),
    indexMs: round(indexMs),
    indexCpuMs: round(indexCpuMs),
    fetchAndIndexMs: round(fetchMs + indexMs),
    clientPeakRssMB: round(process.resourceUsage().maxRSS / 1024),
    stopMs: round(stopMs),
    serverExitCode: exitCode,
  })}\n`,
);
