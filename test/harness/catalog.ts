// Test fixture for the catalog function: a devcluster with the OLM API, a nats-server, a
// watcher mirroring CatalogSources and ConfigMaps, and the catalog function hosted by a
// FunctionHost, all torn down with the test. Plus helpers to turn real catalogs into the
// shapes CatalogSources read (upstream's ConfigMap format; a registry stand-in).
import { Registry } from 'prom-client';
import type { Test } from 'tap';
import { stringify } from 'yaml';
import {
  startCatalogFunction,
  type CatalogFunctionOptions,
  type RegistryCatalogFetcher,
} from '../../functions/catalog/index.js';
import { mirroredKinds } from '../../watcher/kinds.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import {
  buildCatalogIndex,
  decodeBundleManifests,
  readCatalogDirectory,
} from '../../shared/catalog/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { FunctionHost } from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { RegistryUnavailableError } from '../../shared/registry/client.js';
import { backboneFor, clusterFor } from './backbone.js';
import type { ClusterFixture } from './devcluster.js';
import { capturingLogger } from './log.js';
import { watcherFor } from './watcher.js';

/** A running catalog function against a devcluster. */
export interface CatalogFixture {
  fixture: ClusterFixture;
  client: KubeClient;
  backbone: Backbone;
  registry: Registry;
  lines: Record<string, unknown>[];
  /** Sum of a metric's values (optionally only series matching `labels`). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

/** Starts the devcluster, NATS, a watcher and the catalog function. */
export async function catalogFunctionFor(
  t: Test,
  options: CatalogFunctionOptions = {},
): Promise<CatalogFixture> {
  const { fixture, client } = await clusterFor(t);
  const backbone = await backboneFor(t, { leaseTtlMs: 2_000 });
  const watcher = await watcherFor(t, fixture, backbone, {
    kinds: mirroredKinds.filter((k) => ['CatalogSource', 'ConfigMap', 'Pod'].includes(k.kind)),
  });
  await watcher.synced();
  const registry = new Registry();
  const { log, lines } = capturingLogger('info');
  const stop = new AbortController();
  const clients = new Map([['c1', client]]);
  const started = await startCatalogFunction(
    {
      backbone,
      clients,
      log,
      registry,
      globalCatalogNamespace: 'olm',
      signal: stop.signal,
    },
    {
      ...options,
      config: { retryMs: 200, connectingRetryMs: 100, updatePodRequeueMs: 200, ...options.config },
    },
  );
  const hosts = started.definitions.map(
    (definition) =>
      new FunctionHost(
        backbone,
        definition,
        log,
        createFunctionMetrics(registry),
        { baseBackoffMs: 20, contentionDelayMs: 20, random: () => 0.5 },
        clients,
      ),
  );
  for (const host of hosts) await host.start();
  t.teardown(async () => {
    for (const host of hosts) await host.stop(1_000);
    stop.abort();
    await started.close?.();
  });
  const metric = async (name: string, labels: Record<string, string> = {}): Promise<number> => {
    const found = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
    return (found?.values ?? [])
      .filter((v) =>
        Object.entries(labels).every(
          ([k, want]) => (v.labels as Record<string, unknown>)[k] === want,
        ),
      )
      .reduce((sum, v) => sum + v.value, 0);
  };
  return { fixture, client, backbone, registry, lines, metric };
}

/** A CatalogSource object. */
export function catalogSource(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name, namespace },
    spec,
  };
}

/** Reads a CatalogSource. */
export async function getCatalogSource(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<KubeObject & { status?: Record<string, unknown> }> {
  const object = await client.get({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    namespace,
    name,
  });
  if (object === undefined) throw new Error(`CatalogSource ${namespace}/${name} is gone`);
  return object;
}

/**
 * Upstream's ConfigMap catalog format (customResourceDefinitions, clusterServiceVersions,
 * packages) holding the bundles of one package of an FBC directory: each bundle's CSV and CRDs
 * decoded from its olm.bundle.object manifests, each channel with its head as currentCSV.
 * `drop` leaves out bundles (by CSV name); channels then start at the newest kept entry.
 */
export async function configMapFormatOf(
  dir: string,
  drop: readonly string[] = [],
): Promise<Record<string, string>> {
  const { index, content } = buildCatalogIndex(await readCatalogDirectory(dir));
  const csvs: unknown[] = [];
  const crds = new Map<string, unknown>();
  for (const bundle of index.bundles) {
    if (drop.includes(bundle.name)) continue;
    const bundleContent = content.get(bundle.package, bundle.name);
    if (bundleContent === undefined) continue;
    const manifests = decodeBundleManifests(bundleContent);
    if (manifests.csv !== undefined) csvs.push(manifests.csv);
    for (const other of manifests.others) {
      const meta = other['metadata'] as { name?: string } | undefined;
      if (other['kind'] === 'CustomResourceDefinition' && meta?.name !== undefined)
        crds.set(meta.name, other);
    }
  }
  const packages = index.packages.map((pkg) => ({
    packageName: pkg.name,
    defaultChannel: pkg.defaultChannel ?? undefined,
    channels: index
      .channelsOf(pkg.name)
      .map((channel) => ({
        name: channel.name,
        currentCSV: channel.entries.map((e) => e.name).find((n) => !drop.includes(n)),
      }))
      .filter((c) => c.currentCSV !== undefined),
  }));
  return {
    customResourceDefinitions: stringify([...crds.values()]),
    clusterServiceVersions: stringify(csvs),
    packages: stringify(packages),
  };
}

/**
 * A stand-in for a gRPC registry while shared/registry's client is not built: serves the FBC
 * directory `dir` at `address` when `reachable`, and answers like an unreachable registry
 * otherwise. The directory is read on every fetch, so tests can change what it serves.
 */
export function registryStandIn(address: string, dir: string) {
  const state = { reachable: true, fetches: 0 };
  const fetch: RegistryCatalogFetcher = async (options) => {
    if (options.address !== address || !state.reachable) {
      throw new RegistryUnavailableError(
        options.address,
        `connection refused (dial tcp ${options.address})`,
      );
    }
    state.fetches++;
    return readCatalogDirectory(dir);
  };
  return { state, fetch };
}
