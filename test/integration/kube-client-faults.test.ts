// The devcluster's fault rules (429 with Retry-After, 503, dropped connections, slow answers)
// and how our client rides them out: transient failures retried for a window honouring
// Retry-After, a refused connection reported as a transient error (code 0).
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { writeVerbs } from '../../devcluster/index.js';
import { KubeClient, type KubeObject } from '../../shared/kube/client.js';
import { KubeApiError } from '../../shared/kube/errors.js';
import { createApiRequestCounter } from '../../shared/runtime/metrics.js';
import { rawRequest, startCluster, type ClusterFixture } from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

async function clusterFor(
  t: Test,
  windowMs: number,
): Promise<{ fixture: ClusterFixture; client: KubeClient }> {
  const fixture = await startCluster();
  const client = await KubeClient.fromKubeConfig('c1', fixture.kubeConfig, {
    userAgent: 'olmq-test',
    requests: createApiRequestCounter(new Registry()),
    transientRetryWindowMs: windowMs,
    transientBackoffMs: 50,
  });
  t.teardown(async () => {
    client.close();
    await fixture.close();
  });
  return { fixture, client };
}

const configMap = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data: { v: '1' },
});

const post = (fixture: ClusterFixture, name: string) =>
  rawRequest(
    fixture,
    'POST',
    '/api/v1/namespaces/default/configmaps',
    JSON.stringify(configMap(name)),
  );

t.test(
  'devcluster faults - 429 with Retry-After on chosen verbs and resources, for a count',
  async (t) => {
    const { fixture } = await clusterFor(t, 0);
    const fault = fixture.cluster.faults.inject({
      verbs: writeVerbs,
      resources: ['configmaps'],
      action: { kind: 'answer', code: 429, retryAfterSeconds: 3 },
      count: 1,
    });
    const refused = await post(fixture, 'a');
    t.equal(refused.status, 429);
    t.equal(refused.headers['retry-after'], '3');
    const status = JSON.parse(refused.body) as { reason: string; details?: unknown };
    t.equal(status.reason, 'TooManyRequests');
    t.same(status.details, { retryAfterSeconds: 3 });
    const read = await rawRequest(fixture, 'GET', '/api/v1/namespaces/default/configmaps');
    t.equal(read.status, 200, 'reads are not matched');
    t.equal((await post(fixture, 'a')).status, 201, 'the fault ended after its count');
    t.equal(fault.hits, 1);
    t.equal(fault.active, false);
  },
);

t.test('devcluster faults - a 503 window ends by itself; end() ends a fault at once', async (t) => {
  const { fixture } = await clusterFor(t, 0);
  fixture.cluster.faults.inject({
    resources: ['configmaps'],
    action: { kind: 'answer', code: 503 },
    forMs: 300,
  });
  t.equal((await post(fixture, 'b')).status, 503);
  await waitFor('the window to end', async () => (await post(fixture, 'b')).status === 201);
  const fault = fixture.cluster.faults.inject({
    verbs: ['get'],
    action: { kind: 'answer', code: 500 },
  });
  t.equal(
    (await rawRequest(fixture, 'GET', '/api/v1/namespaces/default/configmaps/b')).status,
    500,
  );
  fault.end();
  t.equal(
    (await rawRequest(fixture, 'GET', '/api/v1/namespaces/default/configmaps/b')).status,
    200,
  );
});

t.test(
  'devcluster faults - drop closes the connection; delay answers late but answers',
  async (t) => {
    const { fixture } = await clusterFor(t, 0);
    fixture.cluster.faults.inject({ verbs: ['create'], action: { kind: 'drop' }, count: 1 });
    await t.rejects(post(fixture, 'c'), 'the connection is gone before an answer');
    const slow = fixture.cluster.faults.inject({
      verbs: ['create'],
      action: { kind: 'delay', ms: 200 },
      count: 1,
    });
    t.equal((await post(fixture, 'c')).status, 201);
    t.equal(slow.hits, 1);
  },
);

t.test('kube client - rides out a brownout of 503s on writes and succeeds after it', async (t) => {
  const { fixture, client } = await clusterFor(t, 20_000);
  const fault = fixture.cluster.faults.inject({
    verbs: writeVerbs,
    action: { kind: 'answer', code: 503 },
    forMs: 1_000,
  });
  const created = await client.create(configMap('brownout'));
  t.equal(created.metadata.name, 'brownout');
  t.ok(fault.hits >= 2, `retried through the window (${fault.hits} refused tries)`);
});

t.test(
  'kube client - endRetries ends a retrying request at once and later ones try once (a shutdown does not wait out the window)',
  async (t) => {
    const { fixture, client } = await clusterFor(t, 600_000);
    const fault = fixture.cluster.faults.inject({
      verbs: writeVerbs,
      action: { kind: 'answer', code: 503 },
    });
    let settled: unknown;
    const retrying = client.create(configMap('draining')).then(
      () => (settled = 'created'),
      (e: unknown) => (settled = e),
    );
    await waitFor('the create to be refused twice', () => fault.hits >= 2);
    t.equal(settled, undefined, 'still retrying in its 10-minute window');
    client.endRetries();
    await retrying;
    t.type(settled, KubeApiError);
    t.equal((settled as KubeApiError).code, 503);
    const before = fault.hits;
    const error = await client.create(configMap('after')).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.equal((error as KubeApiError).code, 503, 'fails with the answer it got');
    t.equal(fault.hits - before, 1, 'tried once');
    fault.end();
  },
);

t.test(
  'kube client - honours Retry-After, and after its window reports a transient 429',
  async (t) => {
    const { fixture, client } = await clusterFor(t, 2_500);
    const fault = fixture.cluster.faults.inject({
      verbs: ['create'],
      action: { kind: 'answer', code: 429, retryAfterSeconds: 1 },
    });
    const error = await client.create(configMap('throttled')).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(error, KubeApiError);
    const apiError = error as KubeApiError;
    t.equal(apiError.code, 429);
    t.equal(apiError.transient, true);
    t.equal(apiError.retryAfterMs, 1000);
    // Backoff alone (50 ms, doubling) would have tried about ten times in 2.5 s.
    t.ok(fault.hits >= 2 && fault.hits <= 3, `tried once per Retry-After (${fault.hits} tries)`);
  },
);

t.test(
  'kube client - a refused connection is a transient error with code 0 (regression: was not retryable)',
  async (t) => {
    const client = KubeClient.fromConnection(
      'gone',
      { server: 'https://127.0.0.1:1' },
      { transientRetryWindowMs: 300, transientBackoffMs: 50 },
    );
    t.teardown(() => client.close());
    const error = await client.request('GET', '/api/v1/namespaces', 'list').then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(error, KubeApiError);
    t.equal((error as KubeApiError).code, 0);
    t.equal((error as KubeApiError).retryable, true);
    t.equal((error as KubeApiError).transient, true);
  },
);

t.test(
  'devcluster faults - the admin endpoint injects, lists and ends faults; bad rules are a 400 naming the field',
  async (t) => {
    const { fixture } = await clusterFor(t, 0);
    const rule = {
      verbs: ['create'],
      resources: ['configmaps'],
      action: { kind: 'answer', code: 503 },
    };
    const made = await rawRequest(fixture, 'POST', '/devcluster/faults', JSON.stringify(rule));
    t.equal(made.status, 201);
    const { id } = JSON.parse(made.body) as { id: string };
    t.equal((await post(fixture, 'd')).status, 503);
    const listed = JSON.parse((await rawRequest(fixture, 'GET', '/devcluster/faults')).body) as {
      items: { id: string; hits: number; active: boolean }[];
    };
    t.same(
      listed.items.map(({ id, hits, active }) => ({ id, hits, active })),
      [{ id, hits: 1, active: true }],
    );
    t.equal((await rawRequest(fixture, 'DELETE', `/devcluster/faults/${id}`)).status, 200);
    t.equal((await post(fixture, 'd')).status, 201, 'ended');

    const invalid = await rawRequest(
      fixture,
      'POST',
      '/devcluster/faults',
      JSON.stringify({ action: { kind: 'answer', code: 418 } }),
    );
    t.equal(invalid.status, 400);
    t.match(JSON.parse(invalid.body), { message: /^invalid fault rule: action\.code/ });
    const anonymous = await rawRequest(fixture, 'GET', '/devcluster/faults', undefined, {}, 'none');
    t.equal(anonymous.status, 401, 'not for anonymous callers');
  },
);
