// A tiny zstd encoder for test data: frames of raw (stored) blocks or RLE blocks, which the
// format allows and every decoder accepts (RFC 8878 §3.1.1.2), so tests need no zstd binary.
// RLE blocks make small bombs: 4 bytes of input per 128 KiB of output.

const magic = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
const maxBlock = 128 * 1024;
// Window descriptor: windowLog 17 (128 KiB), enough for blocks of the maximum size.
const windowDescriptor = (17 - 10) << 3;

function blockHeader(last: boolean, type: 0 | 1, size: number): Buffer {
  const value = (last ? 1 : 0) | (type << 1) | (size << 3);
  return Buffer.from([value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff]);
}

function frameHeader(contentSize: number | undefined): Buffer {
  if (contentSize === undefined) return Buffer.from([0x00, windowDescriptor]);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(contentSize));
  // Frame_Content_Size_flag 3: an 8-byte content size follows the window descriptor.
  return Buffer.concat([Buffer.from([0xc0, windowDescriptor]), size]);
}

/** One zstd frame holding `data` in raw blocks; `declareSize` writes the content size too. */
export function zstdFrame(data: Buffer, options: { declareSize?: number | boolean } = {}): Buffer {
  const declared =
    options.declareSize === true
      ? data.length
      : typeof options.declareSize === 'number'
        ? options.declareSize
        : undefined;
  const parts = [magic, frameHeader(declared)];
  let offset = 0;
  do {
    const end = Math.min(data.length, offset + maxBlock);
    parts.push(blockHeader(end === data.length, 0, end - offset), data.subarray(offset, end));
    offset = end;
  } while (offset < data.length);
  return Buffer.concat(parts);
}

/** One zstd frame of `length` copies of `byte` in RLE blocks (no content size: a bomb hides it). */
export function zstdRleFrame(byte: number, length: number): Buffer {
  const parts = [magic, frameHeader(undefined)];
  let left = length;
  do {
    const size = Math.min(left, maxBlock);
    left -= size;
    parts.push(blockHeader(left === 0, 1, size), Buffer.from([byte]));
  } while (left > 0);
  return Buffer.concat(parts);
}
