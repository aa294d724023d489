// DELETE of a collection: every object the selectors match, each as a delete of its own.
import { ApiError } from '../../../api/errors.js';
import { apiVersionOf } from '../../../resources/registry.js';
import { text, type JsonObject } from '../../../../shared/kube/json.js';
import { sendJson } from '../answers.js';
import { mediaType, parseDeleteOptions, parseSelectors, readBody } from '../request.js';
import type { ResourceRequest } from '../types.js';

/** Answers `deletecollection`: the list of what was deleted or marked, once durable. */
export async function deleteCollection(request: ResourceRequest): Promise<void> {
  const { req, res, path, query, type, server } = request;
  const { core } = server;
  const raw = await readBody(req);
  const deleteOptions = parseDeleteOptions(query, raw, mediaType(req));
  const { labels, fields } = parseSelectors(query);
  const list = core.list(type, path.namespace, {
    labelSelector: labels,
    fieldSelector: fields,
    limit: undefined,
    continueToken: undefined,
  });
  const items: JsonObject[] = [];
  for (const item of list.items) {
    const m = item['metadata'] as JsonObject;
    try {
      items.push(
        core.delete(type, text(m['namespace'] ?? ''), text(m['name']), deleteOptions).object,
      );
    } catch (error) {
      if (!(error instanceof ApiError && error.reason === 'NotFound')) throw error;
    }
  }
  if (core.store.journal) await core.store.flushed();
  return sendJson(res, 200, {
    kind: type.listKind,
    apiVersion: apiVersionOf(type.group, type.version),
    metadata: { resourceVersion: text(core.store.currentResourceVersion()) },
    items,
  });
}
