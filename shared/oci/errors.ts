// Typed errors of the registry client: one code per failure kind, each saying whether
// retrying can help, with a short message fit for a CatalogSource status (no bodies or headers).

/** Stable codes of registry failures (public surface: statuses and logs carry them). */
export const OciErrorCode = {
  /** The reference does not parse. */
  InvalidReference: 'InvalidReference',
  /** A pull secret that is not usable dockerconfigjson. */
  BadCredentials: 'BadCredentials',
  /** No connection (DNS, refused, TLS handshake, timeout). */
  Unreachable: 'Unreachable',
  /** Plain HTTP was needed for a registry that is not on a loopback address. */
  InsecureRegistry: 'InsecureRegistry',
  /** 401: no or wrong credentials. */
  Unauthorized: 'Unauthorized',
  /** 403: the credentials may not pull this repository. */
  Denied: 'Denied',
  /** The tag or digest does not exist (MANIFEST_UNKNOWN, NAME_UNKNOWN, BLOB_UNKNOWN). */
  NotFound: 'NotFound',
  /** A manifest, config or layer of a media type the client does not read. */
  UnsupportedMediaType: 'UnsupportedMediaType',
  /** No manifest of an index matches the wanted platform. */
  NoMatchingPlatform: 'NoMatchingPlatform',
  /** Content whose digest differs from the one it was asked for. */
  DigestMismatch: 'DigestMismatch',
  /** A manifest or blob larger than the configured limit. */
  OverLimit: 'OverLimit',
  /** A layer that expands beyond the decompressed-content limit. */
  DecompressionBomb: 'DecompressionBomb',
  /** A malformed answer: bad JSON, bad tar, unexpected status. */
  BadResponse: 'BadResponse',
} as const;

/** One of the codes above. */
export type OciErrorCode = (typeof OciErrorCode)[keyof typeof OciErrorCode];

const retryableCodes = new Set<OciErrorCode>([OciErrorCode.Unreachable, OciErrorCode.BadResponse]);

/** A failure of a registry operation. */
export class OciError extends Error {
  readonly code: OciErrorCode;
  /** HTTP status of the answer that caused it, when there was one. */
  readonly status: number | undefined;

  constructor(code: OciErrorCode, message: string, options?: ErrorOptions & { status?: number }) {
    super(message, options);
    this.name = 'OciError';
    this.code = code;
    this.status = options?.status;
  }

  /**
   * Whether the same request may succeed later without anyone changing anything. Auth,
   * missing tags, media types and limits need a person (or a push) first; the caller still
   * retries them on its slow schedule.
   */
  get retryable(): boolean {
    return retryableCodes.has(this.code) || (this.status !== undefined && this.status >= 500);
  }
}

/** True when `error` is an OciError with one of `codes`. */
export function isOciError(error: unknown, ...codes: OciErrorCode[]): error is OciError {
  return error instanceof OciError && (codes.length === 0 || codes.includes(error.code));
}
