// olmq_nats_messages_total reports what the process's NATS connections carried so far, read
// from them at each scrape.
import t from 'tap';
import { Registry } from 'prom-client';
import { createNatsMessageCounter } from '../../shared/runtime/metrics.js';

t.test('the counter reads every connection of the registry at scrape time', async (t) => {
  const registry = new Registry();
  const first = { inMsgs: 3, outMsgs: 5 };
  const second = { inMsgs: 10, outMsgs: 0 };
  createNatsMessageCounter(registry, () => first);
  createNatsMessageCounter(registry, () => second);
  t.match(await registry.metrics(), /olmq_nats_messages_total\{direction="in"\} 13\n/);
  t.match(await registry.metrics(), /olmq_nats_messages_total\{direction="out"\} 5\n/);
  first.outMsgs = 7;
  t.match(await registry.metrics(), /olmq_nats_messages_total\{direction="out"\} 7\n/);
  t.equal(
    (await registry.metrics()).match(/^# TYPE olmq_nats_messages_total counter$/gm)?.length,
    1,
    'one metric however many connections',
  );
});
