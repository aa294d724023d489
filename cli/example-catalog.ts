// The catalog `olmq up` ships, as upstream's install ships `operatorhubio-catalog`: a File-Based
// Catalog directory (by default the repository's catalogs/example) served over the
// operator-registry gRPC API from this process, and a CatalogSource in the global catalog
// namespace pointing at it, so `kubectl get packagemanifests` lists operators at once.
// The catalog function runs in this process too, so a loopback address reaches it on any
// cluster. The CatalogSource is applied (server-side) on every start: the port changes between
// runs and the devcluster may keep the object across restarts.
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { KubeClient } from '../shared/kube/client.js';
import {
  loadRegistryCatalog,
  startRegistryServer,
  type RegistryCatalog,
} from '../shared/registry/index.js';

/** The CatalogSource `olmq up` creates. */
export const exampleCatalogName = 'olmq-example';

/** The repository's example catalog (six real packages; catalogs/LICENSE-NOTICE.md). */
export const exampleCatalogDir = fileURLToPath(new URL('../../catalogs/example', import.meta.url));

/** A served example catalog; stop() ends the server (the CatalogSource stays, as any object). */
export interface ServedCatalog {
  readonly address: string;
  readonly packages: number;
  stop(): Promise<void>;
}

/** Reads the catalog directory (before anything starts: a bad --catalog fails fast). */
export async function loadExampleCatalog(dir: string, log: Logger): Promise<RegistryCatalog> {
  const { catalog, warnings } = await loadRegistryCatalog(dir);
  for (const w of warnings) log.warn({ code: w.code, package: w.package }, w.message);
  return catalog;
}

/** Serves the catalog and applies CatalogSource olmq-example in `namespace`. */
export async function serveExampleCatalog(options: {
  catalog: RegistryCatalog;
  namespace: string;
  client: KubeClient;
}): Promise<ServedCatalog> {
  const { catalog, namespace, client } = options;
  const server = await startRegistryServer({ catalog, host: '127.0.0.1', port: 0 });
  try {
    const catalogSource = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: exampleCatalogName, namespace },
      spec: {
        sourceType: 'grpc',
        address: server.address,
        displayName: 'olmq example operators',
        publisher: 'olmq',
      },
    };
    await client.patch(
      {
        apiVersion: catalogSource.apiVersion,
        kind: 'CatalogSource',
        namespace,
        name: exampleCatalogName,
      },
      'apply',
      catalogSource,
      { fieldManager: 'olmq-up', force: true },
    );
  } catch (error) {
    await server.stop(0);
    throw error;
  }
  return {
    address: server.address,
    packages: catalog.index.packages.length,
    stop: () => server.stop(),
  };
}
