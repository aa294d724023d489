// Public entry point of the devcluster: an embedded Kubernetes-compatible API server over HTTPS.
import { text } from './values.js';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer as createHttp1Server, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import {
  bootstrapRbac,
  createClusterCertificates,
  createServiceAccountSigningKey,
  issueServiceAccountToken,
  type AuthenticationContext,
  type ClusterCertificates,
  type RbacSource,
  type UserInfo,
} from './auth/index.js';
import { ApiAggregator, endpointsResourceType, frontProxyCommonName } from './aggregator.js';
import { ApiCore, systemWrite, type Admission } from './core.js';
import { createCertificateAuthority, issueCertificate } from '../shared/kube/certificates.js';
import { checkRbacEscalation } from './rbac-admission.js';
import { GarbageCollector } from './controllers/garbage-collector.js';
import {
  ClusterRoleAggregationController,
  CrdCleanupController,
  NamespaceController,
  TokenSecretController,
} from './controllers/lifecycle.js';
import { WorkloadControllers } from './controllers/workloads.js';
import { Faults, type FaultHooks } from './faults.js';
import { createRequestListener } from './http.js';
import { Http1Exchange, Http2Exchange } from './transport.js';
import { FileJournal, recoverStore } from './journal.js';
import type { JsonObject } from '../shared/kube/json.js';
import { renderKubeconfig } from './kubeconfig.js';
import { builtinResourceTypes, ResourceRegistry, storageKey } from './resources.js';
import { ObjectStore } from './store.js';
import { WatchHub } from './watch.js';

export type { FaultHooks, ObjectTarget } from './faults.js';
export { failAnnotation } from './controllers/workloads.js';

/** Options of startDevcluster. */
export interface DevclusterOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Listen address (default 127.0.0.1). */
  host?: string;
  /** Directory for durable storage and certificates; in-memory when absent. */
  dataDir?: string;
  /** Delay before simulated pods become Ready (default 1000 ms; 0 allowed). */
  podReadyDelayMs?: number;
  /** Version reported by /version (default v1.30.6). */
  kubernetesVersion?: string;
  /** Logger (default: silent). */
  logger?: Logger;
  /** Interval of watch bookmarks when clients allow them (default 5000 ms). */
  bookmarkIntervalMs?: number;
  /** How often aggregated APIServices are checked besides on changes (default 10000 ms). */
  apiServiceCheckIntervalMs?: number;
}

/** A running devcluster. */
export interface Devcluster {
  /** https://host:port */
  url: string;
  port: number;
  /** Admin kubeconfig (YAML) with the cluster CA and an admin client certificate; context "olmq-devcluster". */
  kubeconfig(): string;
  /** Writes the admin kubeconfig to a file (mode 0600). */
  writeKubeconfig(path: string): Promise<void>;
  /** Fault injection for failure tests. */
  faults: FaultHooks;
  /** Stops serving, ends watches and controllers, flushes storage. */
  close(): Promise<void>;
}

/** Default Kubernetes version reported by /version. */
export const defaultKubernetesVersion = 'v1.30.6';

const initialNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

interface Secrets {
  certificates: ClusterCertificates;
  signingKeyPem: string;
}

async function loadSecrets(dataDir: string | undefined, hosts: string[]): Promise<Secrets> {
  const file = dataDir === undefined ? undefined : join(dataDir, 'pki.json');
  if (file !== undefined && existsSync(file))
    return JSON.parse(readFileSync(file, 'utf8')) as Secrets;
  const secrets: Secrets = {
    certificates: await createClusterCertificates(hosts),
    signingKeyPem: createServiceAccountSigningKey(),
  };
  if (file !== undefined) writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
  return secrets;
}

function bootstrap(core: ApiCore): void {
  const write = systemWrite('devcluster-bootstrap');
  const nsType = core.typeOf('', 'namespaces');
  for (const name of initialNamespaces) {
    if (!core.find(nsType, '', name))
      core.create(nsType, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, write);
  }
  for (const object of bootstrapRbac()) {
    const kind = text(object['kind']);
    const type = core.typeOf('rbac.authorization.k8s.io', `${kind.toLowerCase()}s`);
    const metadata = object['metadata'] as JsonObject;
    const namespace = text(metadata['namespace'] ?? '');
    if (core.find(type, namespace, text(metadata['name']))) continue;
    core.create(type, namespace, structuredClone(object), write);
  }
}

/** The raw header list of an HTTP/2 request, or one made from its headers should node not give it. */
function rawHeadersOf(raw: unknown, headers: IncomingHttpHeaders): readonly string[] {
  if (Array.isArray(raw) && raw.every((item) => typeof item === 'string')) return raw;
  const list: string[] = [];
  for (const [name, value] of Object.entries(headers))
    for (const item of Array.isArray(value) ? value : [value ?? '']) list.push(name, item);
  return list;
}

/** Starts a devcluster and resolves once it serves. */
export async function startDevcluster(options: DevclusterOptions = {}): Promise<Devcluster> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? pino({ level: 'silent' });
  const kubernetesVersion = options.kubernetesVersion ?? defaultKubernetesVersion;
  if (options.dataDir !== undefined) mkdirSync(options.dataDir, { recursive: true });
  const secrets = await loadSecrets(options.dataDir, [
    ...new Set([host, '127.0.0.1', 'localhost', '::1']),
  ]);

  const store = new ObjectStore();
  let journal: FileJournal | undefined;
  if (options.dataDir !== undefined) {
    recoverStore(options.dataDir, store);
    journal = new FileJournal(options.dataDir, store);
    store.journal = journal;
  }
  const registry = new ResourceRegistry([...builtinResourceTypes(), endpointsResourceType()]);
  const hub = new WatchHub(store);
  const faults = new Faults(store, hub);
  const rbac: RbacSource = {
    roles: (ns) => store.list(storageKey('rbac.authorization.k8s.io', 'roles'), ns),
    roleBindings: (ns) => store.list(storageKey('rbac.authorization.k8s.io', 'rolebindings'), ns),
    clusterRoles: () => store.list(storageKey('rbac.authorization.k8s.io', 'clusterroles')),
    clusterRoleBindings: () =>
      store.list(storageKey('rbac.authorization.k8s.io', 'clusterrolebindings')),
  };
  const admission: Admission = (type, object, user) =>
    checkRbacEscalation(type, object, user, store, rbac);
  const core = new ApiCore({ store, registry, faults, admission });
  for (const crd of store.list(storageKey('apiextensions.k8s.io', 'customresourcedefinitions')))
    core.serveCrd(crd);
  bootstrap(core);

  const adminToken = randomBytes(24).toString('base64url');
  const staticTokens = new Map<string, UserInfo>([
    [adminToken, { username: 'admin', groups: ['system:masters', 'system:authenticated'] }],
  ]);
  const authContext = (): AuthenticationContext => ({
    signingKeyPem: secrets.signingKeyPem,
    staticTokens,
    serviceAccountUid: (namespace, name) => {
      const account = store.get('serviceaccounts', namespace, name);
      const uid = account ? (account['metadata'] as JsonObject)['uid'] : undefined;
      return typeof uid === 'string' ? uid : undefined;
    },
    rbac,
    now: new Date(),
  });

  const stops = [
    new GarbageCollector(core, logger).start(),
    new NamespaceController(core, logger).start(),
    new CrdCleanupController(core, logger).start(),
    new ClusterRoleAggregationController(core, logger).start(),
    new TokenSecretController(
      core,
      logger,
      (namespace, name, uid) =>
        issueServiceAccountToken(
          secrets.signingKeyPem,
          { namespace, name, uid },
          10 * 365 * 24 * 3600,
          new Date(),
        ).token,
      secrets.certificates.caCertPem,
    ).start(),
    new WorkloadControllers(core, logger, {
      podReadyDelayMs: options.podReadyDelayMs ?? 1000,
    }).start(),
  ];

  // The front proxy's CA is made fresh at each start; kube-system/extension-apiserver-authentication
  // tells aggregated API servers to trust it.
  const frontProxyCa = await createCertificateAuthority('olmq-devcluster-front-proxy-ca');
  const frontProxyClient = await issueCertificate(frontProxyCa, {
    commonName: frontProxyCommonName,
    usage: 'client',
  });
  const aggregator = new ApiAggregator(
    core,
    logger,
    {
      caCertPem: frontProxyCa.certPem,
      clientCertPem: frontProxyClient.certPem,
      clientKeyPem: frontProxyClient.keyPem,
    },
    secrets.certificates.caCertPem,
    options.apiServiceCheckIntervalMs ?? 10_000,
  );
  stops.push(aggregator.start());

  let address = '';
  const listener = createRequestListener({
    aggregator,
    core,
    hub,
    rbac,
    kubernetesVersion,
    serverAddress: () => address,
    authContext,
    signingKeyPem: secrets.signingKeyPem,
    logger,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 5000,
  });
  const { certificates } = secrets;
  // HTTP/2 for clients that negotiate it (kubectl and client-go do, as with kube-apiserver), HTTP/1.1
  // for the others (@kubernetes/client-node). The TLS server hands each connection to the server of
  // the protocol it negotiated: HTTP/2 requests are served on their streams, HTTP/1.1 ones by
  // node:http, one handler for both (transport.ts).
  const http2 = createHttp2Server({
    // Watches replaying a long history queue more than the default 10 MB per connection.
    maxSessionMemory: 256,
  });
  // Node passes the raw headers after the flags (not in its type declarations): repeated
  // headers stay apart there.
  http2.on('stream', (stream, headers, _flags, ...more: unknown[]) => {
    const exchange = new Http2Exchange(stream, headers, rawHeadersOf(more[0], headers));
    listener(exchange, exchange);
  });
  const http1 = createHttp1Server((req, res) => {
    const exchange = new Http1Exchange(req, res);
    listener(exchange, exchange);
  });
  // Kept so close() can end them: HTTP/2 sessions and idle HTTP/1.1 keep-alive connections alike.
  const connections = new Set<TLSSocket>();
  const server = createTlsServer(
    {
      key: certificates.serverKeyPem,
      cert: certificates.serverCertPem,
      ca: certificates.caCertPem,
      requestCert: true,
      rejectUnauthorized: false,
      ALPNProtocols: ['h2', 'http/1.1'],
    },
    (socket) => {
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
      if (socket.alpnProtocol === 'h2') http2.emit('connection', socket);
      else http1.emit('connection', socket);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  address = `${host}:${port}`;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const kubeconfig = (): string =>
    renderKubeconfig({
      server: url,
      caCertPem: certificates.caCertPem,
      clientCertPem: certificates.adminCertPem,
      clientKeyPem: certificates.adminKeyPem,
    });
  logger.info({ url, dataDir: options.dataDir }, 'devcluster serving');

  let closed = false;
  return {
    url,
    port,
    kubeconfig,
    writeKubeconfig: (path) => writeFile(path, kubeconfig(), { mode: 0o600 }),
    faults,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const stop of stops) stop();
      hub.closeAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of connections) socket.destroy();
      });
      // Never listening itself, node:http's server still has its connection bookkeeping to stop.
      http1.close(() => undefined);
      await journal?.close();
    },
  };
}
