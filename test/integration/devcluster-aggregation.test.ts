// The devcluster's API aggregation: an APIService with spec.service is resolved through its
// Service's Endpoints, checked (Available condition), listed in discovery and proxied with the
// user in X-Remote-User / X-Remote-Group over the front-proxy client certificate.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import t, { type Test } from 'tap';
import { createCertificateAuthority, issueCertificate } from '../../shared/kube/certificates.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { clusterFor } from '../harness/backbone.js';
import {
  http2Request,
  http2Session,
  kubectl,
  kubectlMissing,
  rawRequest,
} from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

const group = 'echo.example.io';

interface Echo {
  path: string;
  user: string | undefined;
  groups: string[];
  clientCommonName: string | undefined;
  trustedClient: boolean;
}

/** An HTTPS backend answering discovery for echo.example.io/v1 and echoing everything else. */
async function echoBackend(t: Test, client: KubeClient) {
  const ca = await createCertificateAuthority('echo-ca');
  const serving = await issueCertificate(ca, {
    commonName: 'echo',
    hosts: ['echo.echo-system.svc'],
    usage: 'server',
  });
  const authConfig = await client.get<KubeObject & { data: Record<string, string> }>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'kube-system',
    name: 'extension-apiserver-authentication',
  });
  t.ok(authConfig, 'the devcluster publishes extension-apiserver-authentication');
  const requests: Echo[] = [];
  const server: Server = createServer(
    {
      key: serving.keyPem,
      cert: serving.certPem,
      ca: authConfig?.data['requestheader-client-ca-file'],
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const cn = socket.getPeerCertificate().subject?.CN;
      const echo: Echo = {
        path: req.url ?? '',
        user: req.headers['x-remote-user'] as string | undefined,
        groups: req.headersDistinct['x-remote-group'] ?? [],
        clientCommonName: Array.isArray(cn) ? cn[0] : cn,
        trustedClient: socket.authorized,
      };
      requests.push(echo);
      const body =
        req.url === `/apis/${group}/v1`
          ? {
              kind: 'APIResourceList',
              apiVersion: 'v1',
              groupVersion: `${group}/v1`,
              resources: [
                {
                  name: 'echoes',
                  singularName: 'echo',
                  namespaced: true,
                  kind: 'Echo',
                  verbs: ['get', 'list'],
                },
              ],
            }
          : echo;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  return { port, caPem: ca.certPem, requests };
}

function apiService(caPem: string): KubeObject {
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `v1.${group}` },
    spec: {
      group,
      version: 'v1',
      service: { name: 'echo', namespace: 'echo-system', port: 443 },
      caBundle: Buffer.from(caPem).toString('base64'),
      groupPriorityMinimum: 1000,
      versionPriority: 15,
    },
  };
}

async function availability(
  client: KubeClient,
): Promise<{ status: string; reason: string; message: string } | undefined> {
  const object = await client.get<
    KubeObject & {
      status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
    }
  >({
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    name: `v1.${group}`,
  });
  return object?.status?.conditions?.find((c) => c.type === 'Available');
}

const missing = kubectlMissing();
if (missing !== undefined) t.fail(missing);
else {
  t.test(
    'devcluster aggregation - Available follows Service, Endpoints and the backend',
    async (t) => {
      const { fixture, client } = await clusterFor(t);
      const backend = await echoBackend(t, client);
      await client.create(apiService(backend.caPem));
      const reasonIs = (reason: string) =>
        waitFor(
          `Available reason ${reason}`,
          async () => (await availability(client))?.reason === reason,
        );
      await reasonIs('ServiceNotFound');
      t.match(await availability(client), {
        status: 'False',
        message: 'service/echo in "echo-system" is not present',
      });

      await client.create({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'echo-system' },
      });
      await client.create({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'echo', namespace: 'echo-system' },
        spec: { ports: [{ name: 'https', port: 443, targetPort: backend.port }] },
      });
      await reasonIs('MissingEndpoints');

      // Endpoints naming a port nothing listens on: the discovery check fails.
      const endpoints = (port: number): KubeObject => ({
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'echo', namespace: 'echo-system' },
        subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }],
      });
      await client.create(endpoints(1));
      await reasonIs('FailedDiscoveryCheck');
      t.match(await availability(client), {
        status: 'False',
        message:
          /failing or missing response from https:\/\/127\.0\.0\.1:1\/apis\/echo\.example\.io\/v1/,
      });

      await client.patch(
        { apiVersion: 'v1', kind: 'Endpoints', namespace: 'echo-system', name: 'echo' },
        'merge',
        {
          subsets: endpoints(backend.port)['subsets'],
        },
      );
      await reasonIs('Passed');
      t.match(await availability(client), { status: 'True', message: 'all checks passed' });
      const wait = await kubectl(fixture, [
        'wait',
        '--for=condition=Available',
        `apiservice/v1.${group}`,
        '--timeout=10s',
      ]);
      t.equal(wait.code, 0, wait.stderr);

      // The group appears in discovery, legacy and aggregated.
      const legacy = await rawRequest(fixture, 'GET', '/apis');
      const groups = (JSON.parse(legacy.body) as { groups: { name: string }[] }).groups.map(
        (g) => g.name,
      );
      t.ok(groups.includes(group), 'the aggregated group is listed');
      t.ok(groups.includes('apps'), 'local groups stay');
      const resources = await kubectl(fixture, ['api-resources', `--api-group=${group}`]);
      t.equal(resources.code, 0, resources.stderr);
      t.match(resources.stdout, /echoes\s+echo\.example\.io\/v1\s+true\s+Echo/);

      // Requests are proxied with the user in headers and the front-proxy certificate.
      const echoed = await rawRequest(
        fixture,
        'GET',
        `/apis/${group}/v1/namespaces/default/echoes/x?watch=false`,
      );
      t.equal(echoed.status, 200);
      t.match(JSON.parse(echoed.body), {
        path: `/apis/${group}/v1/namespaces/default/echoes/x?watch=false`,
        user: 'admin',
        groups: ['system:masters', 'system:authenticated'],
        clientCommonName: 'front-proxy-client',
        trustedClient: true,
      });

      // Over HTTP/2 too (kubectl's protocol): the backend's HTTP/1.1 connection headers
      // (Connection, Transfer-Encoding) are not forwarded, as HTTP/2 forbids them.
      const session = await http2Session(fixture);
      try {
        const overHttp2 = await http2Request(
          session,
          'GET',
          `/apis/${group}/v1/namespaces/default/echoes/y`,
        );
        t.equal(overHttp2.status, 200);
        t.match(JSON.parse(overHttp2.body), {
          path: `/apis/${group}/v1/namespaces/default/echoes/y`,
          user: 'admin',
        });
        t.equal(overHttp2.headers['transfer-encoding'], undefined);
        t.equal(overHttp2.headers['connection'], undefined);
      } finally {
        session.close();
      }

      // Removing the Endpoints makes it unavailable again and requests fail with 503.
      await client.delete({
        apiVersion: 'v1',
        kind: 'Endpoints',
        namespace: 'echo-system',
        name: 'echo',
      });
      await reasonIs('MissingEndpoints');
      const unavailable = await rawRequest(
        fixture,
        'GET',
        `/apis/${group}/v1/namespaces/default/echoes`,
      );
      t.equal(unavailable.status, 503);
      t.match(JSON.parse(unavailable.body), { reason: 'ServiceUnavailable' });
    },
  );

  t.test('devcluster aggregation - requests are authorized before they are proxied', async (t) => {
    const { fixture, client } = await clusterFor(t);
    const backend = await echoBackend(t, client);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'echo-system' } });
    await client.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'echo', namespace: 'echo-system' },
      spec: { ports: [{ name: 'https', port: 443, targetPort: backend.port }] },
    });
    await client.create({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'echo', namespace: 'echo-system' },
      subsets: [
        { addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: backend.port }] },
      ],
    });
    await client.create(apiService(backend.caPem));
    await waitFor('Available', async () => (await availability(client))?.status === 'True');
    const proxied = () => backend.requests.filter((r) => r.path.includes('/echoes')).length;
    const denied = await kubectl(fixture, [
      'get',
      '--raw',
      `/apis/${group}/v1/namespaces/default/echoes`,
      '--as=bob',
    ]);
    t.not(denied.code, 0);
    t.match(
      denied.stderr,
      /forbidden: User "bob" cannot list resource "echoes" in API group "echo.example.io" in the namespace "default"/,
    );
    t.equal(proxied(), 0, 'a denied request never reaches the backend');

    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'echo-reader' },
      rules: [{ apiGroups: [group], resources: ['echoes'], verbs: ['list'] }],
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'bob-echo-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'echo-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }],
    });
    const allowed = await kubectl(fixture, [
      'get',
      '--raw',
      `/apis/${group}/v1/namespaces/default/echoes`,
      '--as=bob',
      '--as-group=team',
    ]);
    t.equal(allowed.code, 0, allowed.stderr);
    t.match(JSON.parse(allowed.stdout), { user: 'bob', groups: ['team', 'system:authenticated'] });
  });
}
