// Typed errors of the Kubernetes API, built once from a Status object (reason, code, details)
// so no raw response body travels further. Each says whether retrying can help. The reasons,
// codes and causes are the Status vocabulary of status.ts.
import { isStatusReason, reasonForCode, type StatusDetails, type StatusReason } from './status.js';

/** The reason of an error answer: one of the Status vocabulary, or Unknown when it gave none we know. */
export type AnswerReason = StatusReason | 'Unknown';

/** An error answer of the Kubernetes API. */
export class KubeApiError extends Error {
  /** HTTP status code. */
  readonly code: number;
  readonly reason: AnswerReason;
  /** Which object the answer concerns, and (for Invalid) each bad field. */
  readonly details: StatusDetails;
  /** The cluster the request went to. */
  readonly cluster: string;
  /** How long the server asked us to wait before trying again (its Retry-After), if it said. */
  retryAfterMs: number | undefined;

  constructor(
    cluster: string,
    code: number,
    reason: AnswerReason,
    message: string,
    details: StatusDetails = {},
    options?: ErrorOptions,
  ) {
    // NotFound and Conflict are everyday answers that callers branch on: capturing a stack
    // for them costs more than the rest of handling the answer.
    const limit = Error.stackTraceLimit;
    if (code === 404 || code === 409) Error.stackTraceLimit = 0;
    super(message, options);
    Error.stackTraceLimit = limit;
    this.name = 'KubeApiError';
    this.cluster = cluster;
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.retryAfterMs = undefined;
  }

  /**
   * Whether the same request may succeed later: throttling, timeouts, server trouble, no answer;
   * a conflict; RBAC not granted yet (Forbidden); credentials being rotated (Unauthorized: the
   * client re-reads them on the next request).
   */
  get retryable(): boolean {
    return (
      this.code === 0 ||
      this.code === 401 ||
      this.code === 429 ||
      this.code >= 500 ||
      this.reason === 'Conflict' ||
      this.reason === 'Forbidden'
    );
  }

  /**
   * Whether the API is unreachable or shedding load rather than refusing this request: no answer
   * (code 0: connection refused or lost, no answer in time), 429, 502, 503, 504, or a server-side
   * timeout. Such failures are waited out; they say nothing about the work itself.
   */
  get transient(): boolean {
    return (
      this.code === 0 ||
      this.code === 429 ||
      this.code === 502 ||
      this.code === 503 ||
      this.code === 504 ||
      this.reason === 'Timeout' ||
      this.reason === 'ServerTimeout'
    );
  }
}

/** Builds the typed error of an HTTP error answer (a Status body when the server sent one). */
export function kubeApiError(
  cluster: string,
  code: number,
  body: string,
  retryAfter?: string,
): KubeApiError {
  let status: { reason?: unknown; message?: unknown; details?: unknown } = {};
  try {
    status = JSON.parse(body) as typeof status;
  } catch {
    // Not a Status (a proxy's HTML page, say): keep the start of it as the message.
  }
  const reason = isStatusReason(status.reason) ? status.reason : (reasonForCode(code) ?? 'Unknown');
  const message =
    typeof status.message === 'string' && status.message !== ''
      ? status.message
      : `HTTP ${code}${body === '' ? '' : `: ${body.slice(0, 200)}`}`;
  const details =
    typeof status.details === 'object' && status.details !== null
      ? (status.details as StatusDetails)
      : {};
  const error = new KubeApiError(cluster, code, reason, message, details);
  error.retryAfterMs = retryAfterMs(retryAfter, details);
  return error;
}

/**
 * The wait a server asked for: its Retry-After header (seconds, or an HTTP date), else the
 * Status's details.retryAfterSeconds (kube sends both on 429 and on some 5xx).
 */
export function retryAfterMs(
  header: string | undefined,
  details: StatusDetails = {},
  now = Date.now(),
): number | undefined {
  if (header !== undefined && header.trim() !== '') {
    const text = header.trim();
    if (/^\d+$/.test(text)) return Number(text) * 1000;
    const at = Date.parse(text);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  const seconds = details.retryAfterSeconds;
  return seconds !== undefined && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * True when an error (or one of its causes) is a transient API failure (KubeApiError.transient):
 * the work should wait and try again without counting it as a failure of its own.
 */
export function isTransientApiFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof KubeApiError) return e.transient;
  }
  return false;
}

/** The longest Retry-After among an error and its causes, if any said one. */
export function retryAfterOf(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof KubeApiError && e.retryAfterMs !== undefined) return e.retryAfterMs;
  }
  return undefined;
}

/** True for a 404 NotFound answer. */
export function isNotFound(error: unknown): error is KubeApiError {
  return error instanceof KubeApiError && error.code === 404;
}

/** True for a 409 answer caused by a stale resourceVersion. */
export function isConflict(error: unknown): error is KubeApiError {
  return error instanceof KubeApiError && error.code === 409 && error.reason === 'Conflict';
}

/** True for a 409 AlreadyExists answer to a create. */
export function isAlreadyExists(error: unknown): error is KubeApiError {
  return error instanceof KubeApiError && error.reason === 'AlreadyExists';
}

/** True for a 410 Gone answer: a watch's resourceVersion is too old, list again. */
export function isGone(error: unknown): error is KubeApiError {
  return error instanceof KubeApiError && error.code === 410;
}
