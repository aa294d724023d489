// The HTTP front end: routes /api and /apis requests to the core, serves discovery, OpenAPI and
// health endpoints, authenticates and authorizes every request, and streams watches.
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { parse as parseYaml } from 'yaml';
import {
  authenticate,
  authorize,
  forbiddenStatus,
  issueServiceAccountToken,
  nonResourceAttributes,
  type AuthenticationContext,
  type AuthenticationResult,
  type RbacSource,
  type RequestAttributes,
  type UserInfo,
} from '../../auth/index.js';
import type { ApiAggregator } from '../../aggregation/aggregator.js';
import type { ApiCore } from '../../api/core.js';
import type { DeleteOptions, PatchType, WriteOptions } from '../../api/types.js';
import {
  aggregatedContentType,
  aggregatedDiscovery,
  aggregatedVersionAccepted,
  coreVersions,
  groupDocument,
  groupList,
  resourceList,
  versionInfo,
} from '../../discovery/documents.js';
import { ApiError, badRequest, internalError } from '../../api/errors.js';
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../../shared/kube/json.js';
import {
  openApiV2Document,
  openApiV2Protobuf,
  openApiV3Document,
  openApiV3Index,
} from '../../discovery/openapi.js';
import { decodeProtobufBody, protobufMediaType } from '../protobuf.js';
import { answerReview } from './handlers/reviews.js';
import { jsonBytes, listJsonBytes } from '../../storage/serialization.js';
import { apiVersionOf, storageKey, type ResourceType } from '../../resources/registry.js';
import { partialObjectMetadata, toTable, type IncludeObject } from '../table.js';
import type { ApiRequest, ApiResponse } from '../transport.js';
import type { WatchHub } from '../../storage/watch.js';
import { batchedSink } from '../watch-sink.js';
import {
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
  type FieldSelector,
  type LabelSelector,
} from '../../../shared/kube/selectors.js';

/** Largest request body accepted (kube-apiserver's limit). */
export const maxRequestBytes = 3 * 1024 * 1024;

/** What the HTTP front end needs. */
export interface FrontEndOptions {
  core: ApiCore;
  hub: WatchHub;
  rbac: RbacSource;
  kubernetesVersion: string;
  /** host:port clients reach the server at. */
  serverAddress: () => string;
  authContext: () => AuthenticationContext;
  signingKeyPem: string;
  logger: Logger;
  bookmarkIntervalMs: number;
  /** Serves aggregated APIs (APIServices with a service) before the local routes. */
  aggregator?: Pick<ApiAggregator, 'serve'>;
}

/** A parsed /api or /apis resource path. */
export interface ResourcePath {
  group: string;
  version: string;
  namespace: string | undefined;
  resource: string;
  name: string | undefined;
  subresource: string;
  watchPath: boolean;
}

/** Parses a resource path; undefined for paths that are not resource requests. */
export function parseResourcePath(pathname: string): ResourcePath | undefined {
  const parts: string[] = [];
  for (const part of pathname.split('/'))
    if (part !== '') parts.push(part.includes('%') ? decodeURIComponent(part) : part);
  let group: string;
  let version: string;
  // Index of the first part after the group version.
  let at: number;
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1] ?? '';
    at = 2;
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] ?? '';
    version = parts[2] ?? '';
    at = 3;
  } else {
    return undefined;
  }
  let watchPath = false;
  if (parts[at] === 'watch') {
    watchPath = true;
    at++;
  }
  let namespace: string | undefined;
  if (
    parts[at] === 'namespaces' &&
    parts.length - at >= 3 &&
    !(group === '' && (parts[at + 2] === 'status' || parts[at + 2] === 'finalize'))
  ) {
    namespace = parts[at + 1];
    at += 2;
  }
  const resource = parts[at];
  if (resource === undefined || parts.length - at > 3) return undefined;
  return {
    group,
    version,
    namespace,
    resource,
    name: parts[at + 1],
    subresource: parts[at + 2] ?? '',
    watchPath,
  };
}

/**
 * Path and query of a request target. Plain targets (the API's own paths) are split directly;
 * anything URL parsing could change (dot segments, percent-encoding, fragments) goes through it.
 */
export function requestTarget(target: string): { pathname: string; query: URLSearchParams } {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const search = q < 0 ? '' : target.slice(q + 1);
  if (plainPath.test(path) && !path.includes('/.') && !search.includes('#'))
    return { pathname: path, query: search === '' ? noQuery : new URLSearchParams(search) };
  const url = new URL(target, 'https://devcluster');
  return { pathname: url.pathname, query: url.searchParams };
}

const plainPath = /^\/(?!\/)[\w\-.~/]*$/;

/** The query of the many requests without one (writes, gets): shared, and never modified. */
const noQuery = new URLSearchParams();

/** The product of the client's User-Agent ("kubectl" of "kubectl/v1.30.0 (linux/amd64) ..."), kube's default field manager. */
function userAgentProduct(req: ApiRequest): string {
  const agent = req.headers['user-agent'];
  if (agent === undefined) return 'unknown';
  const slash = agent.indexOf('/');
  return slash < 0 ? agent : agent.slice(0, slash);
}

/** One `Warning` header value as kube-apiserver writes it: `299 - "<text>"`. */
function warningHeaderValue(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}

function sendJson(
  res: ApiResponse,
  code: number,
  body: JsonValue,
  contentType = 'application/json',
  warnings: readonly string[] = [],
): void {
  sendBytes(res, code, jsonBytes(body), contentType, warnings);
}

function sendBytes(
  res: ApiResponse,
  code: number,
  body: Buffer,
  contentType = 'application/json',
  warnings: readonly string[] = [],
): void {
  const headers: Record<string, string | string[]> = {
    'content-type': contentType,
    'content-length': String(body.length),
    'cache-control': 'no-cache, private',
  };
  if (warnings.length > 0) {
    // After any warning set earlier for the whole request (a deprecated version's), as kube orders them.
    const earlier = res.getHeader('warning');
    headers['warning'] = [
      ...(earlier === undefined ? [] : Array.isArray(earlier) ? earlier : [earlier]),
      ...warnings.map(warningHeaderValue),
    ];
  }
  res.send(code, headers, body);
}

function sendError(res: ApiResponse, error: ApiError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, error.code, error.toStatus());
}

function readBody(req: ApiRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    const tooLarge = (): ApiError =>
      new ApiError(
        'RequestEntityTooLarge',
        `Request entity too large: limit is ${maxRequestBytes}`,
      );
    if (declared > maxRequestBytes) {
      req.discardBody();
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const source = req.body;
    source.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxRequestBytes) {
        failed = true;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    source.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    });
    source.on('error', reject);
  });
}

function mediaType(req: ApiRequest): string {
  const header = req.headers['content-type'];
  if (header === undefined) return 'application/json';
  const semicolon = header.indexOf(';');
  return (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

/** Decodes a JSON or YAML body into an object, with kube's errors for bad input. */
export function decodeBody(raw: Buffer, contentType: string): JsonObject {
  const source = raw.toString('utf8');
  if (source.trim() === '') throw badRequest('the body of the request was empty');
  let value: unknown;
  if (contentType === 'application/json' || contentType === '') {
    try {
      value = JSON.parse(source);
    } catch (error) {
      throw badRequest(
        `couldn't get version/kind; json parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`,
      );
    }
  } else if (contentType === protobufMediaType) {
    return decodeProtobufBody(raw);
  } else if (
    contentType === 'application/yaml' ||
    contentType === 'application/x-yaml' ||
    contentType === 'text/yaml'
  ) {
    try {
      value = parseYaml(source);
    } catch (error) {
      throw badRequest(
        `couldn't get version/kind; yaml parse error: ${error instanceof Error ? error.message : 'invalid YAML'}`,
      );
    }
  } else {
    throw new ApiError(
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf`,
    );
  }
  if (!isJsonObject(value))
    throw badRequest(`couldn't get version/kind; json parse error: the body must be a JSON object`);
  return value;
}

function patchTypeOf(contentType: string): PatchType {
  switch (contentType) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+cbor':
      return 'apply';
    default:
      throw new ApiError(
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
      );
  }
}

function parseSelectors(query: URLSearchParams): { labels: LabelSelector; fields: FieldSelector } {
  try {
    return {
      labels: parseLabelSelector(query.get('labelSelector') ?? ''),
      fields: parseFieldSelector(query.get('fieldSelector') ?? ''),
    };
  } catch (error) {
    if (error instanceof SelectorError) throw badRequest(error.message);
    throw error;
  }
}

function parseResourceVersion(value: string | null): number | undefined {
  if (value === null || value === '' || value === '0') return undefined;
  if (!/^\d+$/.test(value)) {
    throw new ApiError(
      'BadRequest',
      `resourceVersion: Invalid value: ${JSON.stringify(value)}: invalid resource version`,
      {
        causes: [
          {
            type: 'FieldValueInvalid',
            field: 'resourceVersion',
            message: `Invalid value: ${JSON.stringify(value)}`,
          },
        ],
      },
    );
  }
  return Number(value);
}

function tableAccepted(accept: string | undefined): boolean {
  return accept !== undefined && /as=Table/.test(accept);
}

function metadataAccepted(accept: string | undefined): boolean {
  return (
    accept !== undefined &&
    /as=PartialObjectMetadata/.test(accept) &&
    !/^application\/json\s*(,|$)/.test(accept)
  );
}

function verbOf(method: string, path: ResourcePath, query: URLSearchParams): string {
  const watch = path.watchPath || query.get('watch') === 'true' || query.get('watch') === '1';
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (path.name === undefined) return watch ? 'watch' : 'list';
      return watch ? 'watch' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return path.name === undefined ? 'deletecollection' : 'delete';
    default:
      return '';
  }
}

/** Authentication results of connections identified by their client certificate only. */
const certificateUsers = new WeakMap<object, AuthenticationResult>();

type PeerIdentity = { commonName: string; organizations: string[] } | undefined;

/** Peer identities per TLS connection: reading the certificate is costly and it never changes. */
const peerIdentities = new WeakMap<object, PeerIdentity>();

function peerCertificate(req: ApiRequest): PeerIdentity {
  const { connection } = req;
  if (peerIdentities.has(connection)) return peerIdentities.get(connection);
  const identity = readPeerCertificate(req.tlsSocket);
  peerIdentities.set(connection, identity);
  return identity;
}

function readPeerCertificate(socket: TLSSocket): PeerIdentity {
  if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
  const certificate = socket.getPeerCertificate();
  if (!certificate || !certificate.subject) return undefined;
  const subject = certificate.subject as unknown as Record<string, string | string[] | undefined>;
  const cn = subject['CN'];
  const o = subject['O'];
  return {
    commonName: Array.isArray(cn) ? (cn[0] ?? '') : (cn ?? ''),
    organizations: Array.isArray(o) ? o : o !== undefined ? [o] : [],
  };
}

const openPaths = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

/** The API server's HTTP request listener. */
export function createRequestListener(
  options: FrontEndOptions,
): (req: ApiRequest, res: ApiResponse) => void {
  const { core, registry } = { core: options.core, registry: options.core.registry };

  function authorizeOrThrow(attributes: RequestAttributes): void {
    if (attributes.user.groups.includes('system:masters')) return;
    const decision = authorize(attributes, options.rbac);
    if (!decision.allowed) {
      const status = forbiddenStatus(attributes, decision);
      throw new ApiError('Forbidden', status.message, status.details);
    }
  }

  // OpenAPI documents are rebuilt only when the served types change.
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

  function nonResource(req: ApiRequest, res: ApiResponse, pathname: string, user: UserInfo): void {
    authorizeOrThrow(nonResourceAttributes(user, req.method.toLowerCase(), pathname));
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
      return sendJson(res, 200, coreVersions(options.serverAddress()));
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
        const body = openApiV2Protobuf(options.kubernetesVersion);
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
        cached('v2', () => openApiV2Document(registry, options.kubernetesVersion)) ?? {},
      );
    }
    if (pathname === '/openapi/v3' || pathname === '/openapi/v3/') {
      return sendJson(
        res,
        200,
        cached('v3', () => openApiV3Index(registry, options.kubernetesVersion)) ?? {},
      );
    }
    if (parts[0] === 'openapi' && parts[1] === 'v3') {
      const group = parts[2] === 'api' ? '' : (parts[3] ?? '');
      const version = parts[2] === 'api' ? (parts[3] ?? '') : (parts[4] ?? '');
      const document = cached(`v3/${group}/${version}`, () =>
        openApiV3Document(registry, group, version, options.kubernetesVersion),
      );
      if (document) return sendJson(res, 200, document);
    }
    throw new ApiError('NotFound', 'the server could not find the requested resource');
  }

  function writeOptions(query: URLSearchParams, req: ApiRequest, user: UserInfo): WriteOptions {
    const validation = query.get('fieldValidation') ?? 'Warn';
    if (validation !== 'Strict' && validation !== 'Warn' && validation !== 'Ignore') {
      throw badRequest(
        `fieldValidation: Unsupported value: ${JSON.stringify(validation)}: supported values: "Ignore", "Strict", "Warn"`,
      );
    }
    const dryRun = query.getAll('dryRun');
    if (dryRun.some((d) => d !== 'All'))
      throw badRequest(
        `dryRun: Unsupported value: ${JSON.stringify(dryRun[0])}: supported values: "All"`,
      );
    return {
      dryRun: dryRun.length > 0,
      fieldManager: query.get('fieldManager') ?? userAgentProduct(req),
      fieldValidation: validation,
      warnings: [],
      user,
    };
  }

  function respondObject(
    res: ApiResponse,
    req: ApiRequest,
    query: URLSearchParams,
    type: ResourceType,
    code: number,
    object: JsonObject,
    warnings: readonly string[] = [],
  ): void {
    const accept = req.headers['accept'];
    if (tableAccepted(accept)) {
      const table = toTable(type, [object], {
        resourceVersion: text((object['metadata'] as JsonObject)['resourceVersion'] ?? ''),
        includeObject: (query.get('includeObject') as IncludeObject | null) ?? 'Metadata',
        now: Date.now(),
      });
      return sendJson(res, code, table, 'application/json;as=Table;v=v1;g=meta.k8s.io', warnings);
    }
    if (metadataAccepted(accept))
      return sendJson(res, code, partialObjectMetadata(object), 'application/json', warnings);
    sendJson(res, code, object, 'application/json', warnings);
  }

  async function resourceRequest(
    req: ApiRequest,
    res: ApiResponse,
    path: ResourcePath,
    query: URLSearchParams,
    user: UserInfo,
  ): Promise<void> {
    const { method } = req;
    const verb = verbOf(method, path, query);
    const type = registry.get(path.group, path.version, path.resource);
    const namespace = path.namespace ?? '';
    authorizeOrThrow({
      user,
      verb,
      resourceRequest: true,
      apiGroup: path.group,
      apiVersion: path.version,
      resource: path.resource,
      subresource: path.subresource,
      namespace,
      name: path.name ?? (verb === 'create' && type?.kind === 'Namespace' ? '' : ''),
      path: '',
    });
    if (!type) throw new ApiError('NotFound', 'the server could not find the requested resource');
    // Every request for a deprecated CRD version carries its warning, whatever the verb.
    if (type.deprecationWarning !== undefined)
      res.setHeader('warning', [warningHeaderValue(type.deprecationWarning)]);
    if (
      type.namespaced &&
      path.namespace === undefined &&
      !['list', 'watch'].includes(verb) &&
      !type.virtual
    ) {
      throw new ApiError('NotFound', 'the server could not find the requested resource');
    }
    if (!type.namespaced && path.namespace !== undefined)
      throw new ApiError('NotFound', 'the server could not find the requested resource');
    const allowedSub =
      path.subresource === '' ||
      (path.subresource === 'status' && type.statusSubresource) ||
      (path.subresource === 'scale' && type.scale !== undefined) ||
      type.extraSubresources.includes(path.subresource);
    if (!allowedSub)
      throw new ApiError('NotFound', 'the server could not find the requested resource');
    if (!type.verbs.includes(verb) && path.subresource === '') {
      throw new ApiError(
        'MethodNotAllowed',
        `the server does not allow this method on the requested resource`,
      );
    }
    const name = path.name ?? '';

    switch (verb) {
      case 'get': {
        if (path.subresource === 'scale')
          return sendJson(res, 200, scaleOf(type, core.get(type, namespace, name)));
        return respondObject(res, req, query, type, 200, core.get(type, namespace, name));
      }
      case 'list': {
        const { labels, fields } = parseSelectors(query);
        const limit = query.get('limit');
        const resourceVersion = query.get('resourceVersion');
        if (resourceVersion !== null) parseResourceVersion(resourceVersion);
        const result = core.list(type, path.namespace, {
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
            includeObject: (query.get('includeObject') as IncludeObject | null) ?? 'Metadata',
            now: Date.now(),
          });
          return sendJson(res, 200, table, 'application/json;as=Table;v=v1;g=meta.k8s.io');
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
      case 'watch':
        return watch(req, res, type, path, query);
      case 'create': {
        const raw = await readBody(req);
        const body = decodeBody(raw, mediaType(req));
        const opts = writeOptions(query, req, user);
        if (type.virtual) {
          const answer = answerReview(
            type.kind,
            { ...body, apiVersion: apiVersionOf(type.group, type.version), kind: type.kind },
            user,
            namespace,
            options.rbac,
            options.authContext(),
          );
          return sendJson(res, 201, answer);
        }
        if (path.subresource === 'token')
          return sendJson(res, 201, tokenRequest(type, namespace, name, body));
        if (path.subresource !== '')
          throw new ApiError(
            'MethodNotAllowed',
            'the server does not allow this method on the requested resource',
          );
        const created = core.create(type, namespace, body, opts);
        if (core.store.journal) await core.store.flushed();
        return respondObject(res, req, query, type, 201, created, opts.warnings);
      }
      case 'update': {
        const raw = await readBody(req);
        const body = decodeBody(raw, mediaType(req));
        const opts = writeOptions(query, req, user);
        if (path.subresource === 'scale') {
          const updated = setScale(type, namespace, name, body, opts);
          if (core.store.journal) await core.store.flushed();
          return sendJson(res, 200, scaleOf(type, updated));
        }
        const before = core.find(type, namespace, name);
        const updated = core.update(type, namespace, name, body, opts, path.subresource);
        if (core.store.journal) await core.store.flushed();
        return respondObject(res, req, query, type, before ? 200 : 201, updated, opts.warnings);
      }
      case 'patch': {
        const raw = await readBody(req);
        const patchType = patchTypeOf(mediaType(req));
        const opts = { ...writeOptions(query, req, user), force: query.get('force') === 'true' };
        if (path.subresource === 'scale') {
          const current = scaleOf(type, core.get(type, namespace, name));
          const patch = JSON.parse(raw.toString('utf8')) as JsonValue;
          const spec = isJsonObject(patch) && isJsonObject(patch['spec']) ? patch['spec'] : {};
          const updated = setScale(
            type,
            namespace,
            name,
            { ...current, spec: { ...(current['spec'] as JsonObject), ...spec } },
            opts,
          );
          if (core.store.journal) await core.store.flushed();
          return sendJson(res, 200, scaleOf(type, updated));
        }
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
        return respondObject(res, req, query, type, existed ? 200 : 201, patched, opts.warnings);
      }
      case 'delete': {
        const raw = await readBody(req);
        const deleteOptions = parseDeleteOptions(query, raw, mediaType(req));
        const { object, deleted } = core.delete(type, namespace, name, deleteOptions);
        if (core.store.journal) await core.store.flushed();
        return respondObject(res, req, query, type, deleted ? 200 : 202, object);
      }
      case 'deletecollection': {
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
      default:
        throw new ApiError(
          'MethodNotAllowed',
          `the server does not allow this method on the requested resource`,
        );
    }
  }

  function parseDeleteOptions(
    query: URLSearchParams,
    raw: Buffer,
    contentType: string,
  ): DeleteOptions {
    let body: JsonObject = {};
    if (contentType === protobufMediaType && raw.length > 0)
      body = decodeProtobufBody(raw, 'DeleteOptions');
    else if (raw.length > 0 && raw.toString('utf8').trim() !== '')
      body = decodeBody(raw, 'application/json');
    let policy =
      query.get('propagationPolicy') ??
      (typeof body['propagationPolicy'] === 'string' ? body['propagationPolicy'] : undefined);
    const orphan =
      query.get('orphanDependents') ??
      (typeof body['orphanDependents'] === 'boolean' ? text(body['orphanDependents']) : undefined);
    if (policy === undefined && orphan === 'true') policy = 'Orphan';
    if (
      policy !== undefined &&
      policy !== 'Background' &&
      policy !== 'Foreground' &&
      policy !== 'Orphan'
    ) {
      throw badRequest(
        `propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`,
      );
    }
    const preconditions = isJsonObject(body['preconditions']) ? body['preconditions'] : {};
    const dryRun =
      query.getAll('dryRun').length > 0 ||
      (Array.isArray(body['dryRun']) && body['dryRun'].length > 0);
    return {
      propagationPolicy: policy,
      preconditions: {
        uid: typeof preconditions['uid'] === 'string' ? preconditions['uid'] : undefined,
        resourceVersion:
          typeof preconditions['resourceVersion'] === 'string'
            ? preconditions['resourceVersion']
            : undefined,
      },
      dryRun,
    };
  }

  function tokenRequest(
    type: ResourceType,
    namespace: string,
    name: string,
    body: JsonObject,
  ): JsonObject {
    const account = core.get(type, namespace, name);
    const spec = isJsonObject(body['spec']) ? body['spec'] : {};
    const seconds =
      typeof spec['expirationSeconds'] === 'number' ? spec['expirationSeconds'] : 3600;
    const issued = issueServiceAccountToken(
      options.signingKeyPem,
      { namespace, name, uid: text((account['metadata'] as JsonObject)['uid']) },
      seconds,
      new Date(),
    );
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: null },
      spec: { ...spec, expirationSeconds: seconds },
      status: { token: issued.token, expirationTimestamp: issued.expirationTimestamp },
    };
  }

  function jsonPathGet(object: JsonObject, path: string): JsonValue | undefined {
    let current: JsonValue | undefined = object;
    for (const part of path.split('.').filter((p) => p !== '')) {
      if (!isJsonObject(current)) return undefined;
      current = current[part];
    }
    return current;
  }

  function scaleOf(type: ResourceType, object: JsonObject): JsonObject {
    const mapping = type.scale;
    const m = object['metadata'] as JsonObject;
    const replicas = mapping ? jsonPathGet(object, mapping.specReplicasPath) : undefined;
    const statusReplicas = mapping ? jsonPathGet(object, mapping.statusReplicasPath) : undefined;
    const selector =
      mapping?.labelSelectorPath !== undefined
        ? jsonPathGet(object, mapping.labelSelectorPath)
        : undefined;
    const status: JsonObject = {
      replicas: typeof statusReplicas === 'number' ? statusReplicas : 0,
    };
    if (typeof selector === 'string') status['selector'] = selector;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: m['name'] ?? '',
        namespace: m['namespace'] ?? '',
        uid: m['uid'] ?? '',
        resourceVersion: m['resourceVersion'] ?? '',
        creationTimestamp: m['creationTimestamp'] ?? null,
      },
      spec: { replicas: typeof replicas === 'number' ? replicas : 0 },
      status,
    };
  }

  function setScale(
    type: ResourceType,
    namespace: string,
    name: string,
    scale: JsonObject,
    opts: WriteOptions,
  ): JsonObject {
    const mapping = type.scale;
    if (!mapping)
      throw new ApiError('NotFound', 'the server could not find the requested resource');
    const object = structuredClone(core.get(type, namespace, name));
    const spec = isJsonObject(scale['spec']) ? scale['spec'] : {};
    const parts = mapping.specReplicasPath.split('.').filter((p) => p !== '');
    let target: JsonObject = object;
    for (const part of parts.slice(0, -1)) {
      const next = target[part];
      if (isJsonObject(next)) target = next;
      else target = target[part] = {};
    }
    target[parts[parts.length - 1] ?? 'replicas'] =
      typeof spec['replicas'] === 'number' ? spec['replicas'] : 0;
    const m = isJsonObject(scale['metadata']) ? scale['metadata'] : {};
    (object['metadata'] as JsonObject)['resourceVersion'] =
      typeof m['resourceVersion'] === 'string' ? m['resourceVersion'] : '';
    return core.update(type, namespace, name, object, opts);
  }

  function watch(
    req: ApiRequest,
    res: ApiResponse,
    type: ResourceType,
    path: ResourcePath,
    query: URLSearchParams,
  ): void {
    const { labels, fields } = parseSelectors(query);
    const namedFields: FieldSelector =
      path.name !== undefined
        ? [...fields, { field: 'metadata.name', operator: 'Equals', value: path.name }]
        : fields;
    const from = parseResourceVersion(query.get('resourceVersion'));
    const timeout = query.get('timeoutSeconds');
    const table = tableAccepted(req.headers['accept']);
    const includeObject = (query.get('includeObject') as IncludeObject | null) ?? 'Metadata';
    res.start(200, {
      'content-type': table ? 'application/json;as=Table;v=v1;g=meta.k8s.io' : 'application/json',
      'cache-control': 'no-cache, private',
    });
    const handle = options.hub.open(
      {
        key: storageKey(type.group, type.resource),
        apiVersion: apiVersionOf(type.group, type.version),
        kind: type.kind,
        namespace: type.namespaced ? path.namespace : undefined,
        matches: (object) => core.matches(object, labels, namedFields),
        ...(table
          ? {
              render: (object: JsonObject) =>
                toTable(type, [object], {
                  resourceVersion: text(
                    (object['metadata'] as JsonObject)['resourceVersion'] ?? '',
                  ),
                  includeObject,
                  now: Date.now(),
                }),
            }
          : {}),
      },
      batchedSink(res),
      {
        fromResourceVersion: from,
        allowBookmarks: query.get('allowWatchBookmarks') === 'true',
        timeoutSeconds: timeout === null ? undefined : Number(timeout),
        bookmarkIntervalMs: options.bookmarkIntervalMs,
      },
    );
    res.onClose(() => handle.close());
  }

  /**
   * Authenticates a request. A connection authenticated by its client certificate alone (no
   * token, no impersonation) keeps its identity, so only such results are reused.
   */
  function authenticateRequest(req: ApiRequest): AuthenticationResult {
    let plain = req.headers['authorization'] === undefined;
    for (const header in req.headers) if (header.startsWith('impersonate-')) plain = false;
    if (plain) {
      const cached = certificateUsers.get(req.connection);
      if (cached) return cached;
    }
    const outcome = authenticate(
      {
        clientCertificate: peerCertificate(req),
        authorizationHeader: req.headers['authorization'],
        headers: req.distinctHeaders(),
      },
      options.authContext(),
    );
    if (plain && outcome.ok) certificateUsers.set(req.connection, outcome);
    return outcome;
  }

  async function handle(req: ApiRequest, res: ApiResponse): Promise<void> {
    const { pathname, query } = requestTarget(req.url);
    if (
      pathname === '/healthz' ||
      pathname === '/livez' ||
      pathname === '/readyz' ||
      pathname.startsWith('/healthz/') ||
      pathname.startsWith('/livez/') ||
      pathname.startsWith('/readyz/')
    ) {
      res.send(200, { 'content-type': 'text/plain; charset=utf-8' }, 'ok');
      return;
    }
    if (openPaths.has(pathname)) return sendJson(res, 200, versionInfo(options.kubernetesVersion));
    const outcome = authenticateRequest(req);
    if (!outcome.ok) {
      req.discardBody();
      throw new ApiError(outcome.reason, outcome.message);
    }
    const aggregated = options.aggregator?.serve({
      req,
      res,
      pathname,
      query,
      user: outcome.user,
      authorize: authorizeOrThrow,
    });
    if (aggregated !== undefined) return aggregated;
    const path = parseResourcePath(pathname);
    if (!path) return nonResource(req, res, pathname, outcome.user);
    await resourceRequest(req, res, path, query, outcome.user);
  }

  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof ApiError) return sendError(res, error);
      options.logger.error({ err: error, path: req.url, method: req.method }, 'request failed');
      sendError(res, internalError(error));
    });
  };
}
