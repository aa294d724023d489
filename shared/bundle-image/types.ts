// Contract types of bundle images: what an unpacked bundle is (stored by digest, read by the
// plan function) and the failures of unpacking, with a stable code.
import { z } from 'zod';

/** A bundle unpacked from its image: its manifests and its annotations, as stored by digest. */
export const UnpackedBundleSchema = z.object({
  /** Digest of the image manifest the files came from. */
  digest: z.string(),
  /** The reference it was pulled by (the first one; others may name the same digest). */
  image: z.string(),
  /** Every object of the manifests directory, in file order then document order. */
  objects: z.array(z.record(z.string(), z.unknown())),
  /** metadata/annotations.yaml's `annotations`. */
  annotations: z.record(z.string(), z.string()),
});
/** A bundle unpacked from its image. */
export type UnpackedBundle = z.infer<typeof UnpackedBundleSchema>;

/** Why a bundle image could not be unpacked (stable; the message says the details). */
export const BundleImageErrorCode = {
  /** The registry refused, lacked the image, or sent wrong content (the OciError code follows). */
  PullFailed: 'PullFailed',
  /** The image has no manifests directory, or it holds no object. */
  NoManifests: 'NoManifests',
  /** The image has no metadata/annotations.yaml, or it has no annotations map. */
  NoAnnotations: 'NoAnnotations',
  /** A manifest file is neither YAML nor JSON of Kubernetes objects. */
  BadManifest: 'BadManifest',
  /** The manifests hold no ClusterServiceVersion, or more than one. */
  CsvCount: 'CsvCount',
  /** The CSV is not the bundle the catalog names. */
  CsvMismatch: 'CsvMismatch',
  /** A pull secret named by the CatalogSource cannot be used. */
  PullSecret: 'PullSecret',
} as const;
/** A bundle image error code. */
export type BundleImageErrorCode = (typeof BundleImageErrorCode)[keyof typeof BundleImageErrorCode];

/** A bundle image that could not be unpacked; `retryable` when waiting may help (registry down). */
export class BundleImageError extends Error {
  readonly code: BundleImageErrorCode;
  readonly retryable: boolean;
  constructor(
    code: BundleImageErrorCode,
    message: string,
    options: { retryable?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = 'BundleImageError';
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}
