// Builds real images and pushes them through a registry's API (blob uploads, then the
// manifest): plain images from maps of files, raw blobs and manifests for bad-input tests, a
// catalog image whose File-Based Catalog uses olm.csv.metadata (as `opm render` writes it) and
// one bundle image per bundle.
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import { MediaType, writeTar } from '../../shared/oci/index.js';
import type { TestRegistry } from './registry.js';
import { zstdFrame } from './zstd.js';

/** The catalog label naming where the FBC lives in a catalog image. */
export const configsLabel = 'operators.operatorframework.io.index.configs.v1';

/** One layer: files (tarred and compressed here) or raw bytes with a media type. */
export type LayerSpec = ReadonlyMap<string, Buffer | string> | { bytes: Buffer; mediaType: string };

/** What pushImage builds. */
export interface ImageSpec {
  layers: LayerSpec[];
  labels?: Record<string, string>;
  /** Manifest format (default oci). */
  format?: 'oci' | 'docker';
  /** Config media type override (for wrong-media-type tests). */
  configMediaType?: string;
  /** How layers of files are compressed (default gzip; zstd in raw blocks, see zstd.ts). */
  compression?: 'gzip' | 'zstd';
}

/** A pushed manifest. */
export interface Pushed {
  digest: string;
  size: number;
  /** Layer digests, in order. */
  layers: string[];
}

/** Sends one request to the registry, with its credentials and CA. */
export async function registryRequest(
  registry: TestRegistry,
  method: string,
  path: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const url = new URL(path, registry.url);
  const all: Record<string, string> = { ...headers };
  const repository = /^\/v2\/(.+?)\/(blobs|manifests)\//.exec(url.pathname)?.[1];
  if (registry.token !== undefined && repository !== undefined)
    all.authorization = `Bearer ${registry.token.tokenFor(`repository:${repository}:pull,push`)}`;
  else if (registry.username !== undefined && registry.password !== undefined)
    all.authorization = `Basic ${Buffer.from(`${registry.username}:${registry.password}`).toString('base64')}`;
  if (body !== undefined) all['content-length'] = String(body.length);
  const options: https.RequestOptions = { method, headers: all };
  if (registry.caPem !== undefined) options.ca = registry.caPem;
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** sha256 digest of bytes. */
export function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Uploads a blob (monolithic upload); returns its digest. */
export async function pushBlob(
  registry: TestRegistry,
  repository: string,
  bytes: Buffer,
): Promise<string> {
  const digest = sha256(bytes);
  const start = await registryRequest(registry, 'POST', `/v2/${repository}/blobs/uploads/`);
  if (start.status !== 202)
    throw new Error(`blob upload start: HTTP ${start.status} ${start.body.toString()}`);
  const location = new URL(String(start.headers.location), registry.url);
  location.searchParams.set('digest', digest);
  const put = await registryRequest(registry, 'PUT', location.pathname + location.search, bytes, {
    'content-type': 'application/octet-stream',
  });
  if (put.status !== 201) throw new Error(`blob upload: HTTP ${put.status} ${put.body.toString()}`);
  return digest;
}

/** Puts a manifest under a tag (or its digest); returns its digest. */
export async function pushManifest(
  registry: TestRegistry,
  repository: string,
  reference: string,
  manifest: unknown,
  mediaType: string,
): Promise<{ digest: string; size: number }> {
  const bytes = Buffer.from(JSON.stringify(manifest));
  const put = await registryRequest(
    registry,
    'PUT',
    `/v2/${repository}/manifests/${reference}`,
    bytes,
    {
      'content-type': mediaType,
    },
  );
  if (put.status !== 201)
    throw new Error(`manifest put: HTTP ${put.status} ${put.body.toString()}`);
  return { digest: sha256(bytes), size: bytes.length };
}

/** A gzipped tar of files. */
export function gzipLayer(files: ReadonlyMap<string, Buffer | string>): Buffer {
  return gzipSync(writeTar(files));
}

/** Builds and pushes an image; returns the manifest's digest. */
export async function pushImage(
  registry: TestRegistry,
  repository: string,
  tag: string,
  spec: ImageSpec,
): Promise<Pushed> {
  const docker = spec.format === 'docker';
  const layers = [];
  for (const layer of spec.layers) {
    const isRaw = 'bytes' in layer && 'mediaType' in layer && !(layer instanceof Map);
    const zstd = spec.compression === 'zstd';
    const bytes = isRaw
      ? (layer as { bytes: Buffer }).bytes
      : zstd
        ? zstdFrame(writeTar(layer as ReadonlyMap<string, Buffer | string>))
        : gzipLayer(layer as ReadonlyMap<string, Buffer | string>);
    const mediaType = isRaw
      ? (layer as { mediaType: string }).mediaType
      : zstd
        ? docker
          ? 'application/vnd.docker.image.rootfs.diff.tar.zstd'
          : MediaType.ociLayerZstd
        : docker
          ? MediaType.dockerLayerGzip
          : MediaType.ociLayerGzip;
    layers.push({
      mediaType,
      digest: await pushBlob(registry, repository, bytes),
      size: bytes.length,
    });
  }
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Labels: spec.labels ?? {} },
      rootfs: { type: 'layers', diff_ids: [] },
    }),
  );
  const configDescriptor = {
    mediaType: spec.configMediaType ?? (docker ? MediaType.dockerConfig : MediaType.ociConfig),
    digest: await pushBlob(registry, repository, config),
    size: config.length,
  };
  const mediaType = docker ? MediaType.dockerManifest : MediaType.ociManifest;
  const manifest = { schemaVersion: 2, mediaType, config: configDescriptor, layers };
  const pushed = await pushManifest(registry, repository, tag, manifest, mediaType);
  return { ...pushed, layers: layers.map((l) => l.digest) };
}

/** Pushes an index (OCI) or manifest list (docker) of already pushed manifests. */
export async function pushIndex(
  registry: TestRegistry,
  repository: string,
  tag: string,
  entries: { digest: string; size: number; platform: { os: string; architecture: string } }[],
  format: 'oci' | 'docker' = 'oci',
): Promise<{ digest: string; size: number }> {
  const mediaType = format === 'docker' ? MediaType.dockerManifestList : MediaType.ociIndex;
  const childType = format === 'docker' ? MediaType.dockerManifest : MediaType.ociManifest;
  const manifests = entries.map((e) => ({
    mediaType: childType,
    digest: e.digest,
    size: e.size,
    platform: e.platform,
  }));
  return pushManifest(
    registry,
    repository,
    tag,
    { schemaVersion: 2, mediaType, manifests },
    mediaType,
  );
}

type FbcObject = Record<string, unknown> & { schema?: string; name?: string; package?: string };
interface BundleProperty {
  type: string;
  value: unknown;
}

/** Fields of a CSV that opm copies into olm.csv.metadata. */
const csvMetadataFields = [
  'apiservicedefinitions',
  'customresourcedefinitions',
  'description',
  'displayName',
  'installModes',
  'keywords',
  'links',
  'maintainers',
  'maturity',
  'minKubeVersion',
  'nativeAPIs',
  'provider',
] as const;

/** A catalog pushed as images: the catalog image and one bundle image per bundle. */
export interface PushedCatalog {
  /** The catalog image reference (host/repository:tag). */
  image: string;
  digest: string;
  /** Bundle name → its bundle image reference (by digest). */
  bundleImages: Map<string, string>;
  /** The FBC objects written into the catalog image. */
  objects: FbcObject[];
}

/**
 * Pushes `fbcDir` (a directory of package folders, e.g. test/fixtures/catalogs/small) as a
 * catalog image `<repository>:<tag>` whose bundles carry olm.csv.metadata and an `image`
 * pointing at a bundle image pushed to `<repository>-bundles/<package>`.
 */
export async function pushCatalogImage(
  registry: TestRegistry,
  fbcDir: string,
  options: {
    repository?: string;
    tag?: string;
    packages?: string[];
    configsDir?: string;
    labels?: Record<string, string>;
    /** Layer compression of the catalog image and every bundle image (default gzip). */
    compression?: 'gzip' | 'zstd';
  } = {},
): Promise<PushedCatalog> {
  const repository = options.repository ?? 'olmq-test/catalog';
  const tag = options.tag ?? 'latest';
  const configsDir = options.configsDir ?? 'configs';
  const packages =
    options.packages ??
    (await readdir(fbcDir, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  const files = new Map<string, string>();
  const bundleImages = new Map<string, string>();
  const allObjects: FbcObject[] = [];
  for (const pkg of packages) {
    const text = await readFile(join(fbcDir, pkg, 'catalog.json'), 'utf8');
    const objects = text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as FbcObject);
    const defaultChannel =
      (objects.find((o) => o.schema === 'olm.package')?.defaultChannel as string | undefined) ?? '';
    const channelsOf = new Map<string, string[]>();
    for (const o of objects.filter((o) => o.schema === 'olm.channel')) {
      for (const entry of (o.entries as { name: string }[] | undefined) ?? []) {
        channelsOf.set(entry.name, [...(channelsOf.get(entry.name) ?? []), String(o.name)]);
      }
    }
    const out: FbcObject[] = [];
    for (const object of objects) {
      if (object.schema !== 'olm.bundle') {
        out.push(object);
        continue;
      }
      const properties = (object.properties as BundleProperty[] | undefined) ?? [];
      const manifests = properties
        .filter((p) => p.type === 'olm.bundle.object')
        .map(
          (p) =>
            JSON.parse(
              Buffer.from(String((p.value as { data: string }).data), 'base64').toString('utf8'),
            ) as Record<string, unknown>,
        );
      if (manifests.length === 0) {
        out.push(object);
        continue;
      }
      const name = String(object.name);
      const labels: Record<string, string> = {
        'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
        'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
        'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
        'operators.operatorframework.io.bundle.package.v1': pkg,
        'operators.operatorframework.io.bundle.channels.v1': (channelsOf.get(name) ?? []).join(','),
        'operators.operatorframework.io.bundle.channel.default.v1': defaultChannel,
      };
      const bundleFiles = new Map<string, string>();
      for (const manifest of manifests) {
        const meta = manifest.metadata as { name?: string } | undefined;
        bundleFiles.set(
          `manifests/${String(manifest.kind).toLowerCase()}-${meta?.name ?? 'unnamed'}.yaml`,
          // JSON is YAML too, and writing it is far quicker for the big CRDs of some bundles.
          `${JSON.stringify(manifest, null, 2)}\n`,
        );
      }
      bundleFiles.set('metadata/annotations.yaml', stringify({ annotations: labels }));
      const bundleRepository = `${repository}-bundles/${pkg}`;
      const pushed = await pushImage(registry, bundleRepository, name, {
        layers: [bundleFiles],
        labels,
        ...(options.compression === undefined ? {} : { compression: options.compression }),
      });
      const image = `${registry.host}/${bundleRepository}@${pushed.digest}`;
      bundleImages.set(name, image);
      const csv = manifests.find((m) => m.kind === 'ClusterServiceVersion');
      const kept = properties.filter((p) => p.type !== 'olm.bundle.object');
      if (csv !== undefined) kept.push({ type: 'olm.csv.metadata', value: csvMetadataOf(csv) });
      out.push({ ...object, image, properties: kept });
    }
    files.set(
      `${configsDir}/${pkg}/catalog.json`,
      `${out.map((o) => JSON.stringify(o)).join('\n')}\n`,
    );
    allObjects.push(...out);
  }
  const labels = { [configsLabel]: `/${configsDir}`, ...options.labels };
  const pushed = await pushImage(registry, repository, tag, {
    layers: [files],
    labels,
    ...(options.compression === undefined ? {} : { compression: options.compression }),
  });
  return {
    image: `${registry.host}/${repository}:${tag}`,
    digest: pushed.digest,
    bundleImages,
    objects: allObjects,
  };
}

/** The olm.csv.metadata value of a CSV, as opm renders it. */
export function csvMetadataOf(csv: Record<string, unknown>): Record<string, unknown> {
  const spec = (csv.spec ?? {}) as Record<string, unknown>;
  const metadata = (csv.metadata ?? {}) as Record<string, unknown>;
  const value: Record<string, unknown> = {};
  if (metadata.annotations !== undefined) value.annotations = metadata.annotations;
  if (metadata.labels !== undefined) value.labels = metadata.labels;
  for (const field of csvMetadataFields) {
    if (spec[field] !== undefined)
      value[
        field === 'apiservicedefinitions'
          ? 'apiServiceDefinitions'
          : field === 'customresourcedefinitions'
            ? 'crdDescriptions'
            : field
      ] = spec[field];
  }
  return value;
}
