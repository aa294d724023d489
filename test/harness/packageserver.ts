// Test fixture: a devcluster with the OLM API, a nats-server, catalogs built from
// catalogs/example stored in JetStream with their CatalogIndex records (as the catalog
// function publishes them), and a package server registered with the devcluster as the
// aggregated API packages.operators.coreos.com/v1.
import { join } from 'node:path';
import type { Test } from 'tap';
import { pino } from 'pino';
import {
  registerPackageApi,
  startPackageServer,
  type PackageServer,
} from '../../packageserver/index.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import { objectKey } from '../../shared/bus/subjects.js';
import { loadCatalogDirectory } from '../../shared/catalog/index.js';
import {
  openCatalogStore,
  putCatalogIndexRecord,
  storeCatalog,
  type CatalogIndexRecord,
} from '../../shared/handoff/index.js';
import type { KubeClient } from '../../shared/kube/client.js';
import type { ClusterFixture } from './devcluster.js';
import { backboneFor, clusterFor } from './backbone.js';
import { kubectl } from './devcluster.js';
import { smallCatalog } from './repo.js';

/** The small real catalogs. */
export const smallCatalogs = smallCatalog;

/** What a package-server test works with. */
export interface PackageServerFixture {
  fixture: ClusterFixture;
  client: KubeClient;
  backbone: Backbone;
  server: PackageServer;
  cluster: string;
}

/** Builds the catalog in `dir`, stores it and publishes the record for namespace/name. */
export async function publishCatalog(
  backbone: Backbone,
  cluster: string,
  dir: string,
  record: Pick<CatalogIndexRecord, 'namespace' | 'name' | 'displayName' | 'publisher'> &
    Partial<CatalogIndexRecord>,
  labels: Record<string, string> = {},
): Promise<void> {
  const { index, content } = await loadCatalogDirectory(dir);
  await storeCatalog(await openCatalogStore(backbone), index, content);
  // The mirrored CatalogSource, as the watcher would publish it (labels, creationTimestamp).
  await backbone.objects.put(
    objectKey({ cluster, kind: 'CatalogSource', namespace: record.namespace, name: record.name }),
    JSON.stringify({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: {
        name: record.name,
        namespace: record.namespace,
        labels,
        creationTimestamp: '2026-01-01T00:00:00Z',
      },
      spec: { sourceType: 'grpc', displayName: record.displayName, publisher: record.publisher },
    }),
  );
  await putCatalogIndexRecord(backbone, cluster, {
    digest: index.digest,
    priority: 0,
    sourceType: 'grpc',
    healthy: true,
    updatedAt: '2026-01-01T00:00:00Z',
    packages: index.packages.length,
    bundles: index.bundles.length,
    ...record,
  });
}

/**
 * The global catalog "operatorhubio" in olm (every package of small/), "team-catalog" in
 * team-a (etcd only), a package server on them, registered and Available.
 */
export async function packageServerFor(t: Test): Promise<PackageServerFixture> {
  const cluster = 'c1';
  const { fixture, client } = await clusterFor(t, cluster);
  const backbone = await backboneFor(t);
  await publishCatalog(
    backbone,
    cluster,
    smallCatalogs,
    {
      namespace: 'olm',
      name: 'operatorhubio',
      displayName: 'Community Operators',
      publisher: 'OperatorHub.io',
    },
    { 'olm.catalogSource': 'operatorhubio' },
  );
  await publishCatalog(backbone, cluster, join(smallCatalogs, 'etcd'), {
    namespace: 'team-a',
    name: 'team-catalog',
    displayName: 'Team Catalog',
    publisher: 'Team A',
    priority: 10,
  });
  const server = await startPackageServer({
    backbone,
    cluster,
    client,
    log: pino({ level: 'silent' }),
    globalNamespace: 'olm',
  });
  t.teardown(() => server.close());
  await registerPackageApi(client, server);
  const ready = await kubectl(fixture, [
    'wait',
    '--for=condition=Available',
    'apiservice/v1.packages.operators.coreos.com',
    '--timeout=30s',
  ]);
  if (ready.code !== 0) throw new Error(`APIService not available: ${ready.stderr}`);
  return { fixture, client, backbone, server, cluster };
}
