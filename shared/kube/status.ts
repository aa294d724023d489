// The Kubernetes Status vocabulary (meta/v1 Status): the reasons with the HTTP code each is sent
// with, the cause types of Status.details.causes, and the Status object itself. The client reads
// error answers with it; the devcluster and the package server write theirs with it.

/**
 * Status reasons (metav1.StatusReason) and the HTTP code of each. Where reasons share a code,
 * the first listed is what a bare code means (apimachinery's reasonForCode): 409 Conflict, 410 Gone.
 */
export const statusCodes = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  Conflict: 409,
  AlreadyExists: 409,
  Gone: 410,
  Expired: 410,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  Invalid: 422,
  TooManyRequests: 429,
  InternalError: 500,
  /** The server could not finish in time; kube sends it as a 500. */
  ServerTimeout: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
} as const;

/** A Kubernetes Status reason. */
export type StatusReason = keyof typeof statusCodes;

/** Whether a string (a reason read from an answer) is one of statusCodes. */
export function isStatusReason(value: unknown): value is StatusReason {
  return typeof value === 'string' && Object.hasOwn(statusCodes, value);
}

const reasonsByCode = new Map<number, StatusReason>();
for (const [reason, code] of Object.entries(statusCodes) as [StatusReason, number][])
  if (!reasonsByCode.has(code)) reasonsByCode.set(code, reason);

/** The reason a bare HTTP code stands for (no Status body); undefined for codes without one. */
export function reasonForCode(code: number): StatusReason | undefined {
  return reasonsByCode.get(code);
}

/**
 * The part of the table for `reasons`, in that order: the catalogue one server answers with
 * (its own const object, pinned by a test, with its union type derived from it).
 */
export function statusCodesOf<const R extends readonly StatusReason[]>(
  ...reasons: R
): { readonly [K in R[number]]: (typeof statusCodes)[K] } {
  const table: Partial<Record<StatusReason, number>> = {};
  for (const reason of reasons) table[reason] = statusCodes[reason];
  return table as { readonly [K in R[number]]: (typeof statusCodes)[K] };
}

/** Types of Status.details.causes entries (metav1.CauseType, and core/v1's NamespaceTerminating). */
export const causeTypes = {
  FieldValueNotFound: 'FieldValueNotFound',
  FieldValueRequired: 'FieldValueRequired',
  FieldValueDuplicate: 'FieldValueDuplicate',
  FieldValueInvalid: 'FieldValueInvalid',
  FieldValueNotSupported: 'FieldValueNotSupported',
  FieldValueForbidden: 'FieldValueForbidden',
  FieldValueTooLong: 'FieldValueTooLong',
  FieldValueTooMany: 'FieldValueTooMany',
  FieldValueTypeInvalid: 'FieldValueTypeInvalid',
  InternalError: 'InternalError',
  UnexpectedServerResponse: 'UnexpectedServerResponse',
  FieldManagerConflict: 'FieldManagerConflict',
  ResourceVersionTooLarge: 'ResourceVersionTooLarge',
  NamespaceTerminating: 'NamespaceTerminating',
} as const;

/** One of causeTypes. */
export type CauseType = (typeof causeTypes)[keyof typeof causeTypes];

/** One entry of Status.details.causes: what is wrong, and where. */
export type StatusCause = {
  type?: CauseType;
  /** Path of the field, as kube prints it ("spec.replicas", "metadata.labels"). */
  field?: string;
  message: string;
};

/** Status.details: which object the answer is about, and (for Invalid) each bad field. */
export type StatusDetails = {
  name?: string;
  group?: string;
  /** The resource (plural, "configmaps") for most answers; the Kind for Invalid. */
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
};

/** A meta/v1 Status of a failed request, as servers answer with it. */
export type Status = {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: StatusReason;
  code: number;
  details?: StatusDetails;
};

/** The Status of a failure: its code from the table, details (copied) when there are any. */
export function toStatus(reason: StatusReason, message: string, details?: StatusDetails): Status {
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code: statusCodes[reason],
  };
  if (details !== undefined) status.details = { ...details };
  return status;
}
