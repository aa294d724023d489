// The backends of API aggregation: what an APIService names (a Service and port), where the
// Service's Endpoints say it answers (as kube's service resolver finds it), and the TLS
// connection to it with the front-proxy client certificate.
import { request as httpsRequest } from 'node:https';
import { isJsonObject, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import type { PrinterColumn, ResourceType } from '../resources/types.js';
import type { ObjectStore } from '../storage/store.js';
import type { Backend, FrontProxyIdentity, Resolution } from './types.js';

// A string field as it is, anything else as "" (unlike json.ts text(), which prints numbers).
function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

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

/** The backend an APIService names, or undefined when it has no spec.service (a local API). */
export function backendOf(apiService: JsonObject): Backend | undefined {
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

/** The Service's Endpoints address for a backend, as kube's service resolver finds it. */
export function resolveBackend(store: ObjectStore, backend: Backend): Resolution {
  const { namespace, name, port } = backend.service;
  const service = store.get('services', namespace, name);
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
  const endpoints = store.get('endpoints', namespace, name);
  const subsets =
    endpoints !== undefined && Array.isArray(endpoints['subsets']) ? endpoints['subsets'] : [];
  for (const subset of subsets.filter(isJsonObject)) {
    const addresses = Array.isArray(subset['addresses'])
      ? subset['addresses'].filter(isJsonObject)
      : [];
    const subsetPorts = Array.isArray(subset['ports']) ? subset['ports'].filter(isJsonObject) : [];
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

/** A backend's JSON document, asked for as the aggregator itself (a system:masters identity). */
export function fetchJson(
  frontProxy: FrontProxyIdentity,
  backend: Backend,
  target: { host: string; port: number },
  path: string,
): Promise<JsonObject> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        ...backendTlsOptions(frontProxy, backend, target),
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

/** TLS options of a connection to a backend, with the front-proxy client certificate. */
export function backendTlsOptions(
  frontProxy: FrontProxyIdentity,
  backend: Backend,
  target: { host: string; port: number },
) {
  return {
    host: target.host,
    port: target.port,
    // The backend's certificate names the Service (<name>.<namespace>.svc), as kube checks it.
    servername: `${backend.service.name}.${backend.service.namespace}.svc`,
    ...(backend.caBundlePem === undefined ? {} : { ca: backend.caBundlePem }),
    rejectUnauthorized: !backend.insecure,
    cert: frontProxy.clientCertPem,
    key: frontProxy.clientKeyPem,
  };
}
