// Test fixture for `kubectl olmq`: olmq on a devcluster with its package server (PackageManifests)
// and the catalog `community` in olm served by a real registry over catalogs/example (or another
// directory), and the real kubectl running the compiled plugin from a temp PATH entry — as a
// user's kubectl finds `kubectl-olmq` on PATH.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Test } from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { loadRegistryCatalog, startRegistryServer } from '../../shared/registry/index.js';
import { kubectl, type ClusterFixture, type KubectlResult } from './devcluster.js';
import { capturingLogger } from './log.js';
import { repoRoot, smallCatalog } from './repo.js';
import { systemFor } from './system.js';
import { waitFor } from './wait.js';

/** The compiled plugin. */
export const pluginMain = join(repoRoot, 'dist', 'cli', 'plugin', 'main.js');

/** One cluster with olmq, its package server and a catalog. */
export interface PluginCluster {
  fixture: ClusterFixture;
  client: KubeClient;
}

/** Serves `dir` from a registry on a random port (stopped at teardown); its address. */
export async function serveCatalog(t: Test, dir: string): Promise<string> {
  const served = await startRegistryServer({
    catalog: (await loadRegistryCatalog(dir)).catalog,
    host: '127.0.0.1',
    port: 0,
  });
  t.teardown(() => served.stop(0));
  return served.address;
}

/** Waits until CatalogSource namespace/name reports `state`. */
export async function catalogState(
  client: KubeClient,
  namespace: string,
  name: string,
  state = 'READY',
): Promise<void> {
  await waitFor(
    `catalog ${namespace}/${name} to be ${state}`,
    async () => {
      const source = await client.get<
        KubeObject & { status?: { connectionState?: { lastObservedState?: string } } }
      >({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', namespace, name });
      return source?.status?.connectionState?.lastObservedState === state;
    },
    30_000,
  );
}

/** olmq with the package server on a devcluster, catalog `community` in olm READY. */
export async function pluginClusterFor(
  t: Test,
  options: { clusterId?: string; catalogDir?: string } = {},
): Promise<PluginCluster> {
  const { log } = capturingLogger('warn');
  const { fixture, client } = await systemFor(t, {
    log,
    clusterId: options.clusterId ?? 'c1',
    packageServer: true,
    backbone: { leaseTtlMs: 2_000 },
    watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
    functions: { host: { baseBackoffMs: 20, contentionDelayMs: 20 }, stopGraceMs: 1_000 },
  });
  const address = await serveCatalog(t, options.catalogDir ?? smallCatalog);
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'community', namespace: 'olm' },
    spec: { sourceType: 'grpc', address, displayName: 'Community Operators' },
  });
  await catalogState(client, 'olm', 'community');
  return { fixture, client };
}

/** A temp dir holding a `kubectl-olmq` shim that runs the compiled plugin (removed at teardown). */
export function pluginPath(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-plugin-bin-'));
  const shim = join(dir, 'kubectl-olmq');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${pluginMain}" "$@"\n`);
  chmodSync(shim, 0o755);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `kubectl olmq ARGS` with the real kubectl against `fixture`, the shim on PATH. */
export function kubectlOlmq(
  fixture: ClusterFixture,
  bin: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<KubectlResult> {
  return kubectl(fixture, ['olmq', ...args], undefined, {
    PATH: `${bin}${delimiter}${process.env['PATH'] ?? ''}`,
    NO_COLOR: '1',
    ...env,
  });
}
