// Test fixture: the whole of olmq as `olmq up` runs it, on the devcluster — the watcher and every
// built-in function — with the catalog `community` in olm served by a real registry server over
// catalogs/example. Torn down with the test.
import type { Test } from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { loadRegistryCatalog, startRegistryServer } from '../../shared/registry/index.js';
import type { ClusterFixture } from './devcluster.js';
import { capturingLogger } from './log.js';
import { smallCatalog } from './repo.js';
import { systemFor } from './system.js';
import { waitFor } from './wait.js';

export interface Pipeline {
  fixture: ClusterFixture;
  client: KubeClient;
  lines: Record<string, unknown>[];
}

export async function pipelineFor(t: Test): Promise<Pipeline> {
  const { log, lines } = capturingLogger('warn');
  const { fixture, client } = await systemFor(t, {
    log,
    backbone: { leaseTtlMs: 2_000 },
    watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
    functions: { host: { baseBackoffMs: 20, contentionDelayMs: 20 }, stopGraceMs: 1_000 },
  });
  const served = await startRegistryServer({
    catalog: (await loadRegistryCatalog(smallCatalog)).catalog,
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
