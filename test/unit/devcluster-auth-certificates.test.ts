// Cluster certificates, proven by real TLS handshakes (node, and kubectl when installed).
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { KubeConfig, VersionApi } from '@kubernetes/client-node';
import t from 'tap';
import type { ClusterCertificates } from '../../devcluster/auth/index.js';
import { createClusterCertificates } from '../../devcluster/auth/index.js';

const runFile = promisify(execFile);
const serverAuth = '1.3.6.1.5.5.7.3.1';
const clientAuth = '1.3.6.1.5.5.7.3.2';

/** An HTTPS server that answers with the subject of the client certificate it verified. */
async function startServer(
  certs: ClusterCertificates,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server = https.createServer(
    {
      key: certs.serverKeyPem,
      cert: certs.serverCertPem,
      ca: certs.caCertPem,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      const subject = socket.authorized ? { CN: peer.subject.CN, O: peer.subject.O } : null;
      res.setHeader('content-type', 'application/json');
      // The build-metadata suffix tells typed clients (which drop unknown fields) who connected.
      const gitVersion = subject === null ? 'v1.33.0' : `v1.33.0+${String(subject.CN)}`;
      res.end(JSON.stringify({ major: '1', minor: '33', gitVersion, subject }));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function get(options: https.RequestOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.get({ ...options, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
  });
}

void t.test('cluster certificates', async (t) => {
  const certs = await createClusterCertificates(['localhost', '127.0.0.1', '::1']);
  const server = await startServer(certs);
  t.teardown(server.close);

  await t.test(
    'cluster certificates - the admin client certificate is seen as CN=admin, O=system:masters',
    async (t) => {
      const body = await get({
        host: '127.0.0.1',
        port: server.port,
        path: '/version',
        ca: certs.caCertPem,
        cert: certs.adminCertPem,
        key: certs.adminKeyPem,
      });
      t.same(JSON.parse(body).subject, { CN: 'admin', O: 'system:masters' });
    },
  );

  await t.test(
    'cluster certificates - the serving certificate is valid for the requested DNS name',
    async (t) => {
      const body = await get({
        host: '127.0.0.1',
        servername: 'localhost',
        port: server.port,
        path: '/',
        ca: certs.caCertPem,
      });
      t.equal(JSON.parse(body).subject, null, 'no client certificate, no subject');
    },
  );

  await t.test(
    'cluster certificates - @kubernetes/client-node connects with the admin certificate',
    async (t) => {
      const kubeConfig = new KubeConfig();
      const base64 = (pem: string) => Buffer.from(pem).toString('base64');
      kubeConfig.loadFromOptions({
        clusters: [
          {
            name: 'dev',
            server: `https://localhost:${server.port}`,
            caData: base64(certs.caCertPem),
          },
        ],
        users: [
          {
            name: 'admin',
            certData: base64(certs.adminCertPem),
            keyData: base64(certs.adminKeyPem),
          },
        ],
        contexts: [{ name: 'dev', cluster: 'dev', user: 'admin' }],
        currentContext: 'dev',
      });
      const version = await kubeConfig.makeApiClient(VersionApi).getCode();
      t.equal(version.gitVersion, 'v1.33.0+admin');
    },
  );

  await t.test(
    'cluster certificates - a name outside the SANs is refused by the client',
    async (t) => {
      await t.rejects(
        get({
          host: '127.0.0.1',
          servername: 'example.com',
          port: server.port,
          path: '/',
          ca: certs.caCertPem,
        }),
        { code: 'ERR_TLS_CERT_ALTNAME_INVALID' },
      );
    },
  );

  await t.test(
    'cluster certificates - a client trusting another CA refuses the server',
    async (t) => {
      const other = await createClusterCertificates(['localhost']);
      await t.rejects(
        get({ host: '127.0.0.1', port: server.port, path: '/', ca: other.caCertPem }),
      );
    },
  );

  await t.test('cluster certificates - usages and SANs are what Go clients require', (t) => {
    const ca = new X509Certificate(certs.caCertPem);
    const serving = new X509Certificate(certs.serverCertPem);
    const admin = new X509Certificate(certs.adminCertPem);
    t.equal(ca.ca, true);
    t.equal(serving.ca, false);
    t.ok(serving.verify(ca.publicKey) && admin.verify(ca.publicKey), 'signed by the CA');
    t.same(serving.keyUsage, [serverAuth]);
    t.same(admin.keyUsage, [clientAuth]);
    t.equal(
      serving.subjectAltName,
      'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    );
    t.ok(
      serving.checkIP('127.0.0.1') !== undefined && serving.checkHost('localhost') !== undefined,
    );
    t.end();
  });

  const kubectl = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((path) => existsSync(path));
  await t.test(
    'cluster certificates - kubectl (Go TLS) accepts the server and the admin certificate',
    {
      skip:
        kubectl === undefined
          ? 'kubectl is not installed: the Go TLS handshake is not checked'
          : false,
    },
    async (t) => {
      if (kubectl === undefined) return;
      const dir = await mkdtemp(join(tmpdir(), 'olmq-auth-'));
      t.teardown(() => rm(dir, { recursive: true, force: true }));
      const file = (name: string) => join(dir, name);
      await writeFile(file('ca.pem'), certs.caCertPem);
      await writeFile(file('admin.pem'), certs.adminCertPem);
      await writeFile(file('admin-key.pem'), certs.adminKeyPem);
      const kubeconfig = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'dev',
            cluster: {
              server: `https://127.0.0.1:${server.port}`,
              'certificate-authority': file('ca.pem'),
            },
          },
        ],
        users: [
          {
            name: 'admin',
            user: { 'client-certificate': file('admin.pem'), 'client-key': file('admin-key.pem') },
          },
        ],
        contexts: [{ name: 'dev', context: { cluster: 'dev', user: 'admin' } }],
        'current-context': 'dev',
      };
      await writeFile(file('kubeconfig'), JSON.stringify(kubeconfig));
      const { stdout } = await runFile(
        kubectl,
        ['--kubeconfig', file('kubeconfig'), 'get', '--raw', '/version', '--request-timeout=20s'],
        { timeout: 30_000 },
      );
      t.same(JSON.parse(stdout).subject, { CN: 'admin', O: 'system:masters' });
    },
  );
});
