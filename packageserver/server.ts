// The package server's HTTPS API: packages.operators.coreos.com/v1 as an aggregated API server
// serves it — discovery, list and get (JSON, or meta.k8s.io Table for kubectl get), watch, and
// the packagemanifests/icon subresource — for requests the aggregator forwards (see auth.ts).
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  authenticateFrontProxy,
  type DelegatingAuthorizer,
  type RequestHeaderConfig,
  type RequestUser,
} from './auth.js';
import {
  packageManifestKind,
  packagesApiVersion,
  packagesGroup,
  packagesResource,
  packagesVersion,
  type Json,
  type JsonMap,
} from './manifest.js';
import {
  toStatus,
  type Status,
  type StatusDetails,
  type StatusReason,
} from '../shared/kube/status.js';
import { PackageQueryError, parseQuery, visiblePackages, type PackageQuery } from './query.js';
import type { PackageView } from './view.js';

/** What the API server needs. */
export interface PackageApiOptions {
  view: PackageView;
  authorizer: Pick<DelegatingAuthorizer, 'authorize'>;
  requestHeader: RequestHeaderConfig;
  /** Serving certificate and key (PEM). */
  certPem: string;
  keyPem: string;
  globalNamespace: string;
  log: Logger;
  /** Listen address and port (0 = any free port). */
  host: string;
  port: number;
}

/** A running package API server. */
export interface PackageApiServer {
  /** host:port it listens on. */
  address: string;
  port: number;
  close(): Promise<void>;
}

const groupResource = `${packagesResource}.${packagesGroup}`;
const tableContentType = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** An answer in the form of a metav1.Status (the Status vocabulary of shared/kube/status.ts). */
class StatusError extends Error {
  readonly status: Status;
  constructor(reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'StatusError';
    this.status = toStatus(reason, message, details);
  }
}

function send(
  res: ServerResponse,
  code: number,
  body: Json,
  contentType = 'application/json',
): void {
  const payload = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-cache, private',
  });
  res.end(payload);
}

/** The APIResourceList of packages.operators.coreos.com/v1. */
export function packagesResourceList(): JsonMap {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: packagesApiVersion,
    resources: [
      {
        name: packagesResource,
        singularName: 'packagemanifest',
        namespaced: true,
        kind: packageManifestKind,
        verbs: ['get', 'list', 'watch'],
      },
      {
        name: `${packagesResource}/icon`,
        singularName: '',
        namespaced: true,
        kind: packageManifestKind,
        verbs: ['get'],
      },
    ],
  };
}

function apiGroup(): JsonMap {
  const version = { groupVersion: packagesApiVersion, version: packagesVersion };
  return { name: packagesGroup, versions: [version], preferredVersion: version };
}

/** Age as kubectl prints it (apimachinery's HumanDuration). */
export function humanDuration(seconds: number): string {
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${Math.floor(seconds)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10)
    return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${Math.floor(seconds % 60)}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

function metadataOf(manifest: JsonMap): JsonMap {
  return manifest['metadata'] as JsonMap;
}

/** A meta.k8s.io/v1 Table of PackageManifests: Name, Catalog (display name), Age, as upstream. */
export function packageTable(
  manifests: readonly JsonMap[],
  resourceVersion: string,
  includeObject: string,
  now: number,
): JsonMap {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: [
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: 'Name must be unique within a namespace.',
        priority: 0,
      },
      {
        name: 'Catalog',
        type: 'string',
        format: '',
        description: 'The source catalog for this package',
        priority: 0,
      },
      {
        name: 'Age',
        type: 'string',
        format: '',
        description:
          'CreationTimestamp is a timestamp representing the server time when this object was created.',
        priority: 0,
      },
    ],
    rows: manifests.map((manifest) => {
      const metadata = metadataOf(manifest);
      const status = manifest['status'] as JsonMap;
      const created = metadata['creationTimestamp'];
      const age =
        typeof created === 'string'
          ? humanDuration((now - Date.parse(created)) / 1000)
          : '<unknown>';
      const row: JsonMap = {
        cells: [metadata['name'] ?? '', status['catalogSourceDisplayName'] ?? '', age],
      };
      if (includeObject === 'Object') row['object'] = manifest;
      else if (includeObject !== 'None')
        row['object'] = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata };
      return row;
    }),
  };
}

/** A parsed request path of this API. */
interface ApiPath {
  namespace: string | undefined;
  name: string | undefined;
  subresource: string;
  watch: boolean;
}

function parsePath(pathname: string): ApiPath | 'discovery' | undefined {
  const prefix = `/apis/${packagesGroup}/${packagesVersion}`;
  if (pathname === prefix || pathname === `${prefix}/`) return 'discovery';
  if (!pathname.startsWith(`${prefix}/`)) return undefined;
  let parts = pathname
    .slice(prefix.length + 1)
    .split('/')
    .filter((p) => p !== '')
    .map((p) => decodeURIComponent(p));
  let watch = false;
  if (parts[0] === 'watch') {
    watch = true;
    parts = parts.slice(1);
  }
  let namespace: string | undefined;
  if (parts[0] === 'namespaces' && parts.length >= 3) {
    namespace = parts[1];
    parts = parts.slice(2);
  }
  const [resource, name, subresource, ...rest] = parts;
  if (resource !== packagesResource || rest.length > 0) return undefined;
  return { namespace, name, subresource: subresource ?? '', watch };
}

function notFound(): StatusError {
  return new StatusError('NotFound', 'the server could not find the requested resource');
}

function forbidden(user: RequestUser, verb: string, path: ApiPath, reason: string): StatusError {
  const subject = path.name === undefined ? groupResource : `${groupResource} "${path.name}"`;
  const resource =
    path.subresource === '' ? packagesResource : `${packagesResource}/${path.subresource}`;
  const scope =
    path.namespace === undefined ? 'at the cluster scope' : `in the namespace "${path.namespace}"`;
  return new StatusError(
    'Forbidden',
    `${subject} is forbidden: User "${user.username}" cannot ${verb} resource "${resource}" in API group "${packagesGroup}" ${scope}${reason === '' ? '' : `: ${reason}`}`,
    {
      ...(path.name === undefined ? {} : { name: path.name }),
      group: packagesGroup,
      kind: packagesResource,
    },
  );
}

/** Starts the HTTPS server. */
export async function startPackageApi(options: PackageApiOptions): Promise<PackageApiServer> {
  const { view, log } = options;
  const watches = new Set<() => void>();

  const query = (params: URLSearchParams, namespace: string | undefined): PackageQuery => {
    try {
      return parseQuery(params, namespace, options.globalNamespace);
    } catch (error) {
      if (error instanceof PackageQueryError) throw new StatusError('BadRequest', error.message);
      throw error;
    }
  };

  function get(
    req: IncomingMessage,
    res: ServerResponse,
    path: ApiPath,
    params: URLSearchParams,
  ): void {
    const name = path.name ?? '';
    // Upstream answers a get across all namespaces from the list of every namespace.
    const found = visiblePackages(view.catalogs(), {
      ...query(new URLSearchParams(), path.namespace),
      name,
    })[0];
    if (found === undefined) {
      throw new StatusError('NotFound', `${groupResource} "${name}" not found`, {
        name,
        group: packagesGroup,
        kind: packagesResource,
      });
    }
    if (path.subresource === 'icon') return sendIcon(req, res, found.record.icon, name);
    if (path.subresource !== '') throw notFound();
    if ((req.headers.accept ?? '').includes('as=Table')) {
      const table = packageTable(
        [found.manifest],
        String(view.generation),
        params.get('includeObject') ?? 'Metadata',
        Date.now(),
      );
      return send(res, 200, table, tableContentType);
    }
    send(res, 200, found.manifest);
  }

  function list(
    req: IncomingMessage,
    res: ServerResponse,
    path: ApiPath,
    params: URLSearchParams,
  ): void {
    const manifests = visiblePackages(view.catalogs(), query(params, path.namespace)).map(
      (p) => p.manifest,
    );
    const resourceVersion = String(view.generation);
    if ((req.headers.accept ?? '').includes('as=Table')) {
      const table = packageTable(
        manifests,
        resourceVersion,
        params.get('includeObject') ?? 'Metadata',
        Date.now(),
      );
      return send(res, 200, table, tableContentType);
    }
    send(res, 200, {
      kind: `${packageManifestKind}List`,
      apiVersion: packagesApiVersion,
      metadata: { resourceVersion },
      items: manifests,
    });
  }

  function watch(
    req: IncomingMessage,
    res: ServerResponse,
    path: ApiPath,
    params: URLSearchParams,
  ): void {
    const filter = query(params, path.namespace);
    if (path.name !== undefined) filter.name = path.name;
    const table = (req.headers.accept ?? '').includes('as=Table');
    const includeObject = params.get('includeObject') ?? 'Metadata';
    res.writeHead(200, {
      'Content-Type': table ? tableContentType : 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    res.flushHeaders();
    const render = (manifest: JsonMap, generation: number): Json => {
      const object: JsonMap = {
        ...manifest,
        metadata: { ...metadataOf(manifest), resourceVersion: String(generation) },
      };
      return table ? packageTable([object], String(generation), includeObject, Date.now()) : object;
    };
    // From a resourceVersion: the changes since that state (410 Expired when it is too old to
    // know); without one, every current package as ADDED first, as kube's watch does.
    const from = params.get('resourceVersion');
    const since = from === null || from === '' || from === '0' ? undefined : Number(from);
    const base =
      since === undefined ? [] : Number.isInteger(since) ? view.catalogsAt(since) : undefined;
    if (base === undefined) {
      const gone = new StatusError('Expired', `too old resource version: ${from ?? ''}`);
      res.end(`${JSON.stringify({ type: 'ERROR', object: gone.status })}\n`);
      return;
    }
    let seen = new Map(visiblePackages(base, filter).map((p) => [p.key, p.manifest]));
    const sendChanges = (generation: number): void => {
      const now = new Map(visiblePackages(view.catalogs(), filter).map((p) => [p.key, p.manifest]));
      const lines: string[] = [];
      const event = (type: string, manifest: JsonMap): string =>
        JSON.stringify({ type, object: render(manifest, generation) });
      for (const [key, manifest] of now) {
        const before = seen.get(key);
        if (before === undefined) lines.push(event('ADDED', manifest));
        else if (JSON.stringify(before) !== JSON.stringify(manifest))
          lines.push(event('MODIFIED', manifest));
      }
      for (const [key, manifest] of seen) if (!now.has(key)) lines.push(event('DELETED', manifest));
      seen = now;
      if (lines.length > 0) res.write(`${lines.join('\n')}\n`);
    };
    sendChanges(view.generation);
    const unsubscribe = view.subscribe((change) => sendChanges(change.generation));
    const timeout = Number(params.get('timeoutSeconds') ?? '1800');
    const timer = setTimeout(
      () => stop(),
      Math.max(1, Number.isFinite(timeout) ? timeout : 1800) * 1000,
    );
    const stop = (): void => {
      clearTimeout(timer);
      unsubscribe();
      watches.delete(stop);
      if (!res.writableEnded) res.end();
    };
    watches.add(stop);
    res.on('close', stop);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://packageserver');
    const pathname = url.pathname;
    if (['/healthz', '/livez', '/readyz'].includes(pathname)) {
      const ready = pathname !== '/readyz' || view.ready;
      res.writeHead(ready ? 200 : 503, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(ready ? 'ok' : 'catalogs not loaded yet');
      return;
    }
    const authentication = authenticateFrontProxy(req, options.requestHeader);
    if (!authentication.ok)
      throw new StatusError('Unauthorized', `Unauthorized: ${authentication.message}`);
    const user = authentication.user;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new StatusError(
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    }
    if (pathname === '/apis' || pathname === '/apis/') {
      return send(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [apiGroup()] });
    }
    if (pathname === `/apis/${packagesGroup}` || pathname === `/apis/${packagesGroup}/`) {
      return send(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup() });
    }
    const path = parsePath(pathname);
    if (path === 'discovery') return send(res, 200, packagesResourceList());
    if (path === undefined) throw notFound();
    const params = url.searchParams;
    const watching = path.watch || params.get('watch') === 'true' || params.get('watch') === '1';
    const verb = watching ? 'watch' : path.name === undefined ? 'list' : 'get';
    if (path.subresource !== '' && (path.subresource !== 'icon' || verb !== 'get'))
      throw notFound();
    const decision = await options.authorizer.authorize(user, {
      verb,
      namespace: path.namespace ?? '',
      resource: packagesResource,
      subresource: path.subresource,
      name: path.name ?? '',
      group: packagesGroup,
      version: packagesVersion,
    });
    if (!decision.allowed) throw forbidden(user, verb, path, decision.reason);
    if (verb === 'watch') return watch(req, res, path, params);
    if (verb === 'list') return list(req, res, path, params);
    return get(req, res, path, params);
  }

  const server: Server = createServer(
    {
      key: options.keyPem,
      cert: options.certPem,
      ca: options.requestHeader.clientCaPem,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        const failure =
          error instanceof StatusError
            ? error
            : new StatusError(
                'InternalError',
                `an error on the server has prevented the request from succeeding: ${error instanceof Error ? error.message : String(error)}`,
              );
        if (!(error instanceof StatusError))
          log.error({ err: error, path: req.url }, 'request failed');
        if (res.headersSent) {
          res.end();
          return;
        }
        send(res, failure.status.code, failure.status);
      });
    },
  );
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    address: `${options.host}:${port}`,
    port,
    close: async () => {
      for (const stop of [...watches]) stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

// Upstream's icon subresource: the default channel's first icon, or a generic one.
function sendIcon(
  req: IncomingMessage,
  res: ServerResponse,
  icon: { base64data: string; mediatype: string; channel: string; csv: string } | null,
  name: string,
): void {
  if (
    req.headers['if-none-match'] !== undefined &&
    new URL(req.url ?? '/', 'https://x').searchParams.get('resourceVersion')
  ) {
    res.writeHead(304);
    res.end();
    return;
  }
  const body = icon === null ? Buffer.from(defaultIcon) : Buffer.from(icon.base64data, 'base64');
  res.writeHead(200, {
    'Content-Type': icon === null ? 'image/svg+xml' : icon.mediatype,
    'Content-Length': body.length,
    Etag: icon === null ? '' : `"${name}.${icon.channel}.${icon.csv}"`,
  });
  res.end(body);
}

// A neutral placeholder: a grey ring around a box.
const defaultIcon =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><circle cx="32" cy="32" r="28" fill="none" stroke="#c8c8c8" stroke-width="6"/><rect x="22" y="22" width="20" height="20" rx="3" fill="#8d8d8f"/></svg>\n';
