// Registry pods of image sources on the devcluster: an evicted serving pod (status.phase
// Failed, reason Evicted, as the kubelet leaves it) is deleted and replaced, and the catalog
// serves again.
import { join } from 'node:path';
import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import { loadRegistryCatalog, startRegistryServer } from '../../shared/registry/index.js';
import { catalogFunctionFor, catalogSource, getCatalogSource } from '../harness/catalog.js';
import { smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const ns = 'default';

t.test('catalog registry pods - an evicted registry pod is replaced', async (t) => {
  // The registry Service is mapped to a real registry server serving the same catalog.
  const served = await startRegistryServer({
    catalog: (await loadRegistryCatalog(join(smallCatalog, 'etcd'))).catalog,
    host: '127.0.0.1',
    port: 0,
  });
  t.teardown(() => served.stop());
  const f = await catalogFunctionFor(t, {
    // Upstream's pod mode (the default reads images directly).
    config: {
      imageMode: 'pod',
      registryAddresses: new Map([[`${ns}/evicted`, served.address]]),
    },
  });
  await f.client.create(
    catalogSource(ns, 'evicted', { sourceType: 'grpc', image: 'quay.io/example/catalog:v1' }),
  );
  const state = async (): Promise<string | undefined> =>
    (
      (await getCatalogSource(f.client, ns, 'evicted')).status as
        { connectionState?: { lastObservedState?: string } } | undefined
    )?.connectionState?.lastObservedState;
  await waitFor('the source to be READY', async () => (await state()) === 'READY');
  const pods = async (): Promise<KubeObject[]> =>
    (
      await f.client.list(
        { apiVersion: 'v1', kind: 'Pod', namespace: ns },
        { labelSelector: 'olm.catalogSource=evicted' },
      )
    ).items;
  const [pod] = await pods();
  if (pod === undefined) throw new Error('no registry pod');

  await f.client.updateStatus({
    ...pod,
    status: {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node was low on resource: memory.',
      conditions: [{ type: 'Ready', status: 'False' }],
    },
  });
  const replaced = await waitFor('a new registry pod, the evicted one gone', async () => {
    const now = await pods();
    return now.length === 1 && now[0]?.metadata.uid !== pod.metadata.uid ? now[0] : undefined;
  });
  t.match(replaced.metadata, { name: /^evicted-/, labels: { 'olm.catalogSource': 'evicted' } });
  await waitFor('the source to be READY again', async () => {
    const [current] = await pods();
    const readyPod = (
      current?.['status'] as { conditions?: { type: string; status: string }[] }
    )?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    return readyPod === true && (await state()) === 'READY';
  });
});
