// The API client speaks HTTP/2 to servers that offer it (as client-go does) and HTTP/1.1 to the
// others, with the same answers, warnings and errors either way.
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { createCertificateAuthority, issueCertificate } from '../../shared/kube/certificates.js';
import { KubeClient } from '../../shared/kube/client.js';
import { KubeApiError } from '../../shared/kube/errors.js';
import type { ApiWarning } from '../../shared/kube/warnings.js';

interface Served {
  url: string;
  ca: string;
  /** HTTP versions of the requests answered so far. */
  versions: string[];
}

// Answers GET /api/v1/namespaces/default/configmaps/<name> like an API server: 200 with a
// warning for "present", 404 Status for anything else.
async function serve(t: Test, http2: boolean): Promise<Served> {
  const ca = await createCertificateAuthority('test-ca');
  const leaf = await issueCertificate(ca, {
    commonName: 'localhost',
    hosts: ['127.0.0.1'],
    usage: 'server',
  });
  const versions: string[] = [];
  const handler = (
    req: { httpVersion: string; url?: string | undefined },
    res: {
      writeHead(code: number, headers: Record<string, string>): unknown;
      end(body: string): unknown;
    },
  ): void => {
    versions.push(req.httpVersion);
    if (req.url === '/api/v1/namespaces/default/configmaps/present') {
      res.writeHead(200, {
        'content-type': 'application/json',
        warning: '299 - "v1 ConfigMap is fine, just saying"',
      });
      res.end(
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'present' } }),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: 'configmaps "absent" not found',
      }),
    );
  };
  const tls = { cert: leaf.certPem, key: leaf.keyPem };
  const server: HttpsServer | Http2SecureServer = http2
    ? createSecureServer({ ...tls, allowHTTP1: true }, handler)
    : createHttpsServer(tls, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { url: `https://127.0.0.1:${port}`, ca: ca.certPem, versions };
}

for (const http2 of [true, false]) {
  t.test(
    `kube client - against a server ${http2 ? 'offering' : 'without'} HTTP/2: answers, warnings, errors`,
    async (t) => {
      const served = await serve(t, http2);
      const warnings: ApiWarning[] = [];
      const client = KubeClient.fromConnection('c1', {
        server: served.url,
        ca: served.ca,
      }).withWarningHandler((w) => warnings.push(w));
      t.teardown(() => client.close());
      const path = '/api/v1/namespaces/default/configmaps';
      const got = (await client.request('GET', `${path}/present`, 'get')) as {
        metadata: { name: string };
      };
      t.equal(got.metadata.name, 'present');
      t.same(warnings, [{ code: 299, agent: '-', text: 'v1 ConfigMap is fine, just saying' }]);
      const error = await client.request('GET', `${path}/absent`, 'get').catch((e: unknown) => e);
      t.ok(error instanceof KubeApiError && error.reason === 'NotFound');
      await client.request('GET', `${path}/present`, 'get');
      t.same(
        served.versions,
        http2 ? ['2.0', '2.0', '2.0'] : ['1.1', '1.1', '1.1'],
        http2 ? 'every request a stream of one HTTP/2 connection' : 'HTTP/1.1 after one refusal',
      );
    },
  );
}

t.test(
  'kube client - a request whose HTTP/2 connection goes away before the answer fails, not waits forever',
  async (t) => {
    const ca = await createCertificateAuthority('test-ca');
    const leaf = await issueCertificate(ca, {
      commonName: 'localhost',
      hosts: ['127.0.0.1'],
      usage: 'server',
    });
    // Takes the request, then drops the whole connection without a word (a server going away).
    const server = createSecureServer({ cert: leaf.certPem, key: leaf.keyPem }, (req) => {
      req.stream.session?.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const client = KubeClient.fromConnection('c1', {
      server: `https://127.0.0.1:${port}`,
      ca: ca.certPem,
    });
    t.teardown(() => client.close());
    const error = await client
      .request('GET', '/api/v1/namespaces/default/configmaps/x', 'get')
      .catch((e: unknown) => e);
    t.ok(error instanceof KubeApiError && error.reason === 'ServiceUnavailable', String(error));
  },
);
