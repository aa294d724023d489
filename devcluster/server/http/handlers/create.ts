// POST: creates an object; review kinds are answered instead of stored, serviceaccounts/token
// issues a token.
import { ApiError } from '../../../api/errors.js';
import { sendObject } from '../answers.js';
import { decodeBody, mediaType, readBody, writeOptions } from '../request.js';
import type { ResourceRequest } from '../types.js';
import { createReview } from './reviews.js';
import { createToken } from './token.js';

/** Answers `create`: 201 with the object, once durable. */
export async function create(request: ResourceRequest): Promise<void> {
  const { req, res, path, query, user, type, namespace, server } = request;
  const { core } = server;
  const raw = await readBody(req);
  const body = decodeBody(raw, mediaType(req));
  const opts = writeOptions(query, req, user);
  if (type.virtual) return createReview(request, body);
  if (path.subresource === 'token') return createToken(request, body);
  if (path.subresource !== '')
    throw new ApiError(
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
  const created = core.create(type, namespace, body, opts);
  if (core.store.journal) await core.store.flushed();
  return sendObject(req, res, query, type, 201, created, opts.warnings);
}
