// Benchmark of catalog and bundle images read straight from a registry (shared/oci): a real
// docker-registry on a free port (test/harness/registry.ts), the catalog directory packed as
// one image (FBC under /configs, one gzip layer) and pushed; then pull + find the FBC + build
// the index, as the catalog function does for a spec.image CatalogSource; a poll (one HEAD);
// and pulls of small bundle images (the etcd bundles of the small catalog).
// Run (after `npx tsc -p tsconfig.json`):
//   node dist/bench/catalog-image.js [catalog-dir] [runs]
// Prints one JSON object. *CpuMs are this process's CPU time.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { catalogObjectsOfImage } from '../functions/catalog/image-source.js';
import { buildCatalogIndex } from '../shared/catalog/index.js';
import { RegistryClient } from '../shared/oci/index.js';
import { configsLabel, pushCatalogImage, pushImage } from '../test/harness/images.js';
import { startTestRegistry } from '../test/harness/registry.js';
import { smallCatalog } from '../test/harness/repo.js';

const defaultDir = fileURLToPath(new URL('../../../shared/catalogs/operatorhub', import.meta.url));
const dir = process.argv[2] ?? defaultDir;
const runs = Number(process.argv[3] ?? 5);

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const round = (n: number): number => Math.round(n * 10) / 10;
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

async function filesBelow(root: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.set(`configs/${relative(root, path)}`, await readFile(path));
    }
  };
  await walk(root);
  return files;
}

const registry = await startTestRegistry();
try {
  const files = await filesBelow(dir);
  const fbcBytes = [...files.values()].reduce((sum, b) => sum + b.length, 0);
  let t0 = performance.now();
  const pushed = await pushImage(registry, 'bench/catalog', 'latest', {
    layers: [files],
    labels: { [configsLabel]: '/configs' },
  });
  const packAndPushMs = performance.now() - t0;
  const image = `${registry.host}/bench/catalog:latest`;
  const limits = { layerBytes: 4 * 1024 ** 3, unpackedBytes: 8 * 1024 ** 3 };

  const pullMs: number[] = [];
  const indexMs: number[] = [];
  const totalMs: number[] = [];
  const totalCpuMs: number[] = [];
  let packages = 0;
  let bundles = 0;
  for (let i = 0; i < runs; i++) {
    // A new client each run: no token or scheme cache, as after a restart.
    const client = new RegistryClient();
    const c0 = cpuMs();
    t0 = performance.now();
    const pulled = await client.pullImage(image, { limits });
    const t1 = performance.now();
    const { index } = buildCatalogIndex(catalogObjectsOfImage(pulled));
    const t2 = performance.now();
    pullMs.push(t1 - t0);
    indexMs.push(t2 - t1);
    totalMs.push(t2 - t0);
    totalCpuMs.push(cpuMs() - c0);
    packages = index.packages.length;
    bundles = index.bundles.length;
  }

  const client = new RegistryClient();
  const pollMs: number[] = [];
  for (let i = 0; i < 20; i++) {
    t0 = performance.now();
    await client.resolveDigest(image);
    pollMs.push(performance.now() - t0);
  }

  const small = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
  const bundleMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    for (const bundle of small.bundleImages.values()) {
      t0 = performance.now();
      await client.pullImage(bundle);
      bundleMs.push(performance.now() - t0);
    }
  }

  process.stdout.write(
    `${JSON.stringify({
      catalogDir: dir,
      fbcFiles: files.size,
      fbcBytes,
      imageDigest: pushed.digest,
      packAndPushMs: round(packAndPushMs),
      runs,
      packages,
      bundles,
      pullP50Ms: round(median(pullMs)),
      indexP50Ms: round(median(indexMs)),
      pullAndIndexP50Ms: round(median(totalMs)),
      pullAndIndexCpuP50Ms: round(median(totalCpuMs)),
      pollHeadP50Ms: round(median(pollMs)),
      bundlePulls: bundleMs.length,
      bundlePullP50Ms: round(median(bundleMs)),
    })}\n`,
  );
} finally {
  await registry.stop();
}
