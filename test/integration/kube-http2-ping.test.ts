// While streams are open, the HTTP/2 connection to the API server is checked with PINGs: a
// connection that died silently fails its watches instead of leaving them waiting forever, and
// a live one that answers is left alone.
import { createSecureServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { createCertificateAuthority, issueCertificate } from '../../shared/kube/certificates.js';
import { Http2Connection, type Http2HealthCheck } from '../../shared/kube/http2-connection.js';
import { relayTo, type TcpRelay } from '../harness/tcp-relay.js';
import { waitFor } from '../harness/wait.js';

// Short enough for a test, long enough that a busy machine still answers a live PING in time.
const health: Http2HealthCheck = { pingEveryMs: 200, pingTimeoutMs: 500 };
/** Room for timers firing late on a loaded machine. */
const slackMs = 2_000;

interface WatchServer {
  relay: TcpRelay;
  ca: string;
  /** PINGs the server received (and answered, as HTTP/2 servers do by themselves). */
  pings(): number;
}

// An API server whose every request is a watch that answers 200 and then stays quiet, reached
// through a relay that can go silent.
async function watchServer(t: Test): Promise<WatchServer> {
  const ca = await createCertificateAuthority('test-ca');
  const leaf = await issueCertificate(ca, {
    commonName: 'localhost',
    hosts: ['127.0.0.1'],
    usage: 'server',
  });
  const server = createSecureServer({ cert: leaf.certPem, key: leaf.keyPem });
  const sessions = new Set<ServerHttp2Session>();
  let pings = 0;
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('ping', () => pings++);
  });
  server.on('stream', (stream) => {
    stream.on('error', () => undefined); // the client going away ends it
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  );
  const relay = await relayTo(t, (server.address() as AddressInfo).port);
  return { relay, ca: ca.certPem, pings: () => pings };
}

interface OpenWatch {
  /** Set when the watch ended: `error` is what broke it off, if anything. */
  ended: { error: Error | undefined } | undefined;
}

async function openWatch(t: Test, served: WatchServer): Promise<OpenWatch> {
  const connection = new Http2Connection(
    `https://127.0.0.1:${served.relay.port}`,
    { ca: served.ca },
    health,
  );
  t.teardown(() => connection.close());
  const watch: OpenWatch = { ended: undefined };
  const answer = await connection.stream(
    'GET',
    '/api/v1/namespaces/default/configmaps?watch=true',
    {},
    { data: () => undefined, end: (error) => (watch.ended = { error }) },
  );
  t.teardown(() => answer.close());
  t.equal(answer.code, 200, 'the watch is open');
  return watch;
}

t.test(
  'http2 connection - a watch on a connection whose server stops answering PINGs fails within the ping deadline',
  async (t) => {
    const served = await watchServer(t);
    const watch = await openWatch(t, served);
    await waitFor('a PING answered while the link is up', () => served.pings() > 0, slackMs);
    t.equal(watch.ended, undefined, 'the watch is still open while PINGs are answered');

    served.relay.goSilent();
    const silentSince = Date.now();
    const ended = await waitFor(
      'the watch to fail after the link went silent',
      () => watch.ended,
      health.pingEveryMs + health.pingTimeoutMs + slackMs,
    );
    t.match(ended.error?.message, /did not answer a ping/, 'failed by the health check');
    t.comment(`failed ${Date.now() - silentSince} ms after the link went silent`);
  },
);

t.test(
  'http2 connection - a watch on a server that answers PINGs stays open across many checks',
  async (t) => {
    const served = await watchServer(t);
    const watch = await openWatch(t, served);
    const checks = 5;
    await waitFor(
      `${checks} PINGs answered, or the watch ending`,
      () => served.pings() >= checks || watch.ended !== undefined,
      checks * health.pingEveryMs + slackMs,
    );
    t.equal(watch.ended, undefined, 'the watch is still open');
  },
);
