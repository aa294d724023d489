// GET of one object (its /status too; /scale answers a Scale).
import { sendJson, sendObject } from '../answers.js';
import type { ResourceRequest } from '../types.js';
import { scaleOf } from './scale.js';

/** Answers `get`: the object as the client asked for it. */
export function get({
  req,
  res,
  path,
  query,
  type,
  namespace,
  name,
  server,
}: ResourceRequest): void {
  const object = server.core.get(type, namespace, name);
  if (path.subresource === 'scale') return sendJson(res, 200, scaleOf(type, object));
  sendObject(req, res, query, type, 200, object);
}
