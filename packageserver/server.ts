// The package server's HTTPS API: packages.operators.coreos.com/v1 as an aggregated API server
// serves it — discovery, list and get (JSON, or meta.k8s.io Table for kubectl get), watch, and
// the packagemanifests/icon subresource — for requests the aggregator forwards (see auth.ts).
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  apiGroup,
  groupResource,
  packagesResourceList,
  parsePath,
  type ApiPath,
} from './api-paths.js';
import { forbidden, notFound, send, StatusError } from './answers.js';
import {
  authenticateFrontProxy,
  type DelegatingAuthorizer,
  type RequestHeaderConfig,
} from './auth.js';
import { sendIcon } from './icon.js';
import {
  packageManifestKind,
  packagesApiVersion,
  packagesGroup,
  packagesResource,
  packagesVersion,
} from './manifest.js';
import { servePackageWatch } from './manifest-watch.js';
import { PackageQueryError, parseQuery, visiblePackages, type PackageQuery } from './query.js';
import { packageTable, tableContentType } from './table.js';
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
    servePackageWatch(req, res, params, filter, view, watches);
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
