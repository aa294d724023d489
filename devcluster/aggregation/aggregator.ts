// API aggregation, as kube-apiserver's kube-aggregator does it: an APIService with spec.service
// names a Service; its Endpoints give the backend's address; requests for /apis/<group>/<version>
// are authorized here, then proxied over TLS with the front-proxy client certificate and the
// user in X-Remote-User / X-Remote-Group (the backend trusts those headers because the
// certificate chains to the request-header CA published in kube-system/
// extension-apiserver-authentication). The group/version appears in /apis and in aggregated
// discovery (from the backend's APIResourceList), and the APIService's Available condition
// reports whether the backend answers its discovery document.
import { request as httpsRequest } from 'node:https';
import type { OutgoingHttpHeaders } from 'node:http';
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
import { isJsonObject, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import { jsonText } from '../storage/serialization.js';
import { storageKey } from '../resources/registry.js';
import type { PrinterColumn, ResourceType } from '../resources/types.js';
import type { ChangeEvent } from '../storage/types.js';

/** The front proxy's identity: its client certificate and the CA that signed it. */
export interface FrontProxyIdentity {
  caCertPem: string;
  clientCertPem: string;
  clientKeyPem: string;
}

/** Common name of the front-proxy client certificate, as kubeadm names it. */
export const frontProxyCommonName = 'front-proxy-client';

/** The v1 Endpoints kind (kube-apiserver serves it; aggregation resolves Services through it). */
export function endpointsResourceType(): ResourceType {
  const endpointsColumn: PrinterColumn = {
    name: 'Endpoints',
    type: 'string',
    cell: (o) => {
      const subsets = o['subsets'];
      const out: string[] = [];
      for (const subset of Array.isArray(subsets) ? subsets.filter(isJsonObject) : []) {
        const addresses = Array.isArray(subset['addresses']) ? subset['addresses'] : [];
        const ports = Array.isArray(subset['ports']) ? subset['ports'] : [];
        for (const a of addresses.filter(isJsonObject))
          for (const p of ports.filter(isJsonObject))
            out.push(`${text(a['ip'])}:${typeof p['port'] === 'number' ? p['port'] : ''}`);
      }
      return out.length === 0 ? '<none>' : out.join(',');
    },
  };
  return {
    group: '',
    version: 'v1',
    resource: 'endpoints',
    kind: 'Endpoints',
    listKind: 'EndpointsList',
    singular: 'endpoints',
    namespaced: true,
    shortNames: ['ep'],
    categories: [],
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    statusSubresource: false,
    extraSubresources: [],
    hasGeneration: false,
    virtual: false,
    columns: [endpointsColumn],
    storageVersion: 'v1',
  };
}

/** One registered backend. */
interface Backend {
  name: string;
  group: string;
  version: string;
  service: { namespace: string; name: string; port: number };
  caBundlePem: string | undefined;
  insecure: boolean;
  groupPriorityMinimum: number;
  versionPriority: number;
}

/** Where a backend answers, or why it does not. */
type Resolution =
  { ok: true; host: string; port: number } | { ok: false; reason: string; message: string };

/** The Available condition of an APIService. */
interface Availability {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

const apiServicesKey = storageKey('apiregistration.k8s.io', 'apiservices');

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function backendOf(apiService: JsonObject): Backend | undefined {
  const spec = isJsonObject(apiService['spec']) ? apiService['spec'] : {};
  const service = spec['service'];
  if (!isJsonObject(service)) return undefined;
  const caBundle = text(spec['caBundle']);
  return {
    name: text((apiService['metadata'] as JsonObject)['name']),
    group: text(spec['group']),
    version: text(spec['version']),
    service: {
      namespace: text(service['namespace']),
      name: text(service['name']),
      port: typeof service['port'] === 'number' ? service['port'] : 443,
    },
    caBundlePem: caBundle === '' ? undefined : Buffer.from(caBundle, 'base64').toString('utf8'),
    insecure: spec['insecureSkipTLSVerify'] === true,
    groupPriorityMinimum:
      typeof spec['groupPriorityMinimum'] === 'number' ? spec['groupPriorityMinimum'] : 0,
    versionPriority: typeof spec['versionPriority'] === 'number' ? spec['versionPriority'] : 0,
  };
}

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

  /** The Service's Endpoints address for a backend, as kube's service resolver finds it. */
  #resolve(backend: Backend): Resolution {
    const { namespace, name, port } = backend.service;
    const service = this.core.store.get('services', namespace, name);
    if (service === undefined)
      return {
        ok: false,
        reason: 'ServiceNotFound',
        message: `service/${name} in "${namespace}" is not present`,
      };
    const ports =
      isJsonObject(service['spec']) && Array.isArray(service['spec']['ports'])
        ? service['spec']['ports']
        : [];
    const servicePort = ports.filter(isJsonObject).find((p) => p['port'] === port);
    if (servicePort === undefined) {
      return {
        ok: false,
        reason: 'ServicePortError',
        message: `service/${name} in "${namespace}" is not listening on port ${port}`,
      };
    }
    const portName = text(servicePort['name']);
    const targetPort = servicePort['targetPort'] ?? port;
    const endpoints = this.core.store.get('endpoints', namespace, name);
    const subsets =
      endpoints !== undefined && Array.isArray(endpoints['subsets']) ? endpoints['subsets'] : [];
    for (const subset of subsets.filter(isJsonObject)) {
      const addresses = Array.isArray(subset['addresses'])
        ? subset['addresses'].filter(isJsonObject)
        : [];
      const subsetPorts = Array.isArray(subset['ports'])
        ? subset['ports'].filter(isJsonObject)
        : [];
      const match = subsetPorts.find((p) =>
        portName !== ''
          ? text(p['name']) === portName
          : p['port'] === targetPort || subsetPorts.length === 1,
      );
      const address = addresses[0];
      if (address !== undefined && match !== undefined && typeof match['port'] === 'number')
        return { ok: true, host: text(address['ip']), port: match['port'] };
    }
    return {
      ok: false,
      reason: 'MissingEndpoints',
      message: `endpoints for service/${name} in "${namespace}" have no addresses with port name "${portName}"`,
    };
  }

  async #checkAll(): Promise<void> {
    if (this.#stopped) return;
    const backends = this.#backends();
    for (const name of [...this.#discovery.keys()])
      if (!backends.some((b) => b.name === name)) this.#discovery.delete(name);
    await Promise.all(backends.map((b) => this.#check(b)));
  }

  async #check(backend: Backend): Promise<void> {
    let availability: Availability;
    const resolution = this.#resolve(backend);
    if (!resolution.ok) {
      this.#discovery.delete(backend.name);
      availability = { status: 'False', reason: resolution.reason, message: resolution.message };
    } else {
      const path = `/apis/${backend.group}/${backend.version}`;
      try {
        const list = await this.#fetchJson(backend, resolution, path);
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

  // The availability check asks as the aggregator itself (a system:masters identity).
  #fetchJson(
    backend: Backend,
    target: { host: string; port: number },
    path: string,
  ): Promise<JsonObject> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          ...this.#tlsOptions(backend, target),
          method: 'GET',
          path,
          headers: {
            accept: 'application/json',
            'x-remote-user': 'system:kube-aggregator',
            'x-remote-group': ['system:masters', 'system:authenticated'],
          },
          timeout: 5_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
              reject(new Error(`bad status from ${path}: ${res.statusCode ?? 0}`));
              return;
            }
            try {
              const parsed = JSON.parse(body) as JsonValue;
              if (!isJsonObject(parsed)) throw new Error('not a JSON object');
              resolve(parsed);
            } catch (error) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  #tlsOptions(backend: Backend, target: { host: string; port: number }) {
    return {
      host: target.host,
      port: target.port,
      // The backend's certificate names the Service (<name>.<namespace>.svc), as kube checks it.
      servername: `${backend.service.name}.${backend.service.namespace}.svc`,
      ...(backend.caBundlePem === undefined ? {} : { ca: backend.caBundlePem }),
      rejectUnauthorized: !backend.insecure,
      cert: this.frontProxy.clientCertPem,
      key: this.frontProxy.clientKeyPem,
    };
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
    const resolution = this.#resolve(backend);
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
      items.push(...this.#aggregatedItems(backends));
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

  // APIGroupDiscovery entries for groups whose backends answered their last check.
  #aggregatedItems(backends: Backend[]): JsonObject[] {
    const items: JsonObject[] = [];
    for (const group of [...new Set(backends.map((b) => b.group))].sort()) {
      const versions: JsonObject[] = [];
      for (const backend of sortByVersionPriority(backends.filter((b) => b.group === group))) {
        const list = this.#discovery.get(backend.name);
        if (list === undefined) continue;
        const resources = Array.isArray(list['resources'])
          ? list['resources'].filter(isJsonObject)
          : [];
        versions.push({
          version: backend.version,
          resources: resources
            .filter((r) => !text(r['name']).includes('/'))
            .map((r) => {
              const name = text(r['name']);
              const entry: JsonObject = {
                resource: name,
                responseKind: { group, version: backend.version, kind: text(r['kind']) },
                scope: r['namespaced'] === true ? 'Namespaced' : 'Cluster',
                singularResource: text(r['singularName']) || name,
                verbs: Array.isArray(r['verbs']) ? r['verbs'] : [],
              };
              if (Array.isArray(r['shortNames']) && r['shortNames'].length > 0)
                entry['shortNames'] = r['shortNames'];
              if (Array.isArray(r['categories']) && r['categories'].length > 0)
                entry['categories'] = r['categories'];
              const subresources = resources
                .filter((s) => text(s['name']).startsWith(`${name}/`))
                .map((s) => ({
                  subresource: text(s['name']).slice(name.length + 1),
                  responseKind: { group, version: backend.version, kind: text(s['kind']) },
                  verbs: Array.isArray(s['verbs']) ? s['verbs'] : [],
                }));
              if (subresources.length > 0) entry['subresources'] = subresources;
              return entry;
            }),
          freshness: 'Current',
        });
      }
      if (versions.length > 0)
        items.push({ metadata: { name: group, creationTimestamp: null }, versions });
    }
    return items;
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
          ...this.#tlsOptions(backend, target),
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

function sortByVersionPriority(backends: Backend[]): Backend[] {
  return [...backends].sort(
    (a, b) => b.versionPriority - a.versionPriority || a.version.localeCompare(b.version),
  );
}

function groupEntry(group: string, backends: Backend[]): JsonObject {
  const versions = sortByVersionPriority(backends).map((b) => ({
    groupVersion: `${group}/${b.version}`,
    version: b.version,
  }));
  return { name: group, versions, preferredVersion: versions[0] ?? {} };
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
