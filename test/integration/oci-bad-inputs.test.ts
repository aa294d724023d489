// Every bad input of the registry client against a real docker-registry, each with its typed
// error and a message that says what went wrong.
import { networkInterfaces } from 'node:os';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { MediaType, RegistryClient } from '../../shared/oci/index.js';
import { pushBlob, pushImage } from '../harness/images.js';
import { registryFor } from '../harness/registry.js';
import { zstdFrame, zstdRleFrame } from '../harness/zstd.js';

t.test('oci client - bad inputs', async (t) => {
  const registry = await registryFor(t);
  const client = new RegistryClient({ timeoutMs: 5_000 });
  await pushImage(registry, 'olmq-test/app', 'v1', {
    layers: [new Map([['a', 'x'.repeat(4096)]])],
  });
  const ref = `${registry.host}/olmq-test/app`;

  t.test('unreachable registry', async (t) => {
    await t.rejects(client.pullImage('127.0.0.1:9/olmq-test/app:v1'), {
      code: 'Unreachable',
      message: /cannot reach 127\.0\.0\.1:9: connect ECONNREFUSED/,
    });
  });

  t.test('unknown tag', async (t) => {
    await t.rejects(client.pullImage(`${ref}:nope`), {
      code: 'NotFound',
      message: /MANIFEST_UNKNOWN/,
    });
    await t.rejects(client.resolveDigest(`${ref}:nope`), { code: 'NotFound' });
  });

  t.test('unknown digest', async (t) => {
    await t.rejects(client.pullImage(`${ref}@sha256:${'0'.repeat(64)}`), { code: 'NotFound' });
  });

  t.test('unknown repository', async (t) => {
    await t.rejects(client.pullImage(`${registry.host}/olmq-test/none:v1`), {
      code: 'NotFound',
      message: /NAME_UNKNOWN|MANIFEST_UNKNOWN/,
    });
  });

  t.test('wrong media types: an artifact config, a non-layer blob', async (t) => {
    await pushImage(registry, 'olmq-test/chart', 'v1', {
      layers: [
        {
          bytes: gzipSync('chart'),
          mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip',
        },
      ],
      configMediaType: 'application/vnd.cncf.helm.config.v1+json',
    });
    await t.rejects(client.pullImage(`${registry.host}/olmq-test/chart:v1`), {
      code: 'UnsupportedMediaType',
      message: /application\/vnd\.cncf\.helm\.config\.v1\+json: not a container image/,
    });
    await pushImage(registry, 'olmq-test/chart', 'v2', {
      layers: [
        {
          bytes: gzipSync('chart'),
          mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip',
        },
      ],
    });
    await t.rejects(client.pullImage(`${registry.host}/olmq-test/chart:v2`), {
      code: 'UnsupportedMediaType',
      message: /layer 1\/1 .* is not an image layer/,
    });
  });

  t.test('zstd bomb: RLE blocks expanding past the limit, and corrupt zstd', async (t) => {
    const bomb = zstdRleFrame(0, 256 * 1024 * 1024);
    t.ok(bomb.length < 16 * 1024, 'the bomb is small compressed');
    await pushImage(registry, 'olmq-test/zstd', 'bomb', {
      layers: [{ bytes: bomb, mediaType: MediaType.ociLayerZstd }],
    });
    await t.rejects(
      client.pullImage(`${registry.host}/olmq-test/zstd:bomb`, {
        limits: { unpackedBytes: 8 * 1024 * 1024 },
      }),
      {
        code: 'DecompressionBomb',
        message: /layer 1\/1 .* expands beyond the decompressed-content limit of 8388608 bytes/,
      },
    );
    const truncated = zstdFrame(Buffer.from('x'.repeat(1000))).subarray(0, 500);
    await pushImage(registry, 'olmq-test/zstd', 'truncated', {
      layers: [{ bytes: truncated, mediaType: MediaType.ociLayerZstd }],
    });
    await t.rejects(client.pullImage(`${registry.host}/olmq-test/zstd:truncated`), {
      code: 'BadResponse',
      message: /layer 1\/1 .*: zstd data is corrupt: block runs past the end/,
    });
  });

  t.test('digest mismatch: a stored layer whose bytes changed', async (t) => {
    const victim = await pushImage(registry, 'olmq-test/corrupt', 'v1', {
      layers: [new Map([['a', 'original']])],
    });
    await registry.corruptBlob(victim.layers[0] ?? '', gzipSync('tampered'));
    await t.rejects(client.pullImage(`${registry.host}/olmq-test/corrupt:v1`), {
      code: 'DigestMismatch',
      message: new RegExp(
        `content has digest sha256:[0-9a-f]{64}, expected ${victim.layers[0] ?? ''}`,
      ),
    });
  });

  t.test('over the limits: manifest, layer', async (t) => {
    await t.rejects(client.pullImage(`${ref}:v1`, { limits: { manifestBytes: 100 } }), {
      code: 'OverLimit',
      message: /manifest .* larger than the limit of 100 bytes/,
    });
    await t.rejects(client.pullImage(`${ref}:v1`, { limits: { layerBytes: 10 } }), {
      code: 'OverLimit',
      message: /layer 1\/1 .* over the limit of 10 bytes/,
    });
  });

  t.test('decompression bomb: a small layer expanding past the limit', async (t) => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    t.ok(bomb.length < 128 * 1024, 'the bomb is small compressed');
    const digest = await pushBlob(registry, 'olmq-test/bomb', bomb);
    t.ok(digest);
    await pushImage(registry, 'olmq-test/bomb', 'v1', {
      layers: [{ bytes: bomb, mediaType: MediaType.ociLayerGzip }],
    });
    await t.rejects(
      client.pullImage(`${registry.host}/olmq-test/bomb:v1`, {
        limits: { unpackedBytes: 8 * 1024 * 1024 },
      }),
      {
        code: 'DecompressionBomb',
        message: /expands beyond the decompressed-content limit of 8388608 bytes/,
      },
    );
  });

  t.test('invalid references', async (t) => {
    await t.rejects(client.pullImage('UPPER/case:v1'), {
      code: 'InvalidReference',
      message: /bad repository component "UPPER"/,
    });
    await t.rejects(client.pullImage(`${ref}@sha256:short`), { code: 'InvalidReference' });
  });
});

// A plain-HTTP registry on this machine's non-loopback address, when it has one.
const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;

t.test(
  'oci client - plain HTTP is refused for a registry that is not on loopback',
  {
    skip:
      lanAddress === undefined
        ? 'this machine has no non-loopback IPv4 address to bind a plain-HTTP registry to'
        : false,
  },
  async (t) => {
    const registry = await registryFor(t, { bindHost: lanAddress ?? '' });
    await pushImage(registry, 'olmq-test/app', 'v1', { layers: [new Map([['a', 'x']])] });
    await t.rejects(new RegistryClient().pullImage(`${registry.host}/olmq-test/app:v1`), {
      code: 'InsecureRegistry',
      message: new RegExp(
        `registry ${registry.host.replace(/\./g, '\\.')} speaks plain HTTP; olmq uses plain HTTP only for loopback registries`,
      ),
    });
  },
);
