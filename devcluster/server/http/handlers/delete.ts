// DELETE of one object: gone at once, or marked for deletion (finalizers, propagation).
import { sendObject } from '../answers.js';
import { mediaType, parseDeleteOptions, readBody } from '../request.js';
import type { ResourceRequest } from '../types.js';

/** Answers `delete`: 200 with the last state when gone, 202 with the marked object otherwise. */
export async function remove(request: ResourceRequest): Promise<void> {
  const { req, res, query, type, namespace, name, server } = request;
  const { core } = server;
  const raw = await readBody(req);
  const deleteOptions = parseDeleteOptions(query, raw, mediaType(req));
  const { object, deleted } = core.delete(type, namespace, name, deleteOptions);
  if (core.store.journal) await core.store.flushed();
  return sendObject(req, res, query, type, deleted ? 200 : 202, object);
}
