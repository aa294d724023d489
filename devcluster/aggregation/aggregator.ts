// API aggregation, as kube-apiserver's kube-aggregator does it: an APIService with spec.service
// names a Service; its Endpoints give the backend's address; requests for /apis/<group>/<version>
// are authorized here, then proxied over TLS with the front-proxy client certificate and the
// user in X-Remote-User / X-Remote-Group (the backend trusts those headers because the
// certificate chains to the request-header CA published in kube-system/
// extension-apiserver-authentication). The group/version appears in /apis and in aggregated
// discovery (from the backend's APIResourceList), and the APIService's Available condition
// reports whether the backend answers its discovery document.
import type { OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import { nonResourceAttributes } from '../auth/index.js';
import type { AggregatedApis, AggregationRequest } from '../server/http/types.js';
import { connectionSpecificHeaders, type ApiResponse } from '../server/transport.js';
import { systemWrite, type ApiCore } from '../api/core.js';
import {
  aggregatedContentType,
  aggregatedDiscovery,
  aggregatedVersionAccepted,
  groupList,
} from '../discovery/documents.js';
import { ApiError } from '../api/errors.js';
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import { jsonText } from '../storage/serialization.js';
import { storageKey } from '../resources/registry.js';
import type { ChangeEvent } from '../storage/types.js';
import { backendOf, backendTlsOptions, fetchJson, resolveBackend } from './backends.js';
import { aggregatedItems, groupEntry } from './discovery.js';
import type { Availability, Backend, FrontProxyIdentity } from './types.js';

/** Common name of the front-proxy client certificate, as kubeadm names it. */
export const frontProxyCommonName = 'front-proxy-client';

const apiServicesKey = storageKey('apiregistration.k8s.io', 'apiservices');

/** The Available condition of an APIService with no spec.service, as kube-aggregator sets it. */
const localAvailability: Availability = {
  status: 'True',
  reason: 'Local',
  message: 'Local APIServices are always available',
};

/** Serves aggregated APIs for the devcluster (see the module comment). */
export class ApiAggregator implements AggregatedApis {
  /** Backends' APIResourceLists from their last successful check, by APIService name. */
  readonly #discovery = new Map<string, JsonObject>();
  #backendCache: Backend[] | undefined;
  #running = false;
  #again = false;
  #stopped = false;

  constructor(
    private readonly core: ApiCore,
    private readonly logger: Logger,
    private readonly frontProxy: FrontProxyIdentity,
    private readonly clusterCaPem: string,
    private readonly checkIntervalMs = 10_000,
  ) {}

  /** Publishes the request-header settings and starts checking backends; returns the stop function. */
  start(): () => void {
    this.#publishAuthenticationConfig();
    const unsubscribe = this.core.store.subscribe((event: ChangeEvent) => {
      if (event.key === apiServicesKey) this.#backendCache = undefined;
      if (event.key === apiServicesKey || event.key === 'services' || event.key === 'endpoints')
        this.#kick();
    });
    const interval = setInterval(() => this.#kick(), this.checkIntervalMs);
    this.#kick();
    return () => {
      this.#stopped = true;
      unsubscribe();
      clearInterval(interval);
    };
  }

  // One check at a time; a change during a check runs one more after it.
  #kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    // Off the caller's stack: store listeners run inside writes.
    setImmediate(() => {
      void this.#checkAll()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'APIService check failed'))
        .finally(() => {
          this.#running = false;
          if (this.#again) {
            this.#again = false;
            this.#kick();
          }
        });
    });
  }

  // kube-apiserver publishes this ConfigMap so aggregated servers know whom to trust.
  #publishAuthenticationConfig(): void {
    const type = this.core.typeOf('', 'configmaps');
    const data: JsonObject = {
      'client-ca-file': this.clusterCaPem,
      'requestheader-client-ca-file': this.frontProxy.caCertPem,
      'requestheader-allowed-names': JSON.stringify([frontProxyCommonName]),
      'requestheader-username-headers': JSON.stringify(['X-Remote-User']),
      'requestheader-group-headers': JSON.stringify(['X-Remote-Group']),
      'requestheader-extra-headers-prefix': JSON.stringify(['X-Remote-Extra-']),
    };
    const existing = this.core.find(type, 'kube-system', 'extension-apiserver-authentication');
    const body: JsonObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'extension-apiserver-authentication', namespace: 'kube-system' },
      data,
    };
    if (existing === undefined)
      this.core.create(type, 'kube-system', body, systemWrite('kube-apiserver'));
    else
      this.core.update(
        type,
        'kube-system',
        'extension-apiserver-authentication',
        { ...body, metadata: { ...(existing['metadata'] as JsonObject) } },
        systemWrite('kube-apiserver'),
      );
  }

  // Recomputed only after an APIService changes: routing asks on every /apis request.
  #backends(): Backend[] {
    this.#backendCache ??= this.core.store
      .list(apiServicesKey)
      .map(backendOf)
      .filter((b): b is Backend => b !== undefined);
    return this.#backendCache;
  }

  async #checkAll(): Promise<void> {
    if (this.#stopped) return;
    // kube-aggregator's local availability controller: kube-apiserver serves these itself.
    for (const apiService of this.core.store.list(apiServicesKey)) {
      const metadata = apiService['metadata'];
      if (backendOf(apiService) === undefined && isJsonObject(metadata))
        this.#recordAvailability(text(metadata['name']), localAvailability);
    }
    const backends = this.#backends();
    for (const name of [...this.#discovery.keys()])
      if (!backends.some((b) => b.name === name)) this.#discovery.delete(name);
    await Promise.all(backends.map((b) => this.#check(b)));
  }

  async #check(backend: Backend): Promise<void> {
    let availability: Availability;
    const resolution = resolveBackend(this.core.store, backend);
    if (!resolution.ok) {
      this.#discovery.delete(backend.name);
      availability = { status: 'False', reason: resolution.reason, message: resolution.message };
    } else {
      const path = `/apis/${backend.group}/${backend.version}`;
      try {
        const list = await fetchJson(this.frontProxy, backend, resolution, path);
        this.#discovery.set(backend.name, list);
        availability = { status: 'True', reason: 'Passed', message: 'all checks passed' };
      } catch (error) {
        this.#discovery.delete(backend.name);
        availability = {
          status: 'False',
          reason: 'FailedDiscoveryCheck',
          message: `failing or missing response from https://${resolution.host}:${resolution.port}${path}: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
    }
    if (!this.#stopped) this.#recordAvailability(backend.name, availability);
  }

  #recordAvailability(name: string, availability: Availability): void {
    const type = this.core.typeOf('apiregistration.k8s.io', 'apiservices');
    const current = this.core.find(type, '', name);
    if (current === undefined) return;
    const status = isJsonObject(current['status']) ? current['status'] : {};
    const conditions = Array.isArray(status['conditions'])
      ? status['conditions'].filter(isJsonObject)
      : [];
    const previous = conditions.find((c) => c['type'] === 'Available');
    if (
      previous !== undefined &&
      previous['status'] === availability.status &&
      previous['reason'] === availability.reason &&
      previous['message'] === availability.message
    )
      return;
    const condition: JsonObject = {
      type: 'Available',
      status: availability.status,
      lastTransitionTime:
        previous !== undefined && previous['status'] === availability.status
          ? (previous['lastTransitionTime'] ?? this.core.timestamp())
          : this.core.timestamp(),
      reason: availability.reason,
      message: availability.message,
    };
    try {
      this.core.update(
        type,
        '',
        name,
        {
          ...current,
          status: {
            ...status,
            conditions: [...conditions.filter((c) => c['type'] !== 'Available'), condition],
          },
        },
        systemWrite('kube-aggregator'),
        'status',
      );
    } catch (error) {
      if (
        error instanceof ApiError &&
        (error.reason === 'Conflict' || error.reason === 'NotFound')
      ) {
        this.#again = true;
        return;
      }
      throw error;
    }
  }

  /**
   * Answers the request if aggregation concerns it: /apis (local and aggregated groups),
   * /apis/<group> of an aggregated group, and anything under /apis/<group>/<version> of one.
   * Returns undefined, synchronously and cheaply, for requests the router serves itself.
   */
  serve(request: AggregationRequest): Promise<void> | undefined {
    const pathname = request.pathname;
    const backends = this.#backends();
    // The hot path: no aggregated API, or not under /apis.
    if (backends.length === 0 || !pathname.startsWith('/apis')) return undefined;
    const parts = pathname.split('/').filter((p) => p !== '');
    if (parts[0] !== 'apis') return undefined;
    if (parts.length === 1) return this.#serveGroupList(request, backends);
    const group = decodeURIComponent(parts[1] ?? '');
    const ofGroup = backends.filter((b) => b.group === group);
    if (ofGroup.length === 0 || this.core.registry.hasGroup(group)) return undefined;
    if (parts.length === 2) {
      this.#authorizeNonResource(request);
      sendJson(request.res, 200, {
        kind: 'APIGroup',
        apiVersion: 'v1',
        ...groupEntry(group, ofGroup),
      });
      return Promise.resolve();
    }
    const version = decodeURIComponent(parts[2] ?? '');
    const backend = ofGroup.find((b) => b.version === version);
    if (backend === undefined) return undefined;
    this.#authorizeProxied(request, group, version, parts.slice(3));
    const resolution = resolveBackend(this.core.store, backend);
    if (!resolution.ok)
      throw new ApiError('ServiceUnavailable', `service unavailable: ${resolution.message}`);
    return this.#proxy(request, backend, resolution);
  }

  #authorizeNonResource(request: AggregationRequest): void {
    request.authorize(nonResourceAttributes(request.user, 'get', request.pathname));
  }

  // kube-apiserver authorizes aggregated requests like its own before proxying them.
  #authorizeProxied(
    request: AggregationRequest,
    group: string,
    version: string,
    rest: string[],
  ): void {
    if (rest.length === 0) return this.#authorizeNonResource(request);
    let parts = rest.map((p) => decodeURIComponent(p));
    const { method } = request.req;
    let watch = request.query.get('watch') === 'true' || request.query.get('watch') === '1';
    if (parts[0] === 'watch') {
      watch = true;
      parts = parts.slice(1);
    }
    let namespace = '';
    if (parts[0] === 'namespaces' && parts.length >= 3) {
      namespace = parts[1] ?? '';
      parts = parts.slice(2);
    }
    const [resource = '', name = '', subresource = ''] = parts;
    const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };
    const verb =
      method === 'GET' || method === 'HEAD'
        ? watch
          ? 'watch'
          : name === ''
            ? 'list'
            : 'get'
        : method === 'DELETE'
          ? name === ''
            ? 'deletecollection'
            : 'delete'
          : (verbs[method] ?? method.toLowerCase());
    request.authorize({
      user: request.user,
      verb,
      resourceRequest: true,
      apiGroup: group,
      apiVersion: version,
      resource,
      subresource,
      namespace,
      name,
      path: '',
    });
  }

  #serveGroupList(request: AggregationRequest, all: Backend[]): Promise<void> | undefined {
    const backends = all.filter((b) => !this.core.registry.hasGroup(b.group));
    if (backends.length === 0) return undefined;
    this.#authorizeNonResource(request);
    const aggregated = aggregatedVersionAccepted(request.req.headers['accept']);
    if (aggregated !== undefined) {
      const document = aggregatedDiscovery(this.core.registry, false, aggregated);
      const items = Array.isArray(document['items']) ? [...document['items']] : [];
      items.push(...aggregatedItems(backends, this.#discovery));
      sendJson(request.res, 200, { ...document, items }, aggregatedContentType(aggregated));
      return Promise.resolve();
    }
    const document = groupList(this.core.registry);
    const groups = Array.isArray(document['groups']) ? [...document['groups']] : [];
    for (const group of [...new Set(backends.map((b) => b.group))].sort())
      groups.push(
        groupEntry(
          group,
          backends.filter((b) => b.group === group),
        ),
      );
    sendJson(request.res, 200, { ...document, groups });
    return Promise.resolve();
  }

  #proxy(
    request: AggregationRequest,
    backend: Backend,
    target: { host: string; port: number },
  ): Promise<void> {
    const { req, res, pathname, query, user } = request;
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      if (
        name === 'authorization' ||
        name.startsWith(':') ||
        connectionSpecificHeaders.has(name) ||
        name.startsWith('impersonate-') ||
        name.startsWith('x-remote-')
      )
        continue;
      headers[name] = value;
    }
    headers['x-remote-user'] = user.username;
    headers['x-remote-group'] = user.groups;
    for (const [key, values] of Object.entries(user.extra ?? {}))
      headers[`x-remote-extra-${encodeURIComponent(key).toLowerCase()}`] = values;
    return new Promise((resolve, reject) => {
      const upstream = httpsRequest(
        {
          ...backendTlsOptions(this.frontProxy, backend, target),
          method: req.method,
          path: query.size === 0 ? pathname : `${pathname}?${query.toString()}`,
          headers,
        },
        (answer) => {
          const responseHeaders: OutgoingHttpHeaders = {};
          for (const [name, value] of Object.entries(answer.headers))
            if (value !== undefined && !connectionSpecificHeaders.has(name))
              responseHeaders[name] = value;
          res.start(answer.statusCode ?? 502, responseHeaders);
          answer.pipe(res.writable);
          answer.on('end', () => resolve());
          answer.on('error', reject);
        },
      );
      upstream.on('error', (error) => {
        this.logger.warn({ err: error, apiService: backend.name }, 'aggregated API request failed');
        if (res.headersSent) {
          res.end();
          resolve();
        } else reject(new ApiError('ServiceUnavailable', `service unavailable: ${error.message}`));
      });
      res.onClose(() => upstream.destroy());
      req.body.pipe(upstream);
    });
  }
}

function sendJson(
  res: ApiResponse,
  code: number,
  body: JsonValue,
  contentType = 'application/json',
): void {
  const payload = jsonText(body);
  res.send(
    code,
    {
      'content-type': contentType,
      'content-length': String(Buffer.byteLength(payload)),
      'cache-control': 'no-cache, private',
    },
    payload,
  );
}
