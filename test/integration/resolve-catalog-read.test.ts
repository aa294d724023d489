// The resolve function's load when a catalog's content cannot be read: NATS not answering (its
// server killed) fails the pass, so the host retries it, while content that is not there is a
// catalog the Subscription's status calls unavailable. Real devcluster, watcher and nats-servers.
import { connect } from '@nats-io/transport-node';
import t from 'tap';
import { loadSnapshot } from '../../functions/resolve/definition.js';
import { openBackbone } from '../../shared/bus/backbone.js';
import { isBackboneUnavailable } from '../../shared/bus/unavailable.js';
import {
  CatalogIndexCache,
  openCatalogStore,
  putCatalogIndexRecord,
} from '../../shared/handoff/index.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { natsServerFor } from '../harness/nats.js';
import { waitFor } from '../harness/wait.js';
import { watcherFor } from '../harness/watcher.js';
import { listMirrored } from '../../shared/bus/mirror-read.js';

t.test(
  'resolve load - a catalog NATS cannot read fails the pass; one not stored is unavailable',
  async (t) => {
    const { fixture, client } = await clusterFor(t);
    const backbone = await backboneFor(t);
    await watcherFor(t, fixture, backbone);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olm' } });
    await client.create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'community', namespace: 'olm' },
      spec: { sourceType: 'grpc', address: 'localhost:50051' },
    });
    await putCatalogIndexRecord(backbone, 'c1', {
      namespace: 'olm',
      name: 'community',
      digest: 'sha256:' + 'a'.repeat(64),
      priority: 0,
      displayName: 'Community',
      publisher: '',
      sourceType: 'grpc',
      healthy: true,
      updatedAt: new Date().toISOString(),
      packages: 1,
      bundles: 1,
    });
    await waitFor(
      'the CatalogSource in the mirror',
      async () =>
        (await listMirrored(backbone, { cluster: 'c1', kind: 'CatalogSource', namespace: 'olm' }))
          .length === 1,
    );
    const load = (indexes: CatalogIndexCache) =>
      loadSnapshot(backbone, 'mirror', indexes, 'c1', 'olm', 'olm', new Date());

    // Content that is not stored: a catalog the status can name as unavailable.
    const missing = await load(new CatalogIndexCache(await openCatalogStore(backbone)));
    t.match(missing.catalogs, [{ name: 'community', index: null, unavailableReason: /.+/ }]);

    // Content behind a NATS server that was killed: the pass fails, retried by the host.
    const elsewhere = await natsServerFor(t);
    const nc = await connect({ servers: elsewhere.url, maxReconnectAttempts: -1 });
    t.teardown(() => nc.close());
    const store = await openCatalogStore(await openBackbone(nc));
    await elsewhere.kill();
    const failure = await load(new CatalogIndexCache(store)).then(
      () => undefined,
      (error: unknown) => error,
    );
    t.ok(failure instanceof Error, 'the load fails');
    t.ok(isBackboneUnavailable(failure), `as NATS being unavailable: ${String(failure)}`);
  },
);
