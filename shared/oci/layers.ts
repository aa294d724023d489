// Layers into files: decompression under a size budget (a layer that expands beyond it is
// refused as a decompression bomb), then the layers stacked in order with OCI whiteouts.
import { constants } from 'node:buffer';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { OciError } from './errors.js';
import { readTar } from './tar.js';
import { MediaType } from './types.js';
import { decompressionBomb as bomb, unzstd, zstdMagic } from './zstd.js';

const gunzipAsync = promisify(gunzip);

/** Layer media types the client unpacks, by compression. */
const layerCompression: Record<string, 'gzip' | 'zstd' | 'none'> = {
  [MediaType.ociLayer]: 'none',
  [MediaType.ociLayerGzip]: 'gzip',
  [MediaType.ociLayerZstd]: 'zstd',
  [MediaType.dockerLayerGzip]: 'gzip',
  // Not in Docker's spec, but containerd names zstd layers of Docker manifests so.
  'application/vnd.docker.image.rootfs.diff.tar.zstd': 'zstd',
  'application/vnd.oci.image.layer.nondistributable.v1.tar': 'none',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+gzip': 'gzip',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+zstd': 'zstd',
  'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip': 'gzip',
};

/** Whether a layer media type is one the client can unpack. */
export function isLayerMediaType(mediaType: string): boolean {
  return mediaType in layerCompression;
}

/**
 * Decompresses one layer blob into its tar bytes, producing at most `budget` bytes. The
 * content decides the codec (gzip and zstd have magic numbers), so a mislabelled layer still
 * reads; the media type only names the expected one.
 */
export async function decompressLayer(
  blob: Buffer,
  mediaType: string,
  budget: number,
  what: string,
): Promise<Buffer> {
  const declared = layerCompression[mediaType];
  if (declared === undefined)
    throw new OciError(
      'UnsupportedMediaType',
      `${what} has media type ${mediaType}, which is not an image layer`,
    );
  const codec =
    blob[0] === 0x1f && blob[1] === 0x8b
      ? 'gzip'
      : blob.length >= 4 && blob.readUInt32LE(0) === zstdMagic
        ? 'zstd'
        : 'none';
  if (codec === 'zstd') return unzstd(blob, budget, what);
  if (codec === 'none') {
    if (blob.length > budget) throw bomb(what, blob.length, budget);
    return blob;
  }
  try {
    return await gunzipAsync(blob, {
      maxOutputLength: Math.max(1, Math.min(budget, constants.MAX_LENGTH)),
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE')
      throw bomb(what, blob.length, budget);
    throw new OciError(
      'BadResponse',
      `${what}: gzip data is corrupt: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

const opaqueMarker = '.wh..wh..opq';
const whiteoutPrefix = '.wh.';

/**
 * Stacks one layer's tar onto `files`: its whiteouts remove lower layers' paths first (an
 * opaque marker empties its directory), then its regular files (and hard links to files) are
 * added. Symlinks and special files are not kept: callers read regular files by path.
 */
export function applyLayer(files: Map<string, Buffer>, tar: Buffer, what: string): void {
  const entries = readTar(tar, what);
  for (const entry of entries) {
    const slash = entry.path.lastIndexOf('/');
    const dir = slash < 0 ? '' : entry.path.slice(0, slash);
    const base = entry.path.slice(slash + 1);
    if (base === opaqueMarker) removeTree(files, dir, false);
    else if (base.startsWith(whiteoutPrefix))
      removeTree(
        files,
        dir === ''
          ? base.slice(whiteoutPrefix.length)
          : `${dir}/${base.slice(whiteoutPrefix.length)}`,
        true,
      );
  }
  for (const entry of entries) {
    const base = entry.path.slice(entry.path.lastIndexOf('/') + 1);
    if (base.startsWith(whiteoutPrefix)) continue;
    if (entry.kind === 'file') files.set(entry.path, entry.data);
    else if (entry.kind === 'hardlink') {
      const target = files.get(entry.linkTarget.replace(/^\.?\//, ''));
      if (target !== undefined) files.set(entry.path, target);
    } else if (entry.kind === 'directory') {
      // A directory replacing a file of a lower layer hides it.
      files.delete(entry.path);
    }
  }
}

function removeTree(files: Map<string, Buffer>, path: string, includeSelf: boolean): void {
  const prefix = path === '' ? '' : `${path}/`;
  for (const key of [...files.keys()]) {
    if ((includeSelf && key === path) || key.startsWith(prefix)) files.delete(key);
  }
}
