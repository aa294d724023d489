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
  }

  /** Whether the same request may succeed later (throttling, timeouts, server trouble). */
  get retryable(): boolean {
    return (
      this.code === 429 ||
      this.code >= 500 ||
      this.reason === 'Conflict' ||
      this.reason === 'Forbidden'
    );
  }
}

/** Builds the typed error of an HTTP error answer (a Status body when the server sent one). */
export function kubeApiError(cluster: string, code: number, body: string): KubeApiError {
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
  return new KubeApiError(cluster, code, reason, message, details);
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
