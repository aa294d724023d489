// The registry client against a real docker-registry: pulls by tag and digest, OCI and Docker
// formats, indexes, whiteouts across layers, htpasswd auth with dockerconfigjson credentials,
// TLS with a custom CA, and mirrors.
import t from 'tap';
import {
  RegistryClient,
  credentialsFromDockerConfigs,
  isOciError,
  type CredentialLookup,
} from '../../shared/oci/index.js';
import { catalogObjectsOfImage } from '../../functions/catalog/image-source.js';
import { bundleOfImage } from '../../shared/bundle-image/index.js';
import { pushCatalogImage, pushImage, pushIndex } from '../harness/images.js';
import { registryFor, type TestRegistry } from '../harness/registry.js';
import { smallCatalog } from '../harness/repo.js';

function dockerConfigFor(
  registry: TestRegistry,
  password = registry.password ?? '',
): CredentialLookup {
  const auth = Buffer.from(`${registry.username ?? ''}:${password}`).toString('base64');
  return credentialsFromDockerConfigs([
    { source: 'secret olm/pull', json: JSON.stringify({ auths: { [registry.host]: { auth } } }) },
  ]);
}

t.test(
  'oci client - pulls an OCI image by tag and by digest, whiteouts applied across layers',
  async (t) => {
    const registry = await registryFor(t);
    const lower = new Map<string, string>([
      ['configs/a/catalog.json', '{"schema":"olm.package","name":"a"}'],
      ['configs/b/catalog.json', 'b'],
      ['old/one.txt', '1'],
      ['old/two.txt', '2'],
      ['keep.txt', 'kept'],
    ]);
    const upper = new Map<string, string>([
      ['configs/.wh.b', ''],
      ['old/.wh..wh..opq', ''],
      ['old/three.txt', '3'],
      ['keep.txt', 'replaced'],
    ]);
    const pushed = await pushImage(registry, 'olmq-test/app', 'v1', {
      layers: [lower, upper],
      labels: { 'operators.operatorframework.io.index.configs.v1': '/configs' },
    });
    const client = new RegistryClient();
    const image = await client.pullImage(`${registry.host}/olmq-test/app:v1`);
    t.equal(image.digest, pushed.digest);
    t.equal(image.labels['operators.operatorframework.io.index.configs.v1'], '/configs');
    t.same([...image.files.keys()].sort(), ['configs/a/catalog.json', 'keep.txt', 'old/three.txt']);
    t.equal(image.files.get('keep.txt')?.toString(), 'replaced');
    t.equal(await client.resolveDigest(`${registry.host}/olmq-test/app:v1`), pushed.digest);
    const byDigest = await client.pullImage(`${registry.host}/olmq-test/app@${pushed.digest}`);
    t.equal(
      byDigest.files.get('configs/a/catalog.json')?.toString(),
      '{"schema":"olm.package","name":"a"}',
    );
    // Regression: a budget beyond Node's largest Buffer (4 GiB) made gunzip throw.
    const huge = await client.pullImage(`${registry.host}/olmq-test/app:v1`, {
      limits: { unpackedBytes: 8 * 1024 ** 3 },
    });
    t.equal(
      huge.files.get('keep.txt')?.toString(),
      'replaced',
      'an unpacked limit over 4 GiB works',
    );
  },
);

t.test('oci client - zstd layers: a catalog image and its bundle images', async (t) => {
  const registry = await registryFor(t);
  const pushed = await pushCatalogImage(registry, smallCatalog, {
    packages: ['etcd'],
    compression: 'zstd',
  });
  const client = new RegistryClient();
  const catalog = await client.pullImage(pushed.image);
  const objects = catalogObjectsOfImage(catalog);
  t.same(
    objects.filter((o) => o.schema === 'olm.package').map((o) => o.value['name']),
    ['etcd'],
    'the FBC of the zstd catalog image is read',
  );
  const head = 'etcdoperator.v0.9.4';
  const image = pushed.bundleImages.get(head) ?? '';
  const bundle = bundleOfImage(await client.pullImage(image));
  t.equal(
    (
      bundle.objects.find((o) => o['kind'] === 'ClusterServiceVersion')?.['metadata'] as {
        name?: string;
      }
    )?.name,
    head,
    'the zstd bundle image holds its CSV',
  );
  t.equal(bundle.annotations['operators.operatorframework.io.bundle.package.v1'], 'etcd');
  const docker = await pushImage(registry, 'olmq-test/zstd-docker', 'v1', {
    layers: [new Map([['a', 'docker zstd']])],
    format: 'docker',
    compression: 'zstd',
  });
  const pulled = await client.pullImage(`${registry.host}/olmq-test/zstd-docker@${docker.digest}`);
  t.equal(pulled.files.get('a')?.toString(), 'docker zstd', 'a Docker manifest with a zstd layer');
});

t.test('oci client - picks linux/amd64 from a Docker manifest list and an OCI index', async (t) => {
  const registry = await registryFor(t);
  const amd = await pushImage(registry, 'olmq-test/multi', 'amd64', {
    layers: [new Map([['arch', 'amd64']])],
    format: 'docker',
  });
  const arm = await pushImage(registry, 'olmq-test/multi', 'arm64', {
    layers: [new Map([['arch', 'arm64']])],
    format: 'docker',
  });
  const entries = [
    { ...arm, platform: { os: 'linux', architecture: 'arm64' } },
    { ...amd, platform: { os: 'linux', architecture: 'amd64' } },
  ];
  const list = await pushIndex(registry, 'olmq-test/multi', 'list', entries, 'docker');
  const client = new RegistryClient();
  const image = await client.pullImage(`${registry.host}/olmq-test/multi:list`);
  t.equal(image.files.get('arch')?.toString(), 'amd64');
  t.equal(image.digest, amd.digest);
  t.equal(image.resolvedDigest, list.digest);
  t.equal(await client.resolveDigest(`${registry.host}/olmq-test/multi:list`), list.digest);

  const ociAmd = await pushImage(registry, 'olmq-test/multi', 'oci-amd64', {
    layers: [new Map([['arch', 'oci']])],
  });
  await pushIndex(registry, 'olmq-test/multi', 'index', [
    { ...ociAmd, platform: { os: 'linux', architecture: 'amd64' } },
  ]);
  t.equal(
    (await client.pullImage(`${registry.host}/olmq-test/multi:index`)).files
      .get('arch')
      ?.toString(),
    'oci',
  );

  const armOnly = new RegistryClient({ platform: { os: 'linux', architecture: 's390x' } });
  await t.rejects(armOnly.pullImage(`${registry.host}/olmq-test/multi:list`), {
    code: 'NoMatchingPlatform',
    message: /no manifest for linux\/s390x \(it offers linux\/arm64, linux\/amd64\)/,
  });
});

t.test(
  'oci client - htpasswd registry: 401 without or with wrong credentials, pulls with a dockerconfigjson',
  async (t) => {
    const registry = await registryFor(t, { htpasswd: true });
    await pushImage(registry, 'olmq-test/private', 'v1', { layers: [new Map([['a', 'private']])] });
    const client = new RegistryClient();
    const ref = `${registry.host}/olmq-test/private:v1`;
    await t.rejects(client.pullImage(ref), {
      code: 'Unauthorized',
      message: /requires credentials \(401\) and none were given/,
    });
    await t.rejects(client.pullImage(ref, { credentials: dockerConfigFor(registry, 'wrong') }), {
      code: 'Unauthorized',
      message: /refused the credentials/,
    });
    const image = await client.pullImage(ref, { credentials: dockerConfigFor(registry) });
    t.equal(image.files.get('a')?.toString(), 'private');
  },
);

t.test(
  'oci client - TLS registry: refused without its CA, pulls with it (and with htpasswd)',
  async (t) => {
    const registry = await registryFor(t, { tls: true, htpasswd: true });
    await pushImage(registry, 'olmq-test/secure', 'v1', { layers: [new Map([['a', 'tls']])] });
    const ref = `${registry.host}/olmq-test/secure:v1`;
    const refused = await new RegistryClient()
      .pullImage(ref, { credentials: dockerConfigFor(registry) })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    t.ok(isOciError(refused, 'Unreachable'), 'an untrusted certificate is a connection failure');
    t.match((refused as Error).message, /certificate/i);
    const client = new RegistryClient({ caCertificates: [registry.caPem ?? ''] });
    const image = await client.pullImage(ref, { credentials: dockerConfigFor(registry) });
    t.equal(image.files.get('a')?.toString(), 'tls');
  },
);

t.test(
  'oci client - mirrors: a tag pull goes to the mirror with !tags, digest-only rules skip tags',
  async (t) => {
    const registry = await registryFor(t);
    const pushed = await pushImage(registry, 'mirror/olmq-test/app', 'v1', {
      layers: [new Map([['a', 'mirrored']])],
    });
    // The source is a loopback port nobody listens on: only the mirror can answer.
    const source = '127.0.0.1:9/olmq-test';
    const withTags = new RegistryClient({
      mirrors: [{ source, mirrors: [`${registry.host}/mirror/olmq-test`], digestOnly: false }],
    });
    const image = await withTags.pullImage(`${source}/app:v1`);
    t.equal(image.pulledFrom, registry.host);
    t.equal(image.files.get('a')?.toString(), 'mirrored');
    const digestOnly = new RegistryClient({
      mirrors: [{ source, mirrors: [`${registry.host}/mirror/olmq-test`], digestOnly: true }],
    });
    t.equal(
      (await digestOnly.pullImage(`${source}/app@${pushed.digest}`)).pulledFrom,
      registry.host,
    );
    await t.rejects(digestOnly.pullImage(`${source}/app:v1`), { code: 'Unreachable' });
  },
);

t.test(
  'oci client - token auth: Bearer tokens for Basic credentials or an identity token; 401 and 403 from the token endpoint',
  async (t) => {
    const registry = await registryFor(t, { token: true });
    const token = registry.token;
    if (token === undefined) throw new Error('the token variant has a token server');
    await pushImage(registry, 'olmq-test/tokened', 'v1', { layers: [new Map([['a', 'bearer']])] });
    const ref = `${registry.host}/olmq-test/tokened:v1`;
    const client = new RegistryClient();
    const lookup = (entry: Record<string, string>) =>
      credentialsFromDockerConfigs([
        { source: 'test', json: JSON.stringify({ auths: { [registry.host]: entry } }) },
      ]);
    await t.rejects(client.pullImage(ref), {
      code: 'Unauthorized',
      message: /the token endpoint of .* refused the credentials \(401\)/,
    });
    await t.rejects(
      client.pullImage(ref, { credentials: lookup({ username: 'denied', password: 'x' }) }),
      {
        code: 'Denied',
        message: /the token endpoint of .* denied access \(403\)/,
      },
    );
    const basic = await client.pullImage(ref, {
      credentials: lookup({ username: token.username, password: token.password }),
    });
    t.equal(basic.files.get('a')?.toString(), 'bearer');
    const identity = await new RegistryClient().pullImage(ref, {
      credentials: lookup({ identitytoken: token.identityToken }),
    });
    t.equal(identity.files.get('a')?.toString(), 'bearer');
    t.ok(
      await client.resolveDigest(ref, {
        credentials: lookup({ username: token.username, password: token.password }),
      }),
    );
  },
);
