// zstd layers: frames of raw and RLE blocks from the test encoder, real zstd output (when the
// zstd binary is installed), several frames and skippable frames, and the size checks that
// stop a bomb before or while decoding.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { decompressLayer } from '../../shared/oci/layers.js';
import { MediaType, writeTar } from '../../shared/oci/index.js';
import { zstdMaxWindowBytes } from '../../shared/oci/zstd.js';
import { zstdFrame, zstdRleFrame } from '../harness/zstd.js';

const what = 'layer 1/1 (sha256:x) of test';
const unpack = (blob: Buffer, budget = 64 * 1024 * 1024) =>
  decompressLayer(blob, MediaType.ociLayerZstd, budget, what);

t.test('oci zstd - a raw-block frame gives back its bytes, across several blocks', async (t) => {
  const data = randomBytes(300 * 1024);
  t.same(await unpack(zstdFrame(data)), data);
  t.same(await unpack(zstdFrame(data, { declareSize: true })), data, 'with a content size');
  t.same(await unpack(zstdFrame(Buffer.alloc(0))), Buffer.alloc(0), 'an empty frame');
});

t.test('oci zstd - several frames and a skippable frame make one stream', async (t) => {
  const skippable = Buffer.alloc(8 + 5);
  skippable.writeUInt32LE(0x184d2a53, 0);
  skippable.writeUInt32LE(5, 4);
  const blob = Buffer.concat([
    zstdFrame(Buffer.from('first ')),
    skippable,
    zstdRleFrame(0x61, 3),
    zstdFrame(Buffer.from(' last')),
  ]);
  t.equal((await unpack(blob)).toString(), 'first aaa last');
});

t.test('oci zstd - a tar in a zstd layer of the Docker media type', async (t) => {
  const tar = writeTar(new Map([['manifests/csv.yaml', 'kind: ClusterServiceVersion\n']]));
  const out = await decompressLayer(
    zstdFrame(tar),
    'application/vnd.docker.image.rootfs.diff.tar.zstd',
    1024 * 1024,
    what,
  );
  t.same(out, tar);
});

const zstdBinary = spawnSync('zstd', ['--version']).status === 0;
t.test(
  'oci zstd - real zstd output (compressed blocks, checksum) decodes',
  { skip: zstdBinary ? false : 'the zstd binary is not installed: real-encoder check skipped' },
  async (t) => {
    // Compressible text so the encoder uses compressed (Huffman/FSE) blocks, not raw ones.
    const text = Buffer.from(
      Array.from({ length: 20_000 }, (_, i) => `line ${i % 97} of a catalog\n`).join(''),
    );
    for (const level of ['-1', '-19']) {
      const compressed = spawnSync('zstd', [level, '-c', '-q'], { input: text }).stdout;
      t.ok(compressed.length < text.length / 5, `level ${level} compressed`);
      t.same(await unpack(compressed), text, `level ${level}`);
    }
  },
);

t.test('oci zstd - an RLE bomb stops at the budget', async (t) => {
  const bomb = zstdRleFrame(0, 1024 * 1024 * 1024);
  t.ok(bomb.length < 64 * 1024, `the 1 GiB bomb is ${bomb.length} bytes`);
  const before = process.memoryUsage().arrayBuffers;
  await t.rejects(unpack(bomb, 4 * 1024 * 1024), {
    code: 'DecompressionBomb',
    message: /expands beyond the decompressed-content limit of 4194304 bytes/,
  });
  // Decoding stopped near the budget: nowhere near the gigabyte was ever held.
  t.ok(process.memoryUsage().arrayBuffers - before < 256 * 1024 * 1024);
});

t.test(
  'oci zstd - a declared content size over the budget is refused before decoding',
  async (t) => {
    const liar = zstdFrame(Buffer.from('small'), { declareSize: 10 * 1024 * 1024 });
    await t.rejects(unpack(liar, 1024 * 1024), {
      code: 'DecompressionBomb',
      message:
        /declares 10485760 bytes of content, beyond the decompressed-content limit of 1048576 bytes/,
    });
  },
);

t.test('oci zstd - a window over the decoder limit is refused', async (t) => {
  // Window descriptor exponent 21: a 2 GiB window (windowLog 31).
  const frame = Buffer.concat([
    Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3]),
    Buffer.from([0x01, 0x00, 0x00]),
  ]);
  await t.rejects(unpack(frame), {
    code: 'OverLimit',
    message: new RegExp(
      `needs a 2147483648-byte window, over the ${zstdMaxWindowBytes}-byte limit`,
    ),
  });
});

t.test('oci zstd - corrupt streams are BadResponse with the reason', async (t) => {
  const good = zstdFrame(Buffer.from('hello world'));
  await t.rejects(unpack(good.subarray(0, good.length - 3)), {
    code: 'BadResponse',
    message: /zstd data is corrupt: block runs past the end/,
  });
  await t.rejects(unpack(Buffer.concat([good, Buffer.from('trailing junk')])), {
    code: 'BadResponse',
    message: /zstd data is corrupt: no zstd frame at byte \d+/,
  });
  const reservedBlock = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38, 0x07, 0x00, 0x00]);
  await t.rejects(unpack(reservedBlock), {
    code: 'BadResponse',
    message: /reserved block type/,
  });
});
