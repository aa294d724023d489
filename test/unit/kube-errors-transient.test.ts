// Which API failures are transient (waited out without counting) and how long the server asked
// us to wait: shared/kube/errors.ts.
import t from 'tap';
import {
  KubeApiError,
  isTransientApiFailure,
  kubeApiError,
  retryAfterMs,
  retryAfterOf,
} from '../../shared/kube/errors.js';

void t.test(
  'kube errors - no answer (code 0) is retryable and transient (regression: was not retryable)',
  (t) => {
    const error = new KubeApiError('c1', 0, 'ServiceUnavailable', 'GET /api: ECONNREFUSED');
    t.equal(error.retryable, true);
    t.equal(error.transient, true);
    t.end();
  },
);

void t.test(
  'kube errors - 429, 502, 503, 504 and server timeouts are transient; 500, 409, 403, 422 are not',
  (t) => {
    for (const code of [429, 502, 503, 504])
      t.equal(kubeApiError('c1', code, '').transient, true, `${code}`);
    t.equal(new KubeApiError('c1', 500, 'Timeout', 'etcd timeout').transient, true, 'Timeout');
    for (const code of [500, 409, 403, 422, 404])
      t.equal(kubeApiError('c1', code, '').transient, false, `${code}`);
    t.equal(kubeApiError('c1', 500, '').retryable, true, 'a 500 is still retried, and counted');
    t.end();
  },
);

void t.test(
  'kube errors - Retry-After from the header (seconds or date), else from the Status details',
  (t) => {
    t.equal(retryAfterMs('3'), 3000);
    t.equal(retryAfterMs(new Date(10_000).toUTCString(), {}, 4_000), 6_000);
    t.equal(retryAfterMs(undefined, { retryAfterSeconds: 2 }), 2000);
    t.equal(retryAfterMs('soon'), undefined);
    const body = JSON.stringify({
      kind: 'Status',
      reason: 'TooManyRequests',
      message: 'Too many requests, please try again later.',
      details: { retryAfterSeconds: 1 },
    });
    t.equal(kubeApiError('c1', 429, body, '5').retryAfterMs, 5000, 'the header wins');
    t.equal(kubeApiError('c1', 429, body).retryAfterMs, 1000);
    t.end();
  },
);

void t.test('kube errors - transient failures are found through wrapping errors (causes)', (t) => {
  const inner = kubeApiError('c1', 503, '', '2');
  const wrapped = new Error('apply of Deployment x: unavailable', { cause: inner });
  t.equal(isTransientApiFailure(wrapped), true);
  t.equal(retryAfterOf(wrapped), 2000);
  t.equal(isTransientApiFailure(new Error('x', { cause: kubeApiError('c1', 422, '') })), false);
  t.equal(isTransientApiFailure(new Error('plain')), false);
  t.end();
});

void t.test(
  'kube errors - 401 is retried and counted (credentials being rotated); 422 and 404 are not',
  (t) => {
    const unauthorized = kubeApiError('c1', 401, '');
    t.equal(unauthorized.retryable, true, 'the next attempt reads the credentials again');
    t.equal(unauthorized.transient, false, 'counted: a wrong token ends in a dead letter');
    t.equal(kubeApiError('c1', 422, '').retryable, false);
    t.equal(kubeApiError('c1', 404, '').retryable, false);
    t.end();
  },
);
