// The devcluster's request log (debug level): one line per request once it is over, with the
// code it got, over HTTP/1.1 and HTTP/2 (kubectl).
import t from 'tap';
import { kubectl, kubectlMissing, rawRequest, startCluster } from '../harness/devcluster.js';
import { capturingLogger } from '../harness/log.js';
import { waitFor } from '../harness/wait.js';

interface RequestLine {
  msg: string;
  verb: string;
  uri: string;
  code: number;
  ms: number;
  userAgent?: string;
}

const requestLines = (lines: Record<string, unknown>[]): RequestLine[] =>
  lines.filter((l) => l['msg'] === 'request') as unknown as RequestLine[];

void t.test('devcluster request log - each request with its code, at debug level', async (t) => {
  const { log, lines } = capturingLogger('debug');
  const fixture = await startCluster({ logger: log });
  t.teardown(() => fixture.close());
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } });
  const created = await rawRequest(fixture, 'POST', '/api/v1/namespaces/default/configmaps', body);
  t.equal(created.status, 201);
  const again = await rawRequest(fixture, 'POST', '/api/v1/namespaces/default/configmaps', body);
  t.equal(again.status, 409);
  const logged = await waitFor('both creates in the request log', () => {
    const posts = requestLines(lines).filter(
      (l) => l.verb === 'POST' && l.uri === '/api/v1/namespaces/default/configmaps',
    );
    return posts.length === 2 ? posts : undefined;
  });
  t.same(
    logged.map((l) => l.code),
    [201, 409],
  );
  t.ok(
    logged.every((l) => typeof l.ms === 'number' && l.ms >= 0),
    'each line says how long it took',
  );

  if (kubectlMissing() === undefined) {
    const result = await kubectl(fixture, ['get', 'configmap', 'a', '-n', 'default']);
    t.equal(result.code, 0, result.stderr);
    const get = await waitFor('kubectl GET in the request log', () =>
      requestLines(lines).find(
        (l) => l.verb === 'GET' && l.uri.startsWith('/api/v1/namespaces/default/configmaps/a'),
      ),
    );
    t.equal(get.code, 200);
    t.match(get.userAgent, /^kubectl/, 'the client is named');
  }
});
