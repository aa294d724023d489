// The bundle unpacker against a real registry and a real nats-server: manifests of any file
// extension and several documents each, stored once by digest and found again by a second
// unpacker (another replica) without a pull; a 401 and the size limits, each with a specific
// error; a CSV that is not the bundle the catalog names.
import t from 'tap';
import {
  BundleImageError,
  BundleUnpacker,
  openBundleStore,
  readUnpackedBundle,
} from '../../shared/bundle-image/index.js';
import { RegistryClient } from '../../shared/oci/index.js';
import { manifestsOfUnpacked } from '../../functions/plan/bundle-sources.js';
import { backboneFor } from '../harness/backbone.js';
import { pushImage } from '../harness/images.js';
import { registryFor } from '../harness/registry.js';

const csv = (name: string) =>
  `apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: ${name}\nspec: {}\n`;
const annotations =
  'annotations:\n  operators.operatorframework.io.bundle.package.v1: demo\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n';

t.test('bundle unpack - every file in manifests/, stored once by digest', async (t) => {
  const registry = await registryFor(t);
  const backbone = await backboneFor(t);
  const store = await openBundleStore(backbone);
  const files = new Map<string, string>([
    ['manifests/demo.clusterserviceversion.yaml', csv('demo.v1')],
    [
      'manifests/crds.whatever',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n',
    ],
    [
      'manifests/svc.json',
      JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } }),
    ],
    [
      'manifests/nested/ignored.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nested\n',
    ],
    ['metadata/annotations.yaml', annotations],
  ]);
  const pushed = await pushImage(registry, 'olmq-test/demo-bundle', 'v1', { layers: [files] });
  const image = `${registry.host}/olmq-test/demo-bundle:v1`;
  const first = new BundleUnpacker({ client: new RegistryClient(), store });
  const unpacked = await first.unpack(image, undefined);
  t.equal(unpacked.source, 'registry');
  t.equal(unpacked.bundle.digest, pushed.digest);
  t.same(
    unpacked.bundle.objects.map(
      (o) => `${String(o['kind'])}/${String((o['metadata'] as { name: string }).name)}`,
    ),
    ['ConfigMap/a', 'ConfigMap/b', 'ClusterServiceVersion/demo.v1', 'Service/s'],
    'files in path order, every document, subdirectories not read',
  );
  t.equal(unpacked.bundle.annotations['operators.operatorframework.io.bundle.package.v1'], 'demo');
  t.equal((await first.unpack(image, undefined)).source, 'memory');
  t.ok(await readUnpackedBundle(store, pushed.digest), 'stored under the digest');
  // Another replica: found in the store, no pull (the registry may even be gone).
  const second = new BundleUnpacker({ client: new RegistryClient(), store });
  const again = await second.unpack(
    `${registry.host}/olmq-test/demo-bundle@${pushed.digest}`,
    undefined,
  );
  t.equal(again.source, 'store');
  t.same(again.bundle.objects, unpacked.bundle.objects);

  const manifests = manifestsOfUnpacked(unpacked.bundle, 'demo.v1');
  t.equal((manifests.csv?.['metadata'] as { name: string }).name, 'demo.v1');
  t.equal(manifests.others.length, 3);
  t.throws(() => manifestsOfUnpacked(unpacked.bundle, 'demo.v2'), {
    code: 'CsvMismatch',
    message: `bundle image ${image} holds ClusterServiceVersion demo.v1, but the catalog names the bundle demo.v2`,
  });
});

t.test('bundle unpack - 401, limits and broken manifests, each with its error', async (t) => {
  const registry = await registryFor(t, { htpasswd: true });
  const backbone = await backboneFor(t);
  const store = await openBundleStore(backbone);
  const files = new Map([
    ['manifests/csv.yaml', csv('demo.v1')],
    ['metadata/annotations.yaml', annotations],
  ]);
  await pushImage(registry, 'olmq-test/private', 'v1', { layers: [files] });
  const image = `${registry.host}/olmq-test/private:v1`;
  const unpacker = new BundleUnpacker({ client: new RegistryClient(), store });
  await t.rejects(unpacker.unpack(image, undefined), {
    code: 'PullFailed',
    retryable: false,
    message: `failed to pull bundle image ${image}: manifest ${image}: registry ${registry.host} requires credentials (401)`,
  });
  const credentials = () => ({
    kind: 'basic' as const,
    username: registry.username ?? '',
    password: registry.password ?? '',
  });
  const small = new BundleUnpacker({
    client: new RegistryClient(),
    store,
    limits: { unpackedBytes: 64 },
  });
  await t.rejects(small.unpack(image, credentials), {
    code: 'PullFailed',
    message: new RegExp(`^failed to pull bundle image ${image}: .*64`),
  });
  t.ok((await unpacker.unpack(image, credentials)).bundle.objects.length === 1, 'with credentials');

  await pushImage(registry, 'olmq-test/private', 'broken', {
    layers: [
      new Map([
        ['manifests/csv.yaml', `${csv('demo.v1')}---\n[not, an, object]\n`],
        ['metadata/annotations.yaml', annotations],
      ]),
    ],
  });
  await t.rejects(unpacker.unpack(`${registry.host}/olmq-test/private:broken`, credentials), {
    code: 'BadManifest',
    message: 'manifest manifests/csv.yaml is not a Kubernetes object',
  });
  await pushImage(registry, 'olmq-test/private', 'two-csvs', {
    layers: [
      new Map([
        ['manifests/a.yaml', csv('a.v1')],
        ['manifests/b.yaml', csv('b.v1')],
        ['metadata/annotations.yaml', annotations],
      ]),
    ],
  });
  const twoCsvs = unpacker.unpack(`${registry.host}/olmq-test/private:two-csvs`, credentials);
  await t.rejects(twoCsvs, { code: 'CsvCount', message: /has 2 ClusterServiceVersions/ });
  await twoCsvs.catch((error: unknown) => t.ok(error instanceof BundleImageError));
});
