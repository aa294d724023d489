// Pull credentials as upstream's pods have them, read from the devcluster: the registry Pod's
// (spec.secrets, then the ServiceAccount named after the CatalogSource) and the bundle unpack
// pod's (spec.secrets, or else the default ServiceAccount's), then the operator-wide ones.
import t from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { credentialsFromDockerConfigs } from '../../shared/oci/index.js';
import {
  bundleUnpackPod,
  catalogRegistryPod,
  pullCredentials,
} from '../../shared/registry-access/index.js';
import { clusterFor } from '../harness/backbone.js';
import { waitFor } from '../harness/wait.js';

const ns = 'default';
const host = 'registry.example:5000';

function pullSecret(name: string, user: string, registry = host): KubeObject {
  const auth = Buffer.from(`${user}:pw`).toString('base64');
  const json = JSON.stringify({ auths: { [registry]: { auth } } });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(json).toString('base64') },
  };
}

async function setAccount(client: KubeClient, name: string, secrets: string[]): Promise<void> {
  const ref = { apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name };
  if ((await client.get(ref)) === undefined)
    await client.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: ns },
    });
  await client.patch(ref, 'merge', { imagePullSecrets: secrets.map((s) => ({ name: s })) });
}

const userOf = async (promise: Promise<(registry: string) => unknown>) => {
  const found = (await promise)(host) as { username?: string } | undefined;
  return found?.username;
};

t.test('registry access - pull credentials in the order of upstream pods', async (t) => {
  const { client } = await clusterFor(t);
  for (const [name, user] of [
    ['spec', 'from-spec'],
    ['catalog-sa', 'from-catalog-sa'],
    ['default-sa', 'from-default-sa'],
  ] as const)
    await client.create(pullSecret(name, user));
  await client.create(pullSecret('default-other', 'other-from-default-sa', 'elsewhere.example'));
  await waitFor('the default ServiceAccount', () =>
    client.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'default' }),
  );
  await setAccount(client, 'cat', ['missing', 'catalog-sa']);
  await setAccount(client, 'default', ['default-sa', 'default-other']);
  const wide = credentialsFromDockerConfigs([
    {
      source: 'auth file',
      json: JSON.stringify({
        auths: {
          [host]: { username: 'from-file', password: 'x' },
          'other.example': { username: 'other', password: 'x' },
        },
      }),
    },
  ]);
  const source = (secrets: string[]) => ({ namespace: ns, name: 'cat', secrets });

  t.equal(
    await userOf(pullCredentials(client, catalogRegistryPod(source(['spec'])), wide)),
    'from-spec',
    'registry pod: spec.secrets first',
  );
  t.equal(
    await userOf(pullCredentials(client, catalogRegistryPod(source([])), wide)),
    'from-catalog-sa',
    "registry pod: the CatalogSource's ServiceAccount (its missing secret skipped, as kubelet does)",
  );
  t.equal(
    await userOf(pullCredentials(client, bundleUnpackPod(source([])), wide)),
    'from-default-sa',
    'unpack pod without spec.secrets: the default ServiceAccount',
  );
  const unpackWithSpec = await pullCredentials(
    client,
    bundleUnpackPod({ namespace: ns, name: 'cat', secrets: ['catalog-sa'] }),
    undefined,
  );
  t.equal(
    (unpackWithSpec(host) as { username?: string } | undefined)?.username,
    'from-catalog-sa',
    'unpack pod with spec.secrets: those, not the default ServiceAccount',
  );
  t.equal(
    unpackWithSpec('elsewhere.example'),
    undefined,
    'admission adds no ServiceAccount secret to a pod that names some',
  );
  const unpackWithout = await pullCredentials(client, bundleUnpackPod(source([])), undefined);
  t.equal(
    (unpackWithout('elsewhere.example') as { username?: string } | undefined)?.username,
    'other-from-default-sa',
  );
  await setAccount(client, 'cat', []);
  t.equal(
    await userOf(pullCredentials(client, catalogRegistryPod(source([])), wide)),
    'from-file',
    'nothing on the pod or its ServiceAccount: the operator-wide file',
  );

  await t.rejects(pullCredentials(client, catalogRegistryPod(source(['absent'])), wide), {
    name: 'PullSecretError',
    message: `pull secret ${ns}/absent not found`,
  });
  await client.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'opaque', namespace: ns },
    type: 'Opaque',
    data: { token: Buffer.from('x').toString('base64') },
  });
  await setAccount(client, 'cat', ['opaque']);
  await t.rejects(pullCredentials(client, catalogRegistryPod(source([])), wide), {
    name: 'PullSecretError',
    message: `pull secret ${ns}/opaque of ServiceAccount ${ns}/cat has no .dockerconfigjson (type Opaque)`,
  });
});
