// zstd layers (OCI's tar+zstd): Node 20's zlib has no zstd, so fzstd (pure JS) decodes them.
// Before decoding, the frames are walked (headers and block sizes only) so that a frame asking
// for a huge window or declaring content beyond the budget is refused before fzstd allocates
// anything; while decoding, output is counted block by block (at most 128 KiB each) and decoding
// stops the moment the total passes the budget.
import { constants } from 'node:buffer';
import { Decompress } from 'fzstd';
import { OciError } from './errors.js';

/** The zstd frame magic number (little-endian). */
export const zstdMagic = 0xfd2fb528;

/**
 * Largest window a frame may ask for: the reference decoder's default limit (windowLog 27,
 * `zstd --memory=128MB`); fzstd allocates the whole window up front.
 */
export const zstdMaxWindowBytes = 128 * 1024 * 1024;

/** The format's Block_Maximum_Size: no block decodes to more. */
const maxBlockBytes = 128 * 1024;
/** Input handed to the decoder per turn, so a large layer does not hold the event loop. */
const sliceBytes = 1024 * 1024;

/**
 * Decompresses a zstd layer (one or more frames, skippable frames allowed), producing at most
 * `budget` bytes; more is a `DecompressionBomb`, a malformed stream `BadResponse`.
 */
export async function unzstd(blob: Buffer, budget: number, what: string): Promise<Buffer> {
  checkFrames(blob, budget, what);
  // One Buffer holds the layer: never more than Node's largest.
  const cap = Math.min(budget, constants.MAX_LENGTH);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const decoder = new Decompress((chunk) => {
    total += chunk.length;
    if (total > cap) throw decompressionBomb(what, blob.length, budget);
    chunks.push(chunk);
  });
  try {
    for (let offset = 0; offset < blob.length; offset += sliceBytes) {
      const end = Math.min(blob.length, offset + sliceBytes);
      decoder.push(blob.subarray(offset, end), end === blob.length);
      if (end < blob.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } catch (error) {
    if (error instanceof OciError) throw error;
    throw corrupt(what, (error as Error).message, error);
  }
  return Buffer.concat(chunks, total);
}

/** The DecompressionBomb error of a layer that expands past the budget (any codec). */
export function decompressionBomb(what: string, compressed: number, budget: number): OciError {
  return new OciError(
    'DecompressionBomb',
    `${what} (${compressed} bytes compressed) expands beyond the decompressed-content limit of ${budget} bytes; refusing a possible decompression bomb`,
  );
}

function corrupt(what: string, why: string, cause?: unknown): OciError {
  return new OciError(
    'BadResponse',
    `${what}: zstd data is corrupt: ${why}`,
    cause === undefined ? {} : { cause },
  );
}

/**
 * Walks every frame's header and block headers (RFC 8878 §3.1) without decoding: refuses
 * windows over zstdMaxWindowBytes, declared content sizes over `budget`, blocks over 128 KiB,
 * reserved bits and truncation.
 */
function checkFrames(blob: Buffer, budget: number, what: string): void {
  let at = 0;
  if (blob.length === 0) throw corrupt(what, 'empty layer');
  while (at < blob.length) {
    if (at + 4 > blob.length) throw corrupt(what, `truncated frame at byte ${at}`);
    const magic = blob.readUInt32LE(at);
    if ((magic & 0xfffffff0) >>> 0 === 0x184d2a50) {
      // A skippable frame: 4-byte magic, 4-byte length, that many bytes of user data.
      if (at + 8 > blob.length) throw corrupt(what, `truncated skippable frame at byte ${at}`);
      at += 8 + blob.readUInt32LE(at + 4);
      if (at > blob.length) throw corrupt(what, 'skippable frame runs past the end');
      continue;
    }
    if (magic !== zstdMagic) throw corrupt(what, `no zstd frame at byte ${at}`);
    at = checkFrame(blob, at + 4, budget, what);
  }
}

/** Checks one frame whose header starts at `at`; returns where the next frame starts. */
function checkFrame(blob: Buffer, at: number, budget: number, what: string): number {
  const byte = (i: number): number => {
    const value = blob[i];
    if (value === undefined) throw corrupt(what, 'frame runs past the end');
    return value;
  };
  const descriptor = byte(at++);
  const contentSizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const hasChecksum = (descriptor >> 2) & 1;
  if ((descriptor & 0x08) !== 0) throw corrupt(what, 'reserved frame header bit set');
  let window = 0;
  if (singleSegment === 0) {
    const windowDescriptor = byte(at++);
    const base = 2 ** (10 + (windowDescriptor >> 3));
    window = base + (base / 8) * (windowDescriptor & 7);
  }
  at += [0, 1, 2, 4][descriptor & 3] ?? 0;
  const sizeBytes = [singleSegment, 2, 4, 8][contentSizeFlag] ?? 0;
  if (sizeBytes > 0) {
    byte(at + sizeBytes - 1);
    let contentSize = 0;
    for (let i = sizeBytes - 1; i >= 0; i--) contentSize = contentSize * 256 + byte(at + i);
    if (sizeBytes === 2) contentSize += 256;
    if (singleSegment === 1) window = contentSize;
    if (contentSize > budget)
      throw new OciError(
        'DecompressionBomb',
        `${what} declares ${contentSize} bytes of content, beyond the decompressed-content limit of ${budget} bytes; refusing a possible decompression bomb`,
      );
    at += sizeBytes;
  }
  if (window > zstdMaxWindowBytes)
    throw new OciError(
      'OverLimit',
      `${what}: zstd frame needs a ${window}-byte window, over the ${zstdMaxWindowBytes}-byte limit (zstd's default decoder limit)`,
    );
  for (;;) {
    const header = byte(at) | (byte(at + 1) << 8) | (byte(at + 2) << 16);
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    if (type === 3) throw corrupt(what, `reserved block type at byte ${at}`);
    if (size > maxBlockBytes) throw corrupt(what, `block of ${size} bytes at byte ${at}`);
    at += 3 + (type === 1 ? 1 : size);
    if (at > blob.length) throw corrupt(what, 'block runs past the end');
    if ((header & 1) === 1) break;
  }
  at += hasChecksum * 4;
  if (at > blob.length) throw corrupt(what, 'checksum runs past the end');
  return at;
}
