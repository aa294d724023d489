// How the API answers: JSON bodies, and errors as a metav1.Status (the Status vocabulary of
// shared/kube/status.ts) such as NotFound and Forbidden in the API server's words.
import type { ServerResponse } from 'node:http';
import {
  toStatus,
  type Status,
  type StatusDetails,
  type StatusReason,
} from '../shared/kube/status.js';
import { groupResource, type ApiPath } from './api-paths.js';
import type { RequestUser } from './auth.js';
import { packagesGroup, packagesResource, type Json } from './manifest.js';

/** An answer in the form of a metav1.Status (the Status vocabulary of shared/kube/status.ts). */
export class StatusError extends Error {
  readonly status: Status;
  constructor(reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'StatusError';
    this.status = toStatus(reason, message, details);
  }
}

/** Sends `body` as JSON (or `contentType`), uncached. */
export function send(
  res: ServerResponse,
  code: number,
  body: Json,
  contentType = 'application/json',
): void {
  const payload = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-cache, private',
  });
  res.end(payload);
}

/** The API server's answer to a path it does not serve. */
export function notFound(): StatusError {
  return new StatusError('NotFound', 'the server could not find the requested resource');
}

/** The API server's Forbidden, naming the user, verb, resource and scope refused. */
export function forbidden(
  user: RequestUser,
  verb: string,
  path: ApiPath,
  reason: string,
): StatusError {
  const subject = path.name === undefined ? groupResource : `${groupResource} "${path.name}"`;
  const resource =
    path.subresource === '' ? packagesResource : `${packagesResource}/${path.subresource}`;
  const scope =
    path.namespace === undefined ? 'at the cluster scope' : `in the namespace "${path.namespace}"`;
  return new StatusError(
    'Forbidden',
    `${subject} is forbidden: User "${user.username}" cannot ${verb} resource "${resource}" in API group "${packagesGroup}" ${scope}${reason === '' ? '' : `: ${reason}`}`,
    {
      ...(path.name === undefined ? {} : { name: path.name }),
      group: packagesGroup,
      kind: packagesResource,
    },
  );
}
