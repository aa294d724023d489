import { Counter, Registry } from 'prom-client';
import t from 'tap';
import { serveOperations } from '../../shared/runtime/http.js';

t.test('operations endpoint - serves metrics, health and readiness with reasons', async (t) => {
  const registry = new Registry();
  new Counter({
    name: 'olmq_test_total',
    help: 'test',
    registers: [registry],
    labelNames: ['cluster'],
  }).inc({ cluster: 'c1' });
  let natsReason = 'not connected';
  const endpoint = await serveOperations({
    port: 0,
    host: '127.0.0.1',
    registry,
    readiness: { nats: () => natsReason, consumers: () => Promise.resolve('') },
  });
  t.teardown(() => endpoint.close());

  const metrics = await fetch(`${endpoint.url}/metrics`);
  t.equal(metrics.status, 200);
  t.match(await metrics.text(), /olmq_test_total\{cluster="c1"\} 1/);
  t.equal((await fetch(`${endpoint.url}/healthz`)).status, 200);

  const notReady = await fetch(`${endpoint.url}/readyz`);
  t.equal(notReady.status, 503);
  t.match(await notReady.text(), /\[-\] nats failed: not connected/);
  natsReason = '';
  const ready = await fetch(`${endpoint.url}/readyz`);
  t.equal(ready.status, 200);
  t.match(await ready.text(), /\[\+\] nats ok\n\[\+\] consumers ok\nready/);
  t.equal((await fetch(`${endpoint.url}/nope`)).status, 404);
});
