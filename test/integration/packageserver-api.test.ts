// The package server's own behaviour: watch, catalogs changing in JetStream, the icon
// subresource, and whom it trusts (front-proxy authentication, SubjectAccessReviews).
import { spawn } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import t from 'tap';
import { Watch } from '@kubernetes/client-node';
import { DelegatingAuthorizer } from '../../packageserver/auth.js';
import { deleteCatalogIndexRecord } from '../../shared/handoff/index.js';
import { join } from 'node:path';
import { kubectl, kubectlMissing, rawRequest } from '../harness/devcluster.js';
import { packageServerFor, publishCatalog, smallCatalogs } from '../harness/packageserver.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) {
  t.fail(missing);
} else {
  const f = await packageServerFor(t);
  const names = async (namespace: string): Promise<string[]> => {
    const result = await kubectl(f.fixture, [
      'get',
      'packagemanifests',
      '-n',
      namespace,
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}@{.status.catalogSource}{"\\n"}{end}',
    ]);
    if (result.code !== 0) throw new Error(result.stderr);
    return result.stdout.trim().split('\n');
  };

  t.test(
    'packageserver - a watch sees packages of a new catalog arrive, change and go',
    async (t) => {
      const events: string[] = [];
      const list = await rawRequest(
        f.fixture,
        'GET',
        '/apis/packages.operators.coreos.com/v1/namespaces/team-b/packagemanifests',
      );
      const resourceVersion = (JSON.parse(list.body) as { metadata: { resourceVersion: string } })
        .metadata.resourceVersion;
      const request = await new Watch(f.fixture.kubeConfig).watch(
        '/apis/packages.operators.coreos.com/v1/namespaces/team-b/packagemanifests',
        { resourceVersion, labelSelector: 'catalog=team-b-catalog' },
        (type: string, object: { metadata: { name: string } }) =>
          events.push(`${type} ${object.metadata.name}`),
        () => undefined,
      );
      t.teardown(() => request.abort());
      await publishCatalog(f.backbone, f.cluster, join(smallCatalogs, 'prometheus'), {
        namespace: 'team-b',
        name: 'team-b-catalog',
        displayName: 'B',
        publisher: 'B',
      });
      await waitFor('ADDED prometheus', () => events.includes('ADDED prometheus'));
      // The same CatalogSource now serves another index: prometheus goes, etcd comes.
      await publishCatalog(f.backbone, f.cluster, join(smallCatalogs, 'etcd'), {
        namespace: 'team-b',
        name: 'team-b-catalog',
        displayName: 'B',
        publisher: 'B',
      });
      await waitFor(
        'etcd replaces prometheus',
        () => events.includes('DELETED prometheus') && events.includes('ADDED etcd'),
      );
      await deleteCatalogIndexRecord(f.backbone, f.cluster, 'team-b', 'team-b-catalog');
      await waitFor('DELETED etcd', () => events.includes('DELETED etcd'));
      t.same(events, ['ADDED prometheus', 'ADDED etcd', 'DELETED prometheus', 'DELETED etcd']);
    },
  );

  t.test('packageserver - kubectl get -w prints packages as their catalog changes', async (t) => {
    const catalog = (dir: string) =>
      publishCatalog(f.backbone, f.cluster, join(smallCatalogs, dir), {
        namespace: 'team-c',
        name: 'team-c-catalog',
        displayName: 'Team C',
        publisher: 'C',
      });
    await catalog('hawtio-operator');
    const child = spawn(
      'kubectl',
      [
        'get',
        'packagemanifests',
        '-n',
        'team-c',
        '-l',
        'catalog=team-c-catalog',
        '-w',
        '--output-watch-events',
      ],
      {
        env: {
          ...process.env,
          KUBECONFIG: f.fixture.kubeconfigPath,
          KUBECACHEDIR: join(f.fixture.dir, 'cache'),
          HOME: f.fixture.dir,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    await waitFor(
      'the listed row',
      () => /ADDED\s+hawtio-operator\s+Team C\s/.test(stdout),
      30_000,
    );
    // A change right after the list is not lost: the watch starts from the list's version.
    await catalog('etcd');
    await waitFor(
      'the rows of the change',
      () => /DELETED\s+hawtio-operator\s/.test(stdout) && /ADDED\s+etcd\s+Team C\s/.test(stdout),
      30_000,
    );
    t.pass('kubectl printed the change');
  });

  t.test(
    'packageserver - a namespace without catalogs sees only the global catalogs',
    async (t) => {
      const seen = await names('empty-namespace');
      t.equal(seen.length, 6);
      t.ok(seen.every((n) => n.endsWith('@operatorhubio')));
    },
  );

  t.test('packageserver - the icon subresource serves the default channel head icon', async (t) => {
    const icon = await rawRequest(
      f.fixture,
      'GET',
      '/apis/packages.operators.coreos.com/v1/namespaces/default/packagemanifests/etcd/icon',
    );
    t.equal(icon.status, 200);
    t.equal(icon.headers['content-type'], 'image/png');
    t.equal(icon.headers['etag'], '"etcd.singlenamespace-alpha.etcdoperator.v0.9.4"');
  });

  t.test('packageserver - methods other than get are not allowed', async (t) => {
    const result = await rawRequest(
      f.fixture,
      'DELETE',
      '/apis/packages.operators.coreos.com/v1/namespaces/default/packagemanifests/etcd',
    );
    t.equal(result.status, 405);
    t.match(JSON.parse(result.body), { reason: 'MethodNotAllowed' });
  });

  t.test('packageserver - callers without the front-proxy certificate are 401', async (t) => {
    const user = f.fixture.kubeConfig.getCurrentUser();
    const decode = (v: string | undefined) => Buffer.from(v ?? '', 'base64').toString('utf8');
    const direct = (withCert: boolean) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(
          {
            host: f.server.host,
            port: f.server.port,
            path: '/apis/packages.operators.coreos.com/v1/namespaces/default/packagemanifests',
            headers: { 'x-remote-user': 'admin', 'x-remote-group': 'system:masters' },
            rejectUnauthorized: false,
            ...(withCert ? { cert: decode(user?.certData), key: decode(user?.keyData) } : {}),
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
            );
          },
        );
        req.on('error', reject);
        req.end();
      });
    const anonymous = await direct(false);
    t.equal(anonymous.status, 401);
    t.match(JSON.parse(anonymous.body), { reason: 'Unauthorized' });
    // The cluster's admin certificate is not a front proxy: its headers are not believed.
    t.equal((await direct(true)).status, 401);
  });

  t.test('packageserver - authorization asks the cluster with SubjectAccessReviews', async (t) => {
    const authorizer = new DelegatingAuthorizer(f.client, 0);
    const action = {
      verb: 'list',
      namespace: 'default',
      resource: 'packagemanifests',
      subresource: '',
      name: '',
      group: 'packages.operators.coreos.com',
      version: 'v1',
    };
    const carol = { username: 'carol', groups: ['system:authenticated'], extra: {} };
    t.match(await authorizer.authorize(carol, action), { allowed: false });
    await f.client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'carol-packages', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol' }],
    });
    await f.client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: 'packagemanifests-view',
        labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' },
      },
      rules: [
        {
          apiGroups: ['packages.operators.coreos.com'],
          resources: ['packagemanifests', 'packagemanifests/icon'],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    });
    await waitFor(
      'carol may list packagemanifests',
      async () => (await authorizer.authorize(carol, action)).allowed,
    );
    // End to end, as carol through the aggregator.
    const result = await kubectl(f.fixture, [
      'get',
      'packagemanifests',
      '-n',
      'default',
      '--as=carol',
    ]);
    t.equal(result.code, 0, result.stderr);
    const denied = await kubectl(f.fixture, [
      'get',
      'packagemanifests',
      '-n',
      'other',
      '--as=carol',
    ]);
    t.not(denied.code, 0);
    t.match(
      denied.stderr,
      /cannot list resource "packagemanifests" in API group "packages.operators.coreos.com" in the namespace "other"/,
    );
  });
}
