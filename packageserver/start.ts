// Starting the package server: the aggregated API server for
// packages.operators.coreos.com/v1 over the catalog indexes in JetStream, and registers it
// with a cluster (Service + Endpoints + APIService) when it runs outside the cluster, as in
// devcluster mode.
import { openCatalogStore } from '../shared/handoff/index.js';
import { createCertificateAuthority, issueCertificate } from '../shared/kube/certificates.js';
import type { KubeClient, KubeObject } from '../shared/kube/client.js';
import { DelegatingAuthorizer, loadRequestHeaderConfig } from './auth.js';
import { packagesGroup, packagesVersion } from './manifest.js';
import { startPackageApi } from './server.js';
import type { PackageServer, PackageServerOptions, PackageServiceRef } from './types.js';
import { PackageView } from './view.js';

/** Default Service of the package API. */
export const defaultPackageService: PackageServiceRef = {
  namespace: 'olmq-system',
  name: 'packageserver',
};

/** Starts the package server: loads the catalogs, then serves HTTPS. */
export async function startPackageServer(options: PackageServerOptions): Promise<PackageServer> {
  const host = options.host ?? '127.0.0.1';
  const service = options.service ?? defaultPackageService;
  const requestHeader = await loadRequestHeaderConfig(options.client);
  let serving = options.serving;
  let caBundlePem: string | undefined;
  if (serving === undefined) {
    const ca = await createCertificateAuthority('olmq-packageserver-ca');
    const leaf = await issueCertificate(ca, {
      commonName: `${service.name}.${service.namespace}.svc`,
      hosts: [
        `${service.name}.${service.namespace}.svc`,
        `${service.name}.${service.namespace}.svc.cluster.local`,
        'localhost',
        ...(host === '0.0.0.0' || host === '::' ? [] : [host]),
      ],
      usage: 'server',
    });
    serving = leaf;
    caBundlePem = ca.certPem;
  }
  const store = await openCatalogStore(options.backbone);
  const view = new PackageView({
    backbone: options.backbone,
    store,
    cluster: options.cluster,
    log: options.log,
  });
  await view.start();
  const api = await startPackageApi({
    view,
    authorizer: new DelegatingAuthorizer(options.client),
    requestHeader,
    certPem: serving.certPem,
    keyPem: serving.keyPem,
    globalNamespace: options.globalNamespace,
    log: options.log,
    host,
    port: options.port ?? 0,
  });
  options.log.info({ address: api.address, cluster: options.cluster }, 'package server serving');
  return {
    address: api.address,
    host,
    port: api.port,
    caBundlePem,
    ready: () => view.ready,
    close: async () => {
      view.stop();
      await api.close();
    },
  };
}

const fieldManager = 'olmq-packageserver';

async function apply(client: KubeClient, object: KubeObject): Promise<void> {
  await client.patch(
    {
      apiVersion: object.apiVersion,
      kind: object.kind,
      namespace: object.metadata.namespace,
      name: object.metadata.name,
    },
    'apply',
    object,
    { fieldManager, force: true },
  );
}

/**
 * Registers a package server running outside the cluster (devcluster mode): a Service without
 * selector, Endpoints pointing at `address` (an IP and port), and the APIService
 * v1.packages.operators.coreos.com with the serving CA as caBundle (priorities as upstream OLM's).
 * Idempotent (server-side apply).
 */
export async function registerPackageApi(
  client: KubeClient,
  address: { host: string; port: number; caBundlePem: string | undefined },
  service: PackageServiceRef = defaultPackageService,
): Promise<void> {
  const labels = { 'app.kubernetes.io/name': 'olmq-packageserver' };
  await apply(client, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: service.namespace },
  });
  await apply(client, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: service.name, namespace: service.namespace, labels },
    spec: { ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: address.port }] },
  });
  await apply(client, {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: service.name, namespace: service.namespace, labels },
    subsets: [
      {
        addresses: [{ ip: address.host }],
        ports: [{ name: 'https', port: address.port, protocol: 'TCP' }],
      },
    ],
  });
  await apply(client, {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `${packagesVersion}.${packagesGroup}`, labels },
    spec: {
      group: packagesGroup,
      version: packagesVersion,
      service: { name: service.name, namespace: service.namespace, port: 443 },
      groupPriorityMinimum: 2000,
      versionPriority: 15,
      ...(address.caBundlePem === undefined
        ? { insecureSkipTLSVerify: true }
        : { caBundle: Buffer.from(address.caBundlePem).toString('base64') }),
    },
  });
}
