// The non-resource paths clients discover the API by: /api, /apis (also aggregated v2/v2beta1),
// /api/<version>, /apis/<group>[/<version>], /openapi/v2 (JSON or client-go's protobuf) and
// /openapi/v3. OpenAPI documents are rebuilt only when the served types change.
import { nonResourceAttributes, type UserInfo } from '../../../auth/index.js';
import { ApiError } from '../../../api/errors.js';
import {
  aggregatedContentType,
  aggregatedDiscovery,
  aggregatedVersionAccepted,
  coreVersions,
  groupDocument,
  groupList,
  resourceList,
} from '../../../discovery/documents.js';
import {
  openApiV2Document,
  openApiV2Protobuf,
  openApiV3Document,
  openApiV3Index,
} from '../../../discovery/openapi.js';
import { text, type JsonObject } from '../../../../shared/kube/json.js';
import type { ApiRequest, ApiResponse } from '../../transport.js';
import { authorizeOrThrow } from '../access.js';
import { sendJson } from '../answers.js';
import type { FrontEndOptions } from '../types.js';

/** Answers a non-resource request (404 for paths that are none of the above). */
export type DiscoveryHandler = (
  req: ApiRequest,
  res: ApiResponse,
  pathname: string,
  user: UserInfo,
) => void;

/** The discovery handler of a front end, with its cache of OpenAPI documents. */
export function discoveryHandler(server: FrontEndOptions): DiscoveryHandler {
  const registry = server.core.registry;
  let documentsGeneration = -1;
  const documents = new Map<string, JsonObject | undefined>();
  function cached(key: string, build: () => JsonObject | undefined): JsonObject | undefined {
    if (registry.generation !== documentsGeneration) {
      documents.clear();
      documentsGeneration = registry.generation;
    }
    if (!documents.has(key)) documents.set(key, build());
    return documents.get(key);
  }

  return (req, res, pathname, user) => {
    authorizeOrThrow(nonResourceAttributes(user, req.method.toLowerCase(), pathname), server.rbac);
    const accept = req.headers['accept'];
    const parts = pathname.split('/').filter((p) => p !== '');
    if (pathname === '/api' || pathname === '/api/') {
      const aggregated = aggregatedVersionAccepted(accept);
      if (aggregated)
        return sendJson(
          res,
          200,
          aggregatedDiscovery(registry, true, aggregated),
          aggregatedContentType(aggregated),
        );
      return sendJson(res, 200, coreVersions(server.serverAddress()));
    }
    if (pathname === '/apis' || pathname === '/apis/') {
      const aggregated = aggregatedVersionAccepted(accept);
      if (aggregated)
        return sendJson(
          res,
          200,
          aggregatedDiscovery(registry, false, aggregated),
          aggregatedContentType(aggregated),
        );
      return sendJson(res, 200, groupList(registry));
    }
    if (parts[0] === 'api' && parts.length === 2) {
      const list = resourceList(registry, '', parts[1] ?? '');
      if (list) return sendJson(res, 200, list);
    }
    if (parts[0] === 'apis' && parts.length === 2) {
      const document = groupDocument(registry, parts[1] ?? '');
      if (document) return sendJson(res, 200, document);
    }
    if (parts[0] === 'apis' && parts.length === 3) {
      const list = resourceList(registry, parts[1] ?? '', parts[2] ?? '');
      if (list) return sendJson(res, 200, list);
    }
    if (pathname === '/openapi/v2') {
      if ((accept ?? '').includes('protobuf')) {
        const body = openApiV2Protobuf(server.kubernetesVersion);
        res.send(
          200,
          {
            'content-type': 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
            'content-length': text(body.length),
          },
          body,
        );
        return;
      }
      return sendJson(
        res,
        200,
        cached('v2', () => openApiV2Document(registry, server.kubernetesVersion)) ?? {},
      );
    }
    if (pathname === '/openapi/v3' || pathname === '/openapi/v3/') {
      return sendJson(
        res,
        200,
        cached('v3', () => openApiV3Index(registry, server.kubernetesVersion)) ?? {},
      );
    }
    if (parts[0] === 'openapi' && parts[1] === 'v3') {
      const group = parts[2] === 'api' ? '' : (parts[3] ?? '');
      const version = parts[2] === 'api' ? (parts[3] ?? '') : (parts[4] ?? '');
      const document = cached(`v3/${group}/${version}`, () =>
        openApiV3Document(registry, group, version, server.kubernetesVersion),
      );
      if (document) return sendJson(res, 200, document);
    }
    throw new ApiError('NotFound', 'the server could not find the requested resource');
  };
}
