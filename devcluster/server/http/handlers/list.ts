// LIST of a collection: selectors, paging (limit/continue), and the list as JSON (each item's
// bytes reused from its stored encoding), a server-side Table or PartialObjectMetadataList.
import { apiVersionOf } from '../../../resources/registry.js';
import { partialObjectMetadata, toTable } from '../../table.js';
import type { JsonObject } from '../../../../shared/kube/json.js';
import { listJsonBytes } from '../../../storage/serialization.js';
import {
  includeObjectOf,
  metadataAccepted,
  sendBytes,
  sendJson,
  tableAccepted,
  tableContentType,
} from '../answers.js';
import { parseResourceVersion, parseSelectors } from '../request.js';
import type { ResourceRequest } from '../types.js';

/** Answers `list`. */
export function list({ req, res, path, query, type, server }: ResourceRequest): void {
  const { labels, fields } = parseSelectors(query);
  const limit = query.get('limit');
  const resourceVersion = query.get('resourceVersion');
  if (resourceVersion !== null) parseResourceVersion(resourceVersion);
  const result = server.core.list(type, path.namespace, {
    labelSelector: labels,
    fieldSelector: fields,
    limit: limit === null ? undefined : Number(limit),
    continueToken: query.get('continue') ?? undefined,
  });
  const accept = req.headers['accept'];
  if (tableAccepted(accept)) {
    const table = toTable(type, result.items, {
      resourceVersion: result.resourceVersion,
      ...(result.continueToken !== undefined ? { continueToken: result.continueToken } : {}),
      includeObject: includeObjectOf(query),
      now: Date.now(),
    });
    return sendJson(res, 200, table, tableContentType);
  }
  const metadata: JsonObject = { resourceVersion: result.resourceVersion };
  if (result.continueToken !== undefined) metadata['continue'] = result.continueToken;
  if (result.remainingItemCount !== undefined)
    metadata['remainingItemCount'] = result.remainingItemCount;
  if (metadataAccepted(accept)) {
    return sendJson(res, 200, {
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata,
      items: result.items.map(partialObjectMetadata),
    });
  }
  return sendBytes(
    res,
    200,
    listJsonBytes(
      { kind: type.listKind, apiVersion: apiVersionOf(type.group, type.version), metadata },
      result.items,
    ),
  );
}
