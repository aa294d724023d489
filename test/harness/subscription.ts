// Test fixture: the small community catalog served by a real registry server and registered as
// CatalogSource olm/community, and one Subscription (etcd) followed to its Succeeded CSV — the
// shortest whole-pipeline check, for tests about what runs underneath (NATS security, failover).
import type { Test } from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { loadRegistryCatalog, startRegistryServer } from '../../shared/registry/index.js';
import { namespaceWithOperatorGroup, waitForCsvPhase } from './install.js';
import { smallCatalog } from './repo.js';
import { waitFor } from './wait.js';

/** What a fixture needs of a test: somewhere to register its cleanup (a bench passes its own). */
type Teardowns = Pick<Test, 'teardown'>;

/** The CSV the etcd Subscription of subscribeEtcd installs. */
export const etcdHead = 'etcdoperator.v0.9.4';

/**
 * Serves an FBC directory (default the example catalog) as olm/community and waits for it to
 * be READY.
 */
export async function communityCatalogFor(
  t: Teardowns,
  client: KubeClient,
  catalogDir = smallCatalog,
): Promise<void> {
  const served = await startRegistryServer({
    catalog: (await loadRegistryCatalog(catalogDir)).catalog,
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
    60_000,
  );
}

/** Subscribes namespace `namespace` (created here, with an OperatorGroup) to etcd. */
export async function subscribeEtcd(client: KubeClient, namespace: string): Promise<void> {
  await namespaceWithOperatorGroup(client, namespace);
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: 'etcd', namespace },
    spec: {
      name: 'etcd',
      channel: 'singlenamespace-alpha',
      source: 'community',
      sourceNamespace: 'olm',
    },
  });
}

/** Waits for the etcd CSV in `namespace` to be Succeeded. */
export async function etcdSucceeded(
  client: KubeClient,
  namespace: string,
  timeoutMs = 90_000,
): Promise<KubeObject> {
  return waitForCsvPhase(client, namespace, etcdHead, 'Succeeded', undefined, timeoutMs);
}
