// The registry client: resolve a reference to a digest (a HEAD), pull an image into memory
// (manifest or index → the platform's manifest → config labels → layers → files), every blob
// checked against its digest and every size against the limits.
import { createHash } from 'node:crypto';
import { OciError, isOciError } from './errors.js';
import { applyLayer, decompressLayer, isLayerMediaType } from './layers.js';
import { candidatesFor } from './mirrors.js';
import { formatImageReference, parseImageReference, type ImageReference } from './reference.js';
import { RepositorySession, type SessionContext } from './session.js';
import {
  MediaType,
  defaultPullLimits,
  imageConfigSchema,
  imageIndexSchema,
  imageManifestSchema,
  type Descriptor,
  type ImageIndex,
  type ImageManifest,
  type MirrorRule,
  type Platform,
  type PulledImage,
  type PullLimits,
  type PullOptions,
  type RegistryClientOptions,
} from './types.js';

const manifestTypes = [
  MediaType.ociManifest,
  MediaType.ociIndex,
  MediaType.dockerManifest,
  MediaType.dockerManifestList,
] as const;
const acceptManifests = manifestTypes.join(', ');
const indexTypes = new Set<string>([MediaType.ociIndex, MediaType.dockerManifestList]);
const configTypes = new Set<string>([MediaType.ociConfig, MediaType.dockerConfig]);

/** A manifest or index as read, with the digest of its bytes. */
interface FetchedManifest {
  digest: string;
  mediaType: string;
  document: ImageManifest | ImageIndex;
}

/** A client of OCI/Docker registries; one per process is enough (it caches tokens). */
export class RegistryClient {
  private readonly context: SessionContext;
  private readonly mirrors: readonly MirrorRule[];
  private readonly platform: Platform;

  constructor(options: RegistryClientOptions = {}) {
    this.context = {
      ca: options.caCertificates,
      timeoutMs: options.timeoutMs ?? 30_000,
      userAgent: options.userAgent ?? 'olmq',
      schemes: new Map(),
      tokens: new Map(),
    };
    this.mirrors = options.mirrors ?? [];
    this.platform = options.platform ?? { os: 'linux', architecture: 'amd64' };
  }

  /**
   * The digest a reference names now: the digest itself, or the tag's manifest digest from a
   * HEAD (a GET when the registry sends no Docker-Content-Digest).
   */
  async resolveDigest(reference: string, options: PullOptions = {}): Promise<string> {
    const ref = parseImageReference(reference);
    if (ref.digest !== undefined) return ref.digest;
    const limits = limitsOf(options);
    return this.fromCandidates(ref, options, async (session) => {
      const what = `manifest ${formatImageReference(session.ref)}`;
      const head = await session.send({
        method: 'HEAD',
        path: `manifests/${ref.tag ?? 'latest'}`,
        accept: acceptManifests,
        maxBytes: limits.manifestBytes,
        what,
      });
      const digest = head.headers['docker-content-digest'];
      if (typeof digest === 'string' && digest !== '') return digest;
      return (await this.fetchManifest(session, limits)).digest;
    });
  }

  /** Pulls an image: its labels and every regular file of its layers, whiteouts applied. */
  async pullImage(reference: string, options: PullOptions = {}): Promise<PulledImage> {
    const ref = parseImageReference(reference);
    const limits = limitsOf(options);
    return this.fromCandidates(ref, options, async (session) => {
      const top = await this.fetchManifest(session, limits);
      let manifest = top;
      if (indexTypes.has(top.mediaType)) {
        const chosen = this.pickPlatform(
          top.document as ImageIndex,
          formatImageReference(session.ref),
        );
        manifest = await this.fetchManifest(session, limits, chosen.digest);
        if (indexTypes.has(manifest.mediaType))
          throw new OciError(
            'UnsupportedMediaType',
            `manifest ${chosen.digest} of ${reference} is an index inside an index`,
          );
      }
      const image = manifest.document as ImageManifest;
      const labels = await this.readLabels(session, image.config, limits, reference);
      const files = new Map<string, Buffer>();
      let unpacked = 0;
      for (const [i, layer] of image.layers.entries()) {
        const what = `layer ${i + 1}/${image.layers.length} (${layer.digest}) of ${reference}`;
        if (!isLayerMediaType(layer.mediaType))
          throw new OciError(
            'UnsupportedMediaType',
            `${what} has media type ${layer.mediaType}, which is not an image layer`,
          );
        const blob = await this.fetchBlob(session, layer, limits.layerBytes, what);
        const tar = await decompressLayer(
          blob,
          layer.mediaType,
          limits.unpackedBytes - unpacked,
          what,
        );
        unpacked += tar.length;
        applyLayer(files, tar, what);
      }
      return {
        reference,
        digest: manifest.digest,
        resolvedDigest: top.digest,
        labels,
        files,
        pulledFrom: session.ref.registry,
      };
    });
  }

  /** Runs `work` against each mirror candidate in turn; the reference's own registry is last. */
  private async fromCandidates<T>(
    ref: ImageReference,
    options: PullOptions,
    work: (session: RepositorySession) => Promise<T>,
  ): Promise<T> {
    const candidates = candidatesFor(ref, this.mirrors);
    let lastError: unknown;
    for (const [i, candidate] of candidates.entries()) {
      const session = new RepositorySession(
        this.context,
        candidate,
        options.credentials?.(candidate.registry),
      );
      try {
        return await work(session);
      } catch (error) {
        lastError = error;
        // A mirror that lacks the content or cannot be reached hands over to the next one;
        // content that is wrong (digest, limits, media type) is an answer, not an outage.
        const next =
          i < candidates.length - 1 &&
          isOciError(
            error,
            'Unreachable',
            'NotFound',
            'Unauthorized',
            'Denied',
            'InsecureRegistry',
            'BadResponse',
          );
        if (!next) throw error;
      }
    }
    throw lastError;
  }

  private async fetchManifest(
    session: RepositorySession,
    limits: PullLimits,
    digest?: string,
  ): Promise<FetchedManifest> {
    const ref = session.ref;
    const target = digest ?? ref.digest ?? ref.tag ?? 'latest';
    const what = `manifest ${ref.registry}/${ref.repository}${target.includes(':') ? '@' : ':'}${target}`;
    const answer = await session.send({
      method: 'GET',
      path: `manifests/${target}`,
      accept: acceptManifests,
      maxBytes: limits.manifestBytes,
      what,
    });
    const actual = digestOf(answer.body, target.includes(':') ? target : 'sha256:');
    const expected = target.includes(':')
      ? target
      : headerValue(answer.headers['docker-content-digest']);
    if (
      expected !== undefined &&
      expected.startsWith('sha256:') === actual.startsWith('sha256:') &&
      expected !== actual
    )
      throw new OciError(
        'DigestMismatch',
        `${what}: content has digest ${actual}, expected ${expected}`,
      );
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body.toString('utf8'));
    } catch {
      throw new OciError('BadResponse', `${what} is not JSON`);
    }
    const contentType =
      (headerValue(answer.headers['content-type']) ?? '').split(';')[0]?.trim() ?? '';
    const declared = (parsed as { mediaType?: unknown } | null)?.mediaType;
    const mediaType = (manifestTypes as readonly string[]).includes(contentType)
      ? contentType
      : typeof declared === 'string'
        ? declared
        : contentType;
    if (!(manifestTypes as readonly string[]).includes(mediaType))
      throw new OciError(
        'UnsupportedMediaType',
        `${what} has media type ${mediaType === '' ? '(none)' : mediaType}; olmq reads OCI images and indexes and Docker v2 schema 2 manifests and lists`,
      );
    const schema = indexTypes.has(mediaType) ? imageIndexSchema : imageManifestSchema;
    const document = schema.safeParse(parsed);
    if (!document.success)
      throw new OciError(
        'BadResponse',
        `${what} is not a valid ${mediaType}: ${document.error.issues[0]?.message ?? ''}`,
      );
    return { digest: digest ?? ref.digest ?? actual, mediaType, document: document.data };
  }

  private pickPlatform(index: ImageIndex, reference: string): Descriptor {
    const wanted = this.platform;
    const matches = index.manifests.filter(
      (m) =>
        m.platform !== undefined &&
        m.platform.os === wanted.os &&
        m.platform.architecture === wanted.architecture &&
        (wanted.variant === undefined || m.platform.variant === wanted.variant),
    );
    const chosen =
      matches[0] ??
      (index.manifests.length === 1 && index.manifests[0]?.platform === undefined
        ? index.manifests[0]
        : undefined);
    if (chosen !== undefined) return chosen;
    const offered = index.manifests.map((m) =>
      m.platform === undefined
        ? '(no platform)'
        : `${m.platform.os}/${m.platform.architecture}${m.platform.variant === undefined ? '' : `/${m.platform.variant}`}`,
    );
    throw new OciError(
      'NoMatchingPlatform',
      `${reference} has no manifest for ${wanted.os}/${wanted.architecture} (it offers ${offered.join(', ') || 'nothing'})`,
    );
  }

  private async readLabels(
    session: RepositorySession,
    config: Descriptor,
    limits: PullLimits,
    reference: string,
  ): Promise<Record<string, string>> {
    const what = `config ${config.digest} of ${reference}`;
    if (!configTypes.has(config.mediaType))
      throw new OciError(
        'UnsupportedMediaType',
        `${what} has media type ${config.mediaType}: not a container image (an OCI artifact?)`,
      );
    const blob = await this.fetchBlob(session, config, limits.configBytes, what);
    let parsed: unknown;
    try {
      parsed = JSON.parse(blob.toString('utf8'));
    } catch {
      throw new OciError('BadResponse', `${what} is not JSON`);
    }
    const image = imageConfigSchema.safeParse(parsed);
    if (!image.success) throw new OciError('BadResponse', `${what} is not a valid image config`);
    return { ...(image.data.config?.Labels ?? {}) };
  }

  /** Fetches a blob, refusing it when it is over `maxBytes` or its digest differs. */
  private async fetchBlob(
    session: RepositorySession,
    descriptor: Descriptor,
    maxBytes: number,
    what: string,
  ): Promise<Buffer> {
    if (descriptor.size > maxBytes)
      throw new OciError(
        'OverLimit',
        `${what} is ${descriptor.size} bytes, over the limit of ${maxBytes} bytes`,
      );
    const answer = await session.send({
      method: 'GET',
      path: `blobs/${descriptor.digest}`,
      maxBytes,
      what,
    });
    const actual = digestOf(answer.body, descriptor.digest);
    if (actual !== descriptor.digest)
      throw new OciError(
        'DigestMismatch',
        `${what}: content has digest ${actual}, expected ${descriptor.digest}`,
      );
    return answer.body;
  }
}

function limitsOf(options: PullOptions): PullLimits {
  const limits = { ...defaultPullLimits, ...options.limits };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new OciError(
        'InvalidReference',
        `limit ${name} must be a positive integer, got ${String(value)}`,
      );
  }
  return limits;
}

/** The digest of `bytes` with the algorithm of `like` (sha256 or sha512). */
function digestOf(bytes: Buffer, like: string): string {
  const algorithm = like.split(':')[0] ?? 'sha256';
  if (algorithm !== 'sha256' && algorithm !== 'sha512')
    throw new OciError(
      'BadResponse',
      `digest algorithm ${algorithm} is not supported (sha256, sha512)`,
    );
  return `${algorithm}:${createHash(algorithm).update(bytes).digest('hex')}`;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
