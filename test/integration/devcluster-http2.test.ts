// HTTP/2, as kubectl and client-go negotiate it (ALPN h2): the same API as over HTTP/1.1, with
// client certificates, impersonation, streamed watches and the body limit.
import type { ClientHttp2Session } from 'node:http2';
import t from 'tap';
import {
  http2Request,
  http2Session,
  rawRequest,
  startCluster,
  type ClusterFixture,
} from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

let fixture: ClusterFixture;
let session: ClientHttp2Session;
const cms = '/api/v1/namespaces/default/configmaps';
const secrets = '/api/v1/namespaces/kube-system/secrets';

t.before(async () => {
  fixture = await startCluster();
  session = await http2Session(fixture);
});
t.teardown(async () => {
  session.close();
  await fixture.close();
});

const statusOf = (body: string) => JSON.parse(body) as { reason?: string; message?: string };

void t.test(
  'http2 - a client offering h2 gets HTTP/2, a client offering only HTTP/1.1 gets HTTP/1.1',
  async (t) => {
    t.equal(session.alpnProtocol, 'h2');
    const overHttp2 = await http2Request(session, 'GET', '/api/v1/namespaces');
    t.equal(overHttp2.status, 200);
    const overHttp1 = await rawRequest(fixture, 'GET', '/api/v1/namespaces');
    t.equal(overHttp1.status, 200);
    t.same(
      (JSON.parse(overHttp2.body) as { items: unknown[] }).items.length,
      (JSON.parse(overHttp1.body) as { items: unknown[] }).items.length,
    );
  },
);

void t.test(
  'http2 - the client certificate is the identity of every stream of the connection',
  async (t) => {
    for (let i = 0; i < 3; i++) t.equal((await http2Request(session, 'GET', secrets)).status, 200);
    const anonymous = await http2Session(fixture, 'none');
    try {
      const response = await http2Request(anonymous, 'GET', secrets, undefined, {
        authorization: 'Bearer not-a-token',
      });
      t.equal(response.status, 401);
      t.equal(statusOf(response.body).reason, 'Unauthorized');
    } finally {
      anonymous.close();
    }
  },
);

void t.test(
  'http2 - repeated Impersonate-Group headers are each a group, kept whole',
  async (t) => {
    // A group name holding ", " proves the values are not joined and split again.
    const binding = await http2Request(
      session,
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      JSON.stringify({
        metadata: { name: 'team-blue-admin' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'cluster-admin',
        },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'team, blue' }],
      }),
    );
    t.equal(binding.status, 201);
    const inTeam = await http2Request(session, 'GET', secrets, undefined, {
      'impersonate-user': 'alice',
      'impersonate-group': ['developers', 'team, blue'],
    });
    t.equal(inTeam.status, 200);
    const outOfTeam = await http2Request(session, 'GET', secrets, undefined, {
      'impersonate-user': 'alice',
      'impersonate-group': ['developers', 'team', 'blue'],
    });
    t.equal(outOfTeam.status, 403);
    t.match(
      statusOf(outOfTeam.body).message,
      'User "alice" cannot list resource "secrets" in API group "" in the namespace "kube-system"',
    );
  },
);

void t.test(
  'http2 - a watch delivers each event while it is open and ends at timeoutSeconds',
  async (t) => {
    const stream = session.request({
      ':method': 'GET',
      ':path': `${cms}?watch=true&allowWatchBookmarks=true&timeoutSeconds=2&fieldSelector=metadata.name%3Dwatched`,
    });
    stream.end();
    let status = 0;
    let received = '';
    let ended = false;
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    stream.on('end', () => (ended = true));
    await waitFor('the watch answered', () => status === 200, 5000);
    const created = await http2Request(
      session,
      'POST',
      cms,
      JSON.stringify({ metadata: { name: 'watched' }, data: { a: '1' } }),
    );
    t.equal(created.status, 201);
    await waitFor('the ADDED event arrived', () => received.includes('"ADDED"'), 5000);
    t.notOk(ended, 'the event came while the watch was still open');
    await waitFor('the watch ended', () => ended, 10_000);
    const types = received
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type);
    t.same(types, ['ADDED', 'BOOKMARK']);
  },
);

void t.test('http2 - a body over 3 MiB is a 413 and the connection keeps serving', async (t) => {
  const big = JSON.stringify({
    metadata: { name: 'big' },
    data: { blob: 'x'.repeat(4 * 1024 * 1024) },
  });
  const response = await http2Request(session, 'POST', cms, big);
  t.equal(response.status, 413);
  t.equal(statusOf(response.body).reason, 'RequestEntityTooLarge');
  t.equal((await http2Request(session, 'GET', '/version')).status, 200);
});

void t.test(
  'http2 - a watch the client resets while events are pending leaves the server serving',
  async (t) => {
    const stream = session.request({ ':method': 'GET', ':path': `${cms}?watch=true` });
    stream.end();
    let status = 0;
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('error', () => undefined);
    await waitFor('the watch answered', () => status === 200, 5000);
    const writes = Array.from({ length: 20 }, (_, i) =>
      http2Request(session, 'POST', cms, JSON.stringify({ metadata: { name: `burst-${i}` } })),
    );
    stream.close();
    for (const write of await Promise.all(writes)) t.equal(write.status, 201);
    t.equal((await http2Request(session, 'GET', cms)).status, 200);
    t.equal((await rawRequest(fixture, 'GET', cms)).status, 200);
  },
);

void t.test('http2 - HEAD answers carry the headers without a body', async (t) => {
  const response = await http2Request(session, 'HEAD', '/version');
  t.equal(response.status, 200);
  t.equal(response.body, '');
});

void t.test('http2 - a write warns of unknown fields in a Warning header', async (t) => {
  const response = await http2Request(
    session,
    'POST',
    cms,
    JSON.stringify({ metadata: { name: 'warned' }, data: { a: '1' }, bogus: true }),
  );
  t.equal(response.status, 201);
  t.same(response.headers['warning'], '299 - "unknown field \\"bogus\\""');
});

void t.test(
  'http2 - a request the client resets before sending its body leaves the server serving',
  async (t) => {
    const stream = session.request({ ':method': 'POST', ':path': cms });
    stream.on('error', () => undefined);
    stream.write('{"metadata":');
    // INTERNAL_ERROR, not CANCEL: node reports it as an error on the server's stream.
    stream.close(0x2);
    await waitFor('the stream closed', () => stream.closed, 5000);
    const created = await http2Request(
      session,
      'POST',
      cms,
      JSON.stringify({ metadata: { name: 'after-reset' } }),
    );
    t.equal(created.status, 201);
    t.equal((await rawRequest(fixture, 'GET', `${cms}/after-reset`)).status, 200);
  },
);
