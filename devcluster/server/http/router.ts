// The HTTP front end: health and version paths, authentication, aggregated APIs, discovery and
// OpenAPI, and resource requests — authorized, checked against the served type (scope,
// subresource, verb) and handed to the handler of their verb.
import { ApiError, internalError } from '../../api/errors.js';
import type { JsonValue } from '../../../shared/kube/json.js';
import { versionInfo } from '../../discovery/documents.js';
import type { UserInfo } from '../../auth/index.js';
import type { ApiRequest, ApiResponse } from '../transport.js';
import { authenticateRequest, authorizeOrThrow } from './access.js';
import { sendError, sendJson, warningHeaderValue } from './answers.js';
import { create } from './handlers/create.js';
import { remove } from './handlers/delete.js';
import { deleteCollection } from './handlers/deletecollection.js';
import { discoveryHandler } from './handlers/discovery.js';
import { get } from './handlers/get.js';
import { list } from './handlers/list.js';
import { patch } from './handlers/patch.js';
import { update } from './handlers/update.js';
import { watch } from './handlers/watch.js';
import { parseResourcePath, readBody, requestTarget, verbOf } from './request.js';
import type {
  FaultAction,
  FaultAdmin,
  FrontEndOptions,
  ResourceHandler,
  ResourcePath,
  ResourceRequest,
  ResourceVerb,
} from './types.js';

/** The handler of each verb. */
const handlers: Readonly<Record<Exclude<ResourceVerb, ''>, ResourceHandler>> = {
  get,
  list,
  watch,
  create,
  update,
  patch,
  delete: remove,
  deletecollection: deleteCollection,
};

const openPaths = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

function notFound(): ApiError {
  return new ApiError('NotFound', 'the server could not find the requested resource');
}

function methodNotAllowed(): ApiError {
  return new ApiError(
    'MethodNotAllowed',
    `the server does not allow this method on the requested resource`,
  );
}

/** Authorizes a resource request and checks it against the served type, then runs its verb's handler. */
function resourceRequest(
  server: FrontEndOptions,
  req: ApiRequest,
  res: ApiResponse,
  path: ResourcePath,
  query: URLSearchParams,
  user: UserInfo,
): void | Promise<void> {
  const verb = verbOf(req.method, path, query);
  const type = server.core.registry.get(path.group, path.version, path.resource);
  const namespace = path.namespace ?? '';
  authorizeOrThrow(
    {
      user,
      verb,
      resourceRequest: true,
      apiGroup: path.group,
      apiVersion: path.version,
      resource: path.resource,
      subresource: path.subresource,
      namespace,
      name: path.name ?? '',
      path: '',
    },
    server.rbac,
  );
  if (!type) throw notFound();
  // Every request for a deprecated CRD version carries its warning, whatever the verb.
  if (type.deprecationWarning !== undefined)
    res.setHeader('warning', [warningHeaderValue(type.deprecationWarning)]);
  const scoped = path.namespace !== undefined || verb === 'list' || verb === 'watch';
  if (type.namespaced && !scoped && !type.virtual) throw notFound();
  if (!type.namespaced && path.namespace !== undefined) throw notFound();
  const allowedSub =
    path.subresource === '' ||
    (path.subresource === 'status' && type.statusSubresource) ||
    (path.subresource === 'scale' && type.scale !== undefined) ||
    type.extraSubresources.includes(path.subresource);
  if (!allowedSub) throw notFound();
  if (!type.verbs.includes(verb) && path.subresource === '') throw methodNotAllowed();
  if (verb === '') throw methodNotAllowed();
  const request: ResourceRequest = {
    req,
    res,
    path,
    query,
    user,
    type,
    namespace,
    name: path.name ?? '',
    server,
  };
  return handlers[verb](request);
}

// The fault admin endpoint: system:masters only, a JSON body in and out.
async function faultAdmin(
  admin: FaultAdmin,
  req: ApiRequest,
  res: ApiResponse,
  pathname: string,
  user: UserInfo,
): Promise<void> {
  if (!user.groups.includes('system:masters')) {
    req.discardBody();
    throw new ApiError('Forbidden', `user "${user.username}" may not inject faults`);
  }
  const text = (await readBody(req)).toString('utf8');
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new ApiError('BadRequest', 'the body is not JSON');
  }
  const answer = admin.answer(req.method, pathname, body);
  sendJson(res, answer.code, answer.body as JsonValue);
}

const faultAnswers = {
  429: ['TooManyRequests', 'Too many requests, please try again later.'],
  500: ['InternalError', 'Internal error occurred: injected fault'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
} as const;

/**
 * Applies an injected fault; true when the request is thereby handled (answered, dropped or
 * held), false when it goes on (after a delay).
 */
async function injectFault(
  server: FrontEndOptions,
  req: ApiRequest,
  res: ApiResponse,
  action: FaultAction,
): Promise<boolean> {
  switch (action.kind) {
    case 'delay':
      await new Promise((resolve) => setTimeout(resolve, action.ms));
      return false;
    case 'drop':
      req.discardBody();
      req.tlsSocket.destroy();
      return true;
    case 'stall':
      req.discardBody();
      res.start(200, { 'content-type': 'application/json' });
      server.faults?.hold(res);
      return true;
    case 'answer': {
      req.discardBody();
      const [reason, message] = faultAnswers[action.code];
      const seconds = action.retryAfterSeconds;
      if (seconds !== undefined) res.setHeader('retry-after', String(seconds));
      sendError(
        res,
        new ApiError(reason, message, seconds === undefined ? {} : { retryAfterSeconds: seconds }),
      );
      return true;
    }
  }
}

/**
 * One debug line per request once it is over, as kube-apiserver's HTTP log at -v=3: what a
 * client asked, what it got and how long it took (watches log when they end).
 */
function logWhenDone(logger: FrontEndOptions['logger'], req: ApiRequest, res: ApiResponse): void {
  const started = performance.now();
  res.onClose(() =>
    logger.debug(
      {
        verb: req.method,
        uri: req.url,
        code: res.statusCode,
        ms: Math.round((performance.now() - started) * 10) / 10,
        userAgent: req.headers['user-agent'],
      },
      'request',
    ),
  );
}

/** The API server's HTTP request listener. */
export function createRequestListener(
  server: FrontEndOptions,
): (req: ApiRequest, res: ApiResponse) => void {
  const discovery = discoveryHandler(server);
  const authorize = (attributes: Parameters<typeof authorizeOrThrow>[0]): void =>
    authorizeOrThrow(attributes, server.rbac);

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
    if (openPaths.has(pathname)) return sendJson(res, 200, versionInfo(server.kubernetesVersion));
    const outcome = authenticateRequest(req, server.authContext);
    if (!outcome.ok) {
      req.discardBody();
      throw new ApiError(outcome.reason, outcome.message);
    }
    if (pathname.startsWith('/devcluster/') && server.faultAdmin !== undefined)
      return faultAdmin(server.faultAdmin, req, res, pathname, outcome.user);
    const aggregated = server.aggregator?.serve({
      req,
      res,
      pathname,
      query,
      user: outcome.user,
      authorize,
    });
    if (aggregated !== undefined) return aggregated;
    const path = parseResourcePath(pathname);
    if (!path) return discovery(req, res, pathname, outcome.user);
    const action = server.faults?.actionFor({
      verb: verbOf(req.method, path, query),
      group: path.group,
      resource: path.resource,
      namespace: path.namespace ?? '',
      userAgent: String(req.headers['user-agent'] ?? ''),
    });
    if (action !== undefined && (await injectFault(server, req, res, action))) return;
    await resourceRequest(server, req, res, path, query, outcome.user);
  }

  const logRequests = server.logger.isLevelEnabled('debug');
  return (req, res) => {
    if (logRequests) logWhenDone(server.logger, req, res);
    handle(req, res).catch((error: unknown) => {
      if (error instanceof ApiError) return sendError(res, error);
      server.logger.error({ err: error, path: req.url, method: req.method }, 'request failed');
      sendError(res, internalError(error));
    });
  };
}
