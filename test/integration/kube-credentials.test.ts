// Credentials that change under a running client (shared/kube/credentials.ts): a rotated
// ServiceAccount token in a token file, an exec plugin's expiring credential, a replaced client
// certificate — each picked up without a restart, a 401 refreshing and retrying once.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { stringify } from 'yaml';
import { KubeClient } from '../../shared/kube/client.js';
import { loadClusters } from '../../shared/kube/clusters.js';
import { createCertificateAuthority, issueCertificate } from '../../shared/kube/certificates.js';
import { rawRequest, startCluster, type ClusterFixture } from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

async function clusterFor(t: Test): Promise<{ fixture: ClusterFixture; admin: KubeClient }> {
  const fixture = await startCluster();
  const admin = await KubeClient.fromKubeConfig('c1', fixture.kubeConfig);
  t.teardown(async () => {
    admin.close();
    await fixture.close();
  });
  return { fixture, admin };
}

/** A ServiceAccount default/robot bound to cluster-admin. */
async function robot(admin: KubeClient): Promise<void> {
  await admin.create({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'robot', namespace: 'default' },
  });
  await admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'robot-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'default' }],
  });
}

/** A kubeconfig file of the devcluster for `user` (a kubeconfig user entry). */
function kubeconfigFile(fixture: ClusterFixture, user: Record<string, unknown>): string {
  const cluster = fixture.kubeConfig.getCurrentCluster();
  const path = join(fixture.dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'dev',
          cluster: { server: fixture.cluster.url, 'certificate-authority-data': cluster?.caData },
        },
      ],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'dev', context: { cluster: 'dev', user: 'u' } }],
      'current-context': 'dev',
    }),
  );
  return path;
}

async function clientOf(t: Test, path: string): Promise<KubeClient> {
  const [access] = loadClusters({ path });
  if (access === undefined) throw new Error('no cluster in the kubeconfig');
  const client = await KubeClient.fromKubeConfig('c1', access.kubeConfig, {
    transientRetryWindowMs: 5_000,
    transientBackoffMs: 50,
  });
  t.teardown(() => client.close());
  return client;
}

const namespaces = { apiVersion: 'v1', kind: 'Namespace' };

t.test(
  'credentials - a token file rotated in place is read again; the old token is refused',
  async (t) => {
    const { fixture, admin } = await clusterFor(t);
    await robot(admin);
    const tokenFile = join(fixture.dir, 'token');
    const first = fixture.cluster.faults.rotateServiceAccountToken('default', 'robot');
    writeFileSync(tokenFile, first);
    const client = await clientOf(t, kubeconfigFile(fixture, { 'token-file': tokenFile }));
    t.ok((await client.list(namespaces)).items.length > 0, 'the first token works');

    const second = fixture.cluster.faults.rotateServiceAccountToken('default', 'robot');
    const old = await rawRequest(
      fixture,
      'GET',
      '/api/v1/namespaces',
      undefined,
      {
        authorization: `Bearer ${first}`,
      },
      'none',
    );
    t.equal(old.status, 401, 'the rotated-out token is refused');
    writeFileSync(tokenFile, second);
    // Whether the file check or the 401 notices first, the request succeeds.
    t.ok((await client.list(namespaces)).items.length > 0, 'the rotated token is picked up');
  },
);

t.test('credentials - a 401 reads the token file again and retries once', async (t) => {
  const { fixture, admin } = await clusterFor(t);
  await robot(admin);
  const tokenFile = join(fixture.dir, 'token');
  writeFileSync(tokenFile, fixture.cluster.faults.rotateServiceAccountToken('default', 'robot'));
  const client = await clientOf(t, kubeconfigFile(fixture, { 'token-file': tokenFile }));
  await client.list(namespaces);
  // Rotated and rewritten within the file check's second: only the 401 can tell.
  writeFileSync(tokenFile, fixture.cluster.faults.rotateServiceAccountToken('default', 'robot'));
  t.ok((await client.list(namespaces)).items.length > 0);
  // Revoked, and the file holds nothing better.
  fixture.cluster.faults.rotateServiceAccountToken('default', 'robot');
  writeFileSync(tokenFile, 'not-a-token');
  const error = await client.list(namespaces).then(
    () => undefined,
    (e: unknown) => e as { code?: number },
  );
  t.equal(error?.code, 401, 'a token that stays bad fails after one retry');
});

t.test('credentials - an exec plugin is run again before its credential expires', async (t) => {
  const { fixture, admin } = await clusterFor(t);
  await robot(admin);
  const tokenFile = join(fixture.dir, 'token');
  const runs = join(fixture.dir, 'runs');
  writeFileSync(runs, '');
  writeFileSync(tokenFile, fixture.cluster.faults.rotateServiceAccountToken('default', 'robot'));
  const plugin = join(fixture.dir, 'plugin.mjs');
  // Prints an ExecCredential valid 2 s, holding the token file's token; counts its runs.
  writeFileSync(
    plugin,
    `import { appendFileSync, readFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(runs)}, 'x');
const token = readFileSync(${JSON.stringify(tokenFile)}, 'utf8').trim();
const expirationTimestamp = new Date(Date.now() + 2000).toISOString();
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token, expirationTimestamp } }));
`,
  );
  chmodSync(plugin, 0o755);
  const client = await clientOf(
    t,
    kubeconfigFile(fixture, {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: [plugin],
        interactiveMode: 'Never',
      },
    }),
  );
  await client.list(namespaces);
  t.equal(readFileSync(runs, 'utf8').length, 1, 'one run for the first request');
  await client.list(namespaces);
  t.equal(readFileSync(runs, 'utf8').length, 1, 'the credential is cached while fresh');
  writeFileSync(tokenFile, fixture.cluster.faults.rotateServiceAccountToken('default', 'robot'));
  await waitFor(
    'the plugin to run again before expiry',
    async () => {
      await client.list(namespaces);
      return readFileSync(runs, 'utf8').length >= 2;
    },
    10_000,
    100,
  );
  t.pass('the rotated token came from the plugin run again');
});

t.test('credentials - client certificate files are reloaded when they change', async (t) => {
  const { fixture } = await clusterFor(t);
  const user = fixture.kubeConfig.getCurrentUser();
  const decode = (v: string | undefined): string => Buffer.from(v ?? '', 'base64').toString();
  const certFile = join(fixture.dir, 'client.crt');
  const keyFile = join(fixture.dir, 'client.key');
  // First a certificate of a CA the cluster does not trust.
  const stranger = await issueCertificate(await createCertificateAuthority('stranger-ca'), {
    commonName: 'admin',
    usage: 'client',
  });
  writeFileSync(certFile, stranger.certPem);
  writeFileSync(keyFile, stranger.keyPem);
  const client = await clientOf(
    t,
    kubeconfigFile(fixture, { 'client-certificate': certFile, 'client-key': keyFile }),
  );
  const refused = await client.list(namespaces).then(
    () => undefined,
    (e: unknown) => e as { code?: number },
  );
  t.equal(refused?.code, 401, "a stranger's certificate is refused");
  writeFileSync(certFile, decode(user?.certData));
  writeFileSync(keyFile, decode(user?.keyData));
  t.ok((await client.list(namespaces)).items.length > 0, 'the replaced certificate is used');
});
