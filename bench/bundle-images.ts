// Catalog and bundle images from a real local registry (Debian's docker-registry):
// - a whole catalog directory (default ../shared/catalogs/operatorhub, ~105 MB of FBC) packed
//   as one catalog image: pull + FBC read + index build (target ≤ 5 s);
// - bundle unpack from the registry, each bundle image new (pull, checks, store in JetStream),
//   p50 (target ≤ 50 ms);
// - Subscription → CSV Succeeded through every function for a bundle given only by its image,
//   on the devcluster with pod delay 0, into a namespace prepared beforehand on a settled system
//   (as bench/subscription-install.ts), p50 (target ≤ 400 ms); the first one includes the unpack.
// Run (after `npm run build`):
//   node dist/bench/bundle-images.js [--catalog DIR] [--bundles 20] [--subscriptions 10]
// Prints one JSON object.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { catalogObjectsOfImage } from '../functions/catalog/image-source.js';
import { BundleUnpacker, openBundleStore } from '../shared/bundle-image/index.js';
import { openBackbone } from '../shared/bus/backbone.js';
import { buildCatalogIndex } from '../shared/catalog/index.js';
import { KubeClient, type KubeObject } from '../shared/kube/client.js';
import { RegistryClient } from '../shared/oci/index.js';
import { startSystem } from '../system/index.js';
import { configsLabel, pushCatalogImage, pushImage } from '../test/harness/images.js';
import { startTestRegistry } from '../test/harness/registry.js';
import { smallCatalog } from '../test/harness/repo.js';
import { catalogReady } from './harness/catalog.js';
import { settled } from './harness/settled.js';

const { values } = parseArgs({
  options: {
    catalog: { type: 'string' },
    bundles: { type: 'string', default: '20' },
    subscriptions: { type: 'string', default: '10' },
  },
});
const catalogDir =
  values.catalog ?? fileURLToPath(new URL('../../../shared/catalogs/operatorhub', import.meta.url));

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

async function filesBelow(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesBelow(path)));
    else if (/\.(json|ya?ml)$/.test(entry.name)) out.push(path);
  }
  return out;
}

const registry = await startTestRegistry();
const result: Record<string, unknown> = {};
try {
  // 1. The whole catalog as an image.
  const files = new Map<string, Buffer>();
  let fbcBytes = 0;
  for (const path of await filesBelow(catalogDir)) {
    const bytes = await readFile(path);
    fbcBytes += bytes.length;
    files.set(`configs/${relative(catalogDir, path)}`, bytes);
  }
  const pushStarted = performance.now();
  await pushImage(registry, 'bench/catalog', 'v1', {
    layers: [files],
    labels: { [configsLabel]: '/configs' },
  });
  const pushMs = performance.now() - pushStarted;
  const runs: { pullMs: number; indexMs: number; totalMs: number }[] = [];
  let packages = 0;
  let bundles = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const pulled = await new RegistryClient().pullImage(`${registry.host}/bench/catalog:v1`);
    const t1 = performance.now();
    const built = buildCatalogIndex(catalogObjectsOfImage(pulled));
    const t2 = performance.now();
    packages = built.index.packages.length;
    bundles = built.index.bundles.length;
    runs.push({ pullMs: round(t1 - t0), indexMs: round(t2 - t1), totalMs: round(t2 - t0) });
  }
  result.catalogImage = {
    dir: catalogDir,
    fbcBytes,
    files: files.size,
    packages,
    bundles,
    pushMs: round(pushMs),
    runs,
    p50TotalMs: summary(runs.map((r) => r.totalMs)).p50Ms,
    targetMs: 5000,
  };

  // 2. + 3. on the whole system.
  const log = pino({ level: process.env.OLMQ_LOG_LEVEL ?? 'error' });
  const system = await startSystem({
    log,
    podReadyDelayMs: 0,
    clusterId: 'c1',
    client: { userAgent: 'olmq', qps: 5000, burst: 5000 },
    watcher: { identity: 'bench', leaseName: 'olmq-watcher', registry: new Registry() },
    functions: { host: { concurrency: 16, baseBackoffMs: 50 }, stopGraceMs: 5_000 },
  });
  try {
    const backbone = await openBackbone(system.nc);
    const unpacker = new BundleUnpacker({
      client: new RegistryClient(),
      store: await openBundleStore(backbone),
    });
    const etcd = await pushCatalogImage(registry, smallCatalog, {
      packages: ['etcd'],
      repository: 'bench/etcd',
    });
    const template = await new RegistryClient().pullImage(
      etcd.bundleImages.get('etcdoperator.v0.9.4') ?? '',
    );
    const unpacks: number[] = [];
    for (let i = 0; i < Number(values.bundles); i++) {
      // A new digest each time: a file of its own beside the real bundle's.
      const layer = new Map(template.files);
      layer.set('metadata/bench.txt', Buffer.from(String(i)));
      await pushImage(registry, 'bench/bundle', `v${i}`, { layers: [layer] });
      const t0 = performance.now();
      const { source } = await unpacker.unpack(`${registry.host}/bench/bundle:v${i}`, undefined);
      unpacks.push(performance.now() - t0);
      if (source !== 'registry') throw new Error(`bundle ${i} came from ${source}`);
    }
    result.bundleUnpack = {
      ...summary(unpacks),
      objects: 'etcd v0.9.4 (CSV + 3 CRDs)',
      targetP50Ms: 50,
    };

    const admin = await KubeClient.fromKubeConfig('c1', system.cluster.kubeConfig, {
      userAgent: 'bench',
      qps: 5000,
      burst: 5000,
    });
    await admin.create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'images', namespace: 'olm' },
      spec: { sourceType: 'grpc', image: etcd.image },
    });
    const until = async <T>(read: () => Promise<T | undefined>): Promise<T> => {
      for (;;) {
        const value = await read();
        if (value !== undefined) return value;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await catalogReady(admin, 'images');
    const installs: number[] = [];
    for (let i = 0; i < Number(values.subscriptions); i++) {
      const ns = `bench-${i}`;
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await admin.create({
        apiVersion: 'operators.coreos.com/v1',
        kind: 'OperatorGroup',
        metadata: { name: 'og', namespace: ns },
        spec: { targetNamespaces: [ns] },
      });
      // As the install bench: the namespace is ready (its OperatorGroup reconciled) before the
      // Subscription is timed.
      await settled();
      const t0 = performance.now();
      await admin.create({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: 'etcd', namespace: ns },
        spec: {
          name: 'etcd',
          channel: 'singlenamespace-alpha',
          source: 'images',
          sourceNamespace: 'olm',
        },
      });
      await until(async () => {
        const csv = await admin.get<KubeObject & { status?: { phase?: string } }>({
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'ClusterServiceVersion',
          namespace: ns,
          name: 'etcdoperator.v0.9.4',
        });
        return csv?.status?.phase === 'Succeeded' ? true : undefined;
      });
      installs.push(performance.now() - t0);
    }
    result.subscriptionFromImage = {
      ...summary(installs),
      firstMs: round(installs[0] ?? NaN),
      podReadyDelayMs: 0,
      targetP50Ms: 400,
    };
    admin.close();
  } finally {
    await system.stop();
  }
} finally {
  await registry.stop();
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
