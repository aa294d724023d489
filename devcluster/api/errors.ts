// Errors the API server answers with, each rendered as a Kubernetes Status object (the Status
// vocabulary of shared/kube/status.ts).
import {
  statusCodesOf,
  toStatus,
  type Status,
  type StatusCause,
  type StatusDetails,
} from '../../shared/kube/status.js';

/** Status reasons the devcluster emits (metav1.StatusReason) with their HTTP codes. */
export const StatusReasons = statusCodesOf(
  'BadRequest',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'MethodNotAllowed',
  'NotAcceptable',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Expired',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'Invalid',
  'TooManyRequests',
  'InternalError',
  'ServiceUnavailable',
);

/** A Kubernetes Status reason the devcluster emits. */
export type StatusReason = keyof typeof StatusReasons;

/** A failed API request; `toStatus()` is the body sent to clients. */
export class ApiError extends Error {
  readonly code: number;
  constructor(
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    options?: ErrorOptions,
  ) {
    // A client error is an answer, not a fault of the server: no stack to capture (that costs
    // more than answering a NotFound).
    const limit = Error.stackTraceLimit;
    if (StatusReasons[reason] < 500) Error.stackTraceLimit = 0;
    super(message, options);
    Error.stackTraceLimit = limit;
    this.name = 'ApiError';
    this.code = StatusReasons[reason];
  }

  /** The metav1.Status object for this error. */
  toStatus(): Status {
    return toStatus(this.reason, this.message, this.details);
  }
}

/** The group/kind and name an error is about, for the messages kube writes ("configmaps \"x\""). */
export interface ResourceRef {
  group: string;
  /** Plural resource name, as used in messages. */
  resource: string;
  kind: string;
  name: string;
}

/** The ref of an object of a served type. */
export function refOf(
  type: { group: string; resource: string; kind: string },
  name: string,
): ResourceRef {
  return { group: type.group, resource: type.resource, kind: type.kind, name };
}

function qualified(ref: ResourceRef): string {
  return ref.group === '' ? ref.resource : `${ref.resource}.${ref.group}`;
}

/** 404 `configmaps "x" not found`. */
export function notFound(ref: ResourceRef): ApiError {
  return new ApiError('NotFound', `${qualified(ref)} "${ref.name}" not found`, {
    name: ref.name,
    group: ref.group,
    kind: ref.resource,
  });
}

/** 409 `configmaps "x" already exists`. */
export function alreadyExists(ref: ResourceRef): ApiError {
  return new ApiError('AlreadyExists', `${qualified(ref)} "${ref.name}" already exists`, {
    name: ref.name,
    group: ref.group,
    kind: ref.resource,
  });
}

/** 409 Conflict for a stale resourceVersion or failed precondition. */
export function conflict(ref: ResourceRef, why: string): ApiError {
  return new ApiError(
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(ref)} "${ref.name}": ${why}`,
    {
      name: ref.name,
      group: ref.group,
      kind: ref.resource,
    },
  );
}

/** The "object has been modified" explanation kube gives on a stale resourceVersion. */
export const staleObjectMessage =
  'the object has been modified; please apply your changes to the latest version and try again';

/** 422 Invalid listing each bad field, as kube's `Kind.group "name" is invalid: [...]`. */
export function invalid(ref: ResourceRef, causes: StatusCause[]): ApiError {
  const kindGroup = ref.group === '' ? ref.kind : `${ref.kind}.${ref.group}`;
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const list = parts.length === 1 ? (parts[0] ?? '') : `[${parts.join(', ')}]`;
  return new ApiError('Invalid', `${kindGroup} "${ref.name}" is invalid: ${list}`, {
    name: ref.name,
    group: ref.group,
    kind: ref.kind,
    causes,
  });
}

/** 400 BadRequest with a plain message. */
export function badRequest(message: string): ApiError {
  return new ApiError('BadRequest', message);
}

/** 500 InternalError wrapping an unexpected failure. */
export function internalError(cause: unknown): ApiError {
  const text = cause instanceof Error ? cause.message : String(cause);
  return new ApiError(
    'InternalError',
    `Internal error occurred: ${text}`,
    { causes: [{ message: text }] },
    { cause },
  );
}
