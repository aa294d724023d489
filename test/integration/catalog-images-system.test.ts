// olmq as `olmq up` runs it (devcluster, every function, the package server) with a catalog
// image on a real local registry: the CatalogSource is read directly and its packages are
// listed as PackageManifests.
import t from 'tap';
import { pushCatalogImage } from '../harness/images.js';
import { capturingLogger } from '../harness/log.js';
import { registryFor } from '../harness/registry.js';
import { smallCatalog } from '../harness/repo.js';
import { systemFor } from '../harness/system.js';
import { waitFor } from '../harness/wait.js';

t.test('catalog images - a spec.image CatalogSource lists its PackageManifests', async (t) => {
  const registry = await registryFor(t);
  const pushed = await pushCatalogImage(registry, smallCatalog, { packages: ['etcd'] });
  const { log } = capturingLogger('warn');
  const { client } = await systemFor(t, {
    log,
    packageServer: true,
    backbone: { leaseTtlMs: 2_000 },
    watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
    functions: { host: { baseBackoffMs: 20, contentionDelayMs: 20 }, stopGraceMs: 1_000 },
  });
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'from-image', namespace: 'olm' },
    spec: { sourceType: 'grpc', image: pushed.image, displayName: 'From an image' },
  });
  const listed = await waitFor(
    'the etcd PackageManifest',
    async () => {
      const list = await client.list({
        apiVersion: 'packages.operators.coreos.com/v1',
        kind: 'PackageManifest',
        namespace: 'default',
      });
      return list.items.find((p) => p.metadata.name === 'etcd');
    },
    30_000,
  );
  const status = listed['status'] as { catalogSource?: string; defaultChannel?: string };
  t.equal(status.catalogSource, 'from-image');
  t.equal(status.defaultChannel, 'singlenamespace-alpha');
  const pods = await client.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'olm' });
  t.equal(pods.items.length, 0, 'no registry Pod');
});
