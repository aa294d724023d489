// olmq running on a ServiceAccount token file (as in a pod, with a projected token) while the
// devcluster rotates the token mid-install, the old token refused at once: every client re-reads
// the file (or refreshes on the 401) and nothing fails.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { assets } from '../../shared/bus/backbone.js';
import { KubeClient, type KubeObject } from '../../shared/kube/client.js';
import { loadRegistryCatalog, startRegistryServer } from '../../shared/registry/index.js';
import { startSystem } from '../../system/index.js';
import { rawRequest, startCluster } from '../harness/devcluster.js';
import { getCsv, namespaceWithOperatorGroup, waitForCsvPhase } from '../harness/install.js';
import { capturingLogger } from '../harness/log.js';
import { smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

t.test(
  'token rotation - the ServiceAccount token rotates mid-install; nothing fails',
  async (t) => {
    const fixture = await startCluster();
    t.teardown(() => fixture.close());
    const admin = await KubeClient.fromKubeConfig('c1', fixture.kubeConfig);
    t.teardown(() => admin.close());
    await admin.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'olmq', namespace: 'default' },
    });
    await admin.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'olmq' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'cluster-admin',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'olmq', namespace: 'default' }],
    });
    const tokenFile = join(fixture.dir, 'token');
    // As the kubelet swaps a projected token: write aside, then rename over the old file.
    const rotate = (): string => {
      const token = fixture.cluster.faults.rotateServiceAccountToken('default', 'olmq');
      writeFileSync(`${tokenFile}.new`, token);
      renameSync(`${tokenFile}.new`, tokenFile);
      return token;
    };
    const first = rotate();
    const kubeconfig = join(fixture.dir, 'olmq-kubeconfig');
    writeFileSync(
      kubeconfig,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'dev',
            cluster: {
              server: fixture.cluster.url,
              'certificate-authority-data': fixture.kubeConfig.getCurrentCluster()?.caData,
            },
          },
        ],
        users: [{ name: 'olmq', user: { 'token-file': tokenFile } }],
        contexts: [{ name: 'c1', context: { cluster: 'dev', user: 'olmq' } }],
        'current-context': 'c1',
      }),
    );

    const { log, lines } = capturingLogger('warn');
    const system = await startSystem({
      kubeconfig,
      log,
      backbone: { leaseTtlMs: 2_000 },
      watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
      functions: { host: { baseBackoffMs: 20, contentionDelayMs: 20 }, stopGraceMs: 1_000 },
    });
    t.teardown(() => system.stop());
    const { client } = system;

    const served = await startRegistryServer({
      catalog: (await loadRegistryCatalog(smallCatalog)).catalog,
      host: '127.0.0.1',
      port: 0,
    });
    t.teardown(() => served.stop(0));
    await client.create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'community', namespace: 'olm' },
      spec: { sourceType: 'grpc', address: served.address },
    });
    await namespaceWithOperatorGroup(client, 'rotating');
    await client.create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: 'rotating' },
      spec: {
        name: 'etcd',
        channel: 'singlenamespace-alpha',
        source: 'community',
        sourceNamespace: 'olm',
      },
    });
    rotate();
    const refused = await rawRequest(
      fixture,
      'GET',
      '/api/v1/namespaces',
      undefined,
      { authorization: `Bearer ${first}` },
      'none',
    );
    t.equal(refused.status, 401, 'the first token is refused after the rotation');
    await waitFor(
      'an InstallPlan',
      async () =>
        (
          await client.list<KubeObject>({
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'InstallPlan',
            namespace: 'rotating',
          })
        ).items.length > 0,
      60_000,
      50,
    );
    rotate();
    await waitFor(
      'the CSV',
      async () => (await getCsv(client, 'rotating', 'etcdoperator.v0.9.4')) !== undefined,
      60_000,
      50,
    );
    rotate();
    await waitForCsvPhase(
      client,
      'rotating',
      'etcdoperator.v0.9.4',
      'Succeeded',
      undefined,
      90_000,
    );
    const dead = await system.backbone.jsm.streams.info(assets.deadStream);
    t.equal(dead.state.messages, 0, 'nothing was dead-lettered');
    t.same(
      lines.filter((l) => l['level'] === 50),
      [],
      'no error was logged',
    );
  },
);
