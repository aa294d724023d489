// Test fixture: the whole of olmq as `olmq up` runs it, on the devcluster — the watcher and every
// built-in function — with the catalog `community` in olm served by a real registry server over
// ../shared/catalogs/small. Torn down with the test.
import { join } from 'node:path';
import { Registry } from 'prom-client';
import type { Test } from 'tap';
import { builtInFunctions, startFunctions, stopFunctions } from '../../cli/functions.js';
import { startWatcher } from '../../watcher/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { loadRegistryCatalog, startRegistryServer } from '../../shared/registry/index.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { backboneFor, clusterFor } from './backbone.js';
import type { ClusterFixture } from './devcluster.js';
import { capturingLogger } from './log.js';
import { sharedDir } from './repo.js';
import { waitFor } from './wait.js';

export interface Pipeline {
  fixture: ClusterFixture;
  client: KubeClient;
  lines: Record<string, unknown>[];
}

export async function pipelineFor(t: Test): Promise<Pipeline> {
  const { fixture, client } = await clusterFor(t);
  const backbone = await backboneFor(t, { leaseTtlMs: 2_000 });
  const { log, lines } = capturingLogger('warn');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olm' } });
  const watcher = await startWatcher({
    cluster: { id: 'c1', kubeConfig: fixture.kubeConfig },
    backbone,
    log,
    registry: new Registry(),
    identity: 'test-watcher',
    leaseNamespace: 'olmq-system',
    leaseName: 'olmq-watcher',
    leaseDurationSeconds: 15,
  });
  t.teardown(() => watcher.stop());
  await watcher.synced();
  const registry = new Registry();
  const functions = await startFunctions(Object.keys(builtInFunctions), builtInFunctions, {
    backbone,
    clients: new Map([['c1', client]]),
    log,
    registry,
    metrics: createFunctionMetrics(registry),
    globalCatalogNamespace: 'olm',
    host: { baseBackoffMs: 20, contentionDelayMs: 20 },
  });
  t.teardown(() => stopFunctions(functions, 1_000));
  const served = await startRegistryServer({
    catalog: (await loadRegistryCatalog(join(sharedDir, 'catalogs', 'small'))).catalog,
    host: '127.0.0.1',
    port: 0,
  });
  t.teardown(() => served.stop(0));
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'community', namespace: 'olm' },
    spec: { sourceType: 'grpc', address: served.address },
  });
  await waitFor(
    'the catalog to be READY',
    async () => {
      const source = await client.get<
        KubeObject & { status?: { connectionState?: { lastObservedState?: string } } }
      >({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'CatalogSource',
        namespace: 'olm',
        name: 'community',
      });
      return source?.status?.connectionState?.lastObservedState === 'READY';
    },
    30_000,
  );
  return { fixture, client, lines };
}
