// Public entry point of the devcluster: an embedded Kubernetes-compatible API server over HTTPS.
// startDevcluster wires the rooms together (README.md): storage, the API core and its kinds, the
// controllers, API aggregation and the HTTPS front end.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { pino } from 'pino';
import {
  issueServiceAccountToken,
  type AuthenticationContext,
  type RbacSource,
  type UserInfo,
} from './auth/index.js';
import { ApiAggregator, frontProxyCommonName } from './aggregation/aggregator.js';
import { endpointsResourceType } from './aggregation/backends.js';
import { bootstrap } from './api/bootstrap.js';
import { ApiCore } from './api/core.js';
import { checkRbacEscalation } from './api/rbac-escalation.js';
import type { Admission } from './api/types.js';
import { createCertificateAuthority, issueCertificate } from '../shared/kube/certificates.js';
import type { JsonObject } from '../shared/kube/json.js';
import { AdjustableClock } from './controllers/clock.js';
import { GarbageCollector } from './controllers/garbage-collector.js';
import {
  ClusterRoleAggregationController,
  CrdCleanupController,
  NamespaceController,
  TokenSecretController,
} from './controllers/lifecycle.js';
import { WorkloadControllers } from './controllers/workloads.js';
import { FaultAdminEndpoint } from './faults-admin.js';
import { Faults } from './faults.js';
import { builtinResourceTypes } from './resources/builtin.js';
import { ResourceRegistry, storageKey } from './resources/registry.js';
import { createRequestListener } from './server/http/router.js';
import { renderKubeconfig } from './server/kubeconfig.js';
import { listen } from './server/listener.js';
import { loadSecrets } from './server/secrets.js';
import { mergeNamespacedGhosts } from './storage/ghosts.js';
import { FileJournal, recoverStore } from './storage/journal.js';
import { ObjectStore } from './storage/store.js';
import { WatchHub } from './storage/watch.js';
import type { Devcluster, DevclusterOptions } from './types.js';

export type {
  ClockHooks,
  Devcluster,
  DevclusterOptions,
  FaultAction,
  FaultHooks,
  FaultRule,
  InjectedFault,
  ObjectTarget,
} from './types.js';
export { writeVerbs } from './faults.js';
export { failAnnotation } from './controllers/workload-objects.js';

/** Default Kubernetes version reported by /version. */
export const defaultKubernetesVersion = 'v1.30.6';

/** Starts a devcluster and resolves once it serves. */
export async function startDevcluster(options: DevclusterOptions = {}): Promise<Devcluster> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? pino({ level: 'silent' });
  const kubernetesVersion = options.kubernetesVersion ?? defaultKubernetesVersion;
  if (options.dataDir !== undefined) mkdirSync(options.dataDir, { recursive: true });
  const secrets = await loadSecrets(options.dataDir, [
    ...new Set([host, '127.0.0.1', 'localhost', '::1']),
  ]);

  const clock = new AdjustableClock();
  const store = new ObjectStore();
  if (options.dataDir !== undefined) recoverStore(options.dataDir, store);
  const registry = new ResourceRegistry([...builtinResourceTypes(), endpointsResourceType()]);
  const hub = new WatchHub(store);
  const serviceAccountUid = (namespace: string, name: string): string | undefined => {
    const account = store.get('serviceaccounts', namespace, name);
    const uid = account ? (account['metadata'] as JsonObject)['uid'] : undefined;
    return typeof uid === 'string' ? uid : undefined;
  };
  const faults = new Faults(store, hub, {
    uid: serviceAccountUid,
    issue: (account, seconds) =>
      issueServiceAccountToken(secrets.signingKeyPem, account, seconds, new Date()).token,
  });
  const rbac: RbacSource = {
    roles: (ns) => store.list(storageKey('rbac.authorization.k8s.io', 'roles'), ns),
    roleBindings: (ns) => store.list(storageKey('rbac.authorization.k8s.io', 'rolebindings'), ns),
    clusterRoles: () => store.list(storageKey('rbac.authorization.k8s.io', 'clusterroles')),
    clusterRoleBindings: () =>
      store.list(storageKey('rbac.authorization.k8s.io', 'clusterrolebindings')),
  };
  const admission: Admission = (type, object, user) =>
    checkRbacEscalation(type, object, user, store, rbac);
  const core = new ApiCore({
    store,
    registry,
    faults,
    admission,
    now: () => clock.now(),
    serviceIPFamilies: options.serviceIPFamilies ?? ['IPv4'],
  });
  // Ghost copies of CRDs go first, so the CRDs served are the merged ones; then their objects'.
  const ghosts = mergeNamespacedGhosts(store, (key) => registry.clusterScoped(key));
  for (const crd of store.list(storageKey('apiextensions.k8s.io', 'customresourcedefinitions')))
    core.serveCrd(crd);
  ghosts.push(...mergeNamespacedGhosts(store, (key) => registry.clusterScoped(key)));
  for (const ghost of ghosts)
    logger.warn(ghost, 'recovery dropped a namespaced copy of a cluster-scoped object');
  let journal: FileJournal | undefined;
  if (options.dataDir !== undefined) {
    // The journal starts with a snapshot of the recovered (and merged) objects.
    journal = new FileJournal(options.dataDir, store);
    store.journal = journal;
  }
  bootstrap(core, kubernetesVersion);

  const adminToken = randomBytes(24).toString('base64url');
  const staticTokens = new Map<string, UserInfo>([
    [adminToken, { username: 'admin', groups: ['system:masters', 'system:authenticated'] }],
  ]);
  const authContext = (): AuthenticationContext => ({
    signingKeyPem: secrets.signingKeyPem,
    staticTokens,
    serviceAccountUid,
    tokenRevoked: faults.tokenRevoked,
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
      clock,
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
    faults,
    faultAdmin: new FaultAdminEndpoint(faults),
  });
  const { certificates } = secrets;
  const listening = await listen({ host, port: options.port ?? 0, certificates, listener });
  const port = listening.port;
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
    clock,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const stop of stops) stop();
      faults.clearFaults();
      hub.closeAll();
      await listening.close();
      await journal?.close();
    },
  };
}
