// A benchmark's catalogs: served by a real api.Registry server, and waited for to be READY
// before it starts measuring.
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { loadRegistryCatalog, startRegistryServer } from '../../shared/registry/index.js';

type CatalogSource = KubeObject & { status?: { connectionState?: { lastObservedState?: string } } };

/** Resolves once CatalogSource `namespace/name` is READY; throws after `timeoutMs`. */
export async function catalogReady(
  admin: KubeClient,
  name: string,
  { namespace = 'olm', timeoutMs = 120_000 } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const source = await admin.get<CatalogSource>({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      namespace,
      name,
    });
    if (source?.status?.connectionState?.lastObservedState === 'READY') return;
    if (Date.now() > deadline)
      throw new Error(`CatalogSource ${namespace}/${name} not READY within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Serves the catalog directory `dir` from a registry server and creates CatalogSource
 * `olm/name` for it; resolves once it is READY. Stop the returned server at the end.
 */
export async function serveCatalog(admin: KubeClient, name: string, dir: string) {
  const served = await startRegistryServer({
    catalog: (await loadRegistryCatalog(dir)).catalog,
    host: '127.0.0.1',
    port: 0,
  });
  await admin.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name, namespace: 'olm' },
    spec: { sourceType: 'grpc', address: served.address },
  });
  await catalogReady(admin, name);
  return served;
}
