// The registry client's contract: the documents it reads (zod schemas of the OCI image spec
// and Docker's v2 schema 2), what a caller passes in and what a pull returns.
import { z } from 'zod';

/** Media types the client reads. */
export const MediaType = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  ociLayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
} as const;

/** A content descriptor: what a manifest says about a blob it points to. */
export const descriptorSchema = z.object({
  mediaType: z.string(),
  digest: z.string(),
  size: z.number().int().nonnegative(),
  platform: z
    .object({ architecture: z.string(), os: z.string(), variant: z.string().optional() })
    .optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
/** A content descriptor. */
export type Descriptor = z.infer<typeof descriptorSchema>;

/** An image manifest (OCI or Docker v2 schema 2). */
export const imageManifestSchema = z.object({
  schemaVersion: z.literal(2),
  mediaType: z.string().optional(),
  config: descriptorSchema,
  layers: z.array(descriptorSchema),
  annotations: z.record(z.string(), z.string()).optional(),
});
/** An image manifest. */
export type ImageManifest = z.infer<typeof imageManifestSchema>;

/** An OCI index or Docker manifest list. */
export const imageIndexSchema = z.object({
  schemaVersion: z.literal(2),
  mediaType: z.string().optional(),
  manifests: z.array(descriptorSchema),
});
/** An OCI index or Docker manifest list. */
export type ImageIndex = z.infer<typeof imageIndexSchema>;

/** The parts of an image config the client reads. */
export const imageConfigSchema = z.object({
  architecture: z.string().optional(),
  os: z.string().optional(),
  config: z
    .object({ Labels: z.record(z.string(), z.string()).nullable().optional() })
    .nullable()
    .optional(),
});
/** An image config. */
export type ImageConfig = z.infer<typeof imageConfigSchema>;

/** Size limits; every one is checked before the bytes are kept. */
export interface PullLimits {
  /** Largest manifest or index, in bytes. */
  manifestBytes: number;
  /** Largest config blob, in bytes. */
  configBytes: number;
  /** Largest compressed layer, in bytes. */
  layerBytes: number;
  /** Largest decompressed content of the whole image (all layers), in bytes. */
  unpackedBytes: number;
}

/** The limits used when a caller gives none: containerd's manifest limit, generous blobs. */
export const defaultPullLimits: Readonly<PullLimits> = Object.freeze({
  manifestBytes: 4 * 1024 * 1024,
  configBytes: 4 * 1024 * 1024,
  layerBytes: 1024 * 1024 * 1024,
  unpackedBytes: 2 * 1024 * 1024 * 1024,
});

/** Credentials for one registry. */
export type RegistryCredential =
  | { kind: 'basic'; username: string; password: string }
  /** An identity token (docker login's refresh token) exchanged at the token endpoint. */
  | { kind: 'identityToken'; token: string };

/** Finds the credential for a registry host (undefined: anonymous). */
export type CredentialLookup = (registry: string) => RegistryCredential | undefined;

/** The platform picked from an index. */
export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

/** A mirror rule in the style of registries.conf / ImageDigestMirrorSet. */
export interface MirrorRule {
  /** The registry or repository prefix it applies to (`quay.io`, `quay.io/org/catalog`). */
  source: string;
  /** Where to try first, in order (each a registry or repository prefix). */
  mirrors: string[];
  /** Use the mirrors only for pulls by digest (ImageDigestMirrorSet; registries.conf `pull-from-mirror = "digest-only"`). */
  digestOnly: boolean;
}

/** Client-wide settings, fixed when the client is built. */
export interface RegistryClientOptions {
  /** Extra PEM CA certificates trusted besides the system ones. */
  caCertificates?: string[];
  /** Mirror rules; the first whose source matches the longest prefix applies. */
  mirrors?: MirrorRule[];
  /** Platform to pick from an index (default linux/amd64). */
  platform?: Platform;
  /** Per-request timeout in milliseconds (default 30 s). */
  timeoutMs?: number;
  /** User-Agent header. */
  userAgent?: string;
}

/** Per-pull settings. */
export interface PullOptions {
  credentials?: CredentialLookup;
  limits?: Partial<PullLimits>;
}

/** A pulled image, its layers unpacked in memory. */
export interface PulledImage {
  /** The reference as asked for. */
  reference: string;
  /** Digest of the manifest the files come from (the platform's one, under an index). */
  digest: string;
  /** Digest the reference resolved to (the index's, when it names an index). */
  resolvedDigest: string;
  /** Labels of the image config. */
  labels: Record<string, string>;
  /** Regular files by path (no leading slash), whiteouts of upper layers applied. */
  files: Map<string, Buffer>;
  /** Registry the content came from (a mirror, when one answered). */
  pulledFrom: string;
}
