// PUT: replaces an object, or its /status, /finalize or /scale.
import { sendObject } from '../answers.js';
import { decodeBody, mediaType, readBody, writeOptions } from '../request.js';
import type { ResourceRequest } from '../types.js';
import { updateScale } from './scale.js';

/** Answers `update`: 200 with the object (201 when the PUT created it), once durable. */
export async function update(request: ResourceRequest): Promise<void> {
  const { req, res, path, query, user, type, namespace, name, server } = request;
  const { core } = server;
  const raw = await readBody(req);
  const body = decodeBody(raw, mediaType(req));
  const opts = writeOptions(query, req, user);
  if (path.subresource === 'scale') return updateScale(request, body, opts);
  const before = core.find(type, namespace, name);
  const updated = core.update(type, namespace, name, body, opts, path.subresource);
  if (core.store.journal) await core.store.flushed();
  return sendObject(req, res, query, type, before ? 200 : 201, updated, opts.warnings);
}
