// PATCH: JSON patch, merge patch, strategic merge patch or server-side apply, on an object or
// its /status or /scale.
import { sendObject } from '../answers.js';
import { mediaType, patchTypeOf, readBody, writeOptions } from '../request.js';
import type { ResourceRequest } from '../types.js';
import { patchScale } from './scale.js';

/** Answers `patch`: 200 with the object (201 when an apply created it), once durable. */
export async function patch(request: ResourceRequest): Promise<void> {
  const { req, res, path, query, user, type, namespace, name, server } = request;
  const { core } = server;
  const raw = await readBody(req);
  const patchType = patchTypeOf(mediaType(req), type);
  const opts = { ...writeOptions(query, req, user), force: query.get('force') === 'true' };
  if (path.subresource === 'scale') return patchScale(request, raw, opts);
  const existed = core.find(type, namespace, name) !== undefined;
  const patched = core.patch(
    type,
    namespace,
    name,
    patchType,
    raw.toString('utf8'),
    opts,
    path.subresource,
  );
  if (core.store.journal) await core.store.flushed();
  return sendObject(req, res, query, type, existed ? 200 : 201, patched, opts.warnings);
}
