// Supervised consumes (shared/bus/supervised-consumer.ts) on a real nats-server: a consume that
// ends by itself, or that stops pulling while messages wait (what a SIGKILLed cluster server
// left behind in bench/chaos-nats.ts), is opened again and its messages keep coming; a loop
// that is merely busy is left alone; on a real 3-node cluster, a consume whose consumer's leader
// died is opened again when the next leader is elected.
import { connect } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import t, { type Test } from 'tap';
import { openBackbone, type Backbone } from '../../shared/bus/backbone.js';
import {
  superviseConsumer,
  type SupervisedMessages,
} from '../../shared/bus/supervised-consumer.js';
import { addWorkConsumer, consumeWork, publishWork } from '../../shared/bus/work-queue.js';
import { capturingLogger } from '../harness/log.js';
import { natsServerFor } from '../harness/nats.js';
import { natsClusterFor } from '../harness/nats-cluster.js';
import { waitFor } from '../harness/wait.js';

const options = { ackWaitMs: 30_000, concurrency: 2 };
const checks = { checkEveryMs: 100, stalledChecks: 2, retryMs: 100 };

async function backboneFor(t: Test): Promise<Backbone> {
  const server = await natsServerFor(t);
  const nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  return openBackbone(nc);
}

/** Handles every message (acking it), recording the last key word of its subject. */
function drain(messages: SupervisedMessages, seen: string[], busyMs = 0): Promise<void> {
  return (async () => {
    for await (const m of messages as AsyncIterable<JsMsg>) {
      if (busyMs > 0) await new Promise((resolve) => setTimeout(resolve, busyMs));
      seen.push(m.subject.split('.').pop() ?? '');
      m.ack();
    }
  })();
}

const send = (backbone: Backbone, queue: string, key: string): Promise<unknown> =>
  publishWork(backbone, { queue, cluster: 'c1', key: ['item', key] }, `${queue}-${key}`);

t.test('supervised consumer - a consume that ends by itself is opened again', async (t) => {
  const backbone = await backboneFor(t);
  const { log, lines } = capturingLogger('warn');
  const open = () => consumeWork(backbone, 'ends', options);
  const { consumer, messages: first } = await open();
  const messages = superviseConsumer(
    backbone,
    consumer,
    first,
    async () => (await open()).messages,
    log,
    checks,
  );
  t.teardown(() => messages.stop());
  const seen: string[] = [];
  const loop = drain(messages, seen);

  await send(backbone, 'ends', 'before');
  await waitFor('the first item', () => seen.includes('before'));
  first.stop(); // as the client library does when it gives a consume up
  await send(backbone, 'ends', 'after');
  await waitFor('the item sent after the consume ended', () => seen.includes('after'));
  t.equal(messages.reopened, 1, 'opened once more');
  t.ok(
    lines.some((l) => l.msg === 'consumer ended; opening it again'),
    'the reopening is logged',
  );
  messages.stop();
  await loop;
  t.pass('stop ends the iteration');
});

t.test('supervised consumer - a consume that stopped pulling is opened again', async (t) => {
  const backbone = await backboneFor(t);
  const { log, lines } = capturingLogger('warn');
  const consumer = await addWorkConsumer(backbone, 'stalls', options);
  // A consume whose pulls never reach the consumer: the state a lost pull request leaves.
  const { messages: deaf } = await consumeWork(backbone, 'elsewhere', options);
  const messages = superviseConsumer(
    backbone,
    consumer,
    deaf,
    async () => (await consumeWork(backbone, 'stalls', options)).messages,
    log,
    checks,
  );
  t.teardown(() => messages.stop());
  const seen: string[] = [];
  const loop = drain(messages, seen);

  await send(backbone, 'stalls', 'waiting');
  await waitFor('the pending item to be delivered', () => seen.includes('waiting'), 10_000);
  t.equal(messages.reopened, 1, 'opened once more');
  const warning = lines.find((l) => String(l.msg).startsWith('consumer stalled'));
  t.match(warning, { consumer: 'stalls-work', pending: 1 }, 'the stall is logged');
  messages.stop();
  await loop;
});

t.test('supervised consumer - a busy loop is not taken for a stall', async (t) => {
  const backbone = await backboneFor(t);
  const { log } = capturingLogger('warn');
  const open = () => consumeWork(backbone, 'busy', { ...options, concurrency: 1 });
  const { consumer, messages: first } = await open();
  const messages = superviseConsumer(
    backbone,
    consumer,
    first,
    async () => (await open()).messages,
    log,
    checks,
  );
  t.teardown(() => messages.stop());
  const seen: string[] = [];
  // Each item keeps the loop busy for ten check periods while the others wait on the server.
  const loop = drain(messages, seen, 1_000);
  for (const key of ['a', 'b', 'c']) await send(backbone, 'busy', key);
  await waitFor('every item', () => seen.length === 3, 15_000);
  t.same([...seen].sort(), ['a', 'b', 'c']);
  t.equal(messages.reopened, 0, 'never reopened');
  messages.stop();
  await loop;
});

t.test(
  "supervised consumer - when the server leading the consumer dies, the new leader's election reopens the consume",
  async (t) => {
    const cluster = await natsClusterFor(t);
    // Connected to server 0 only: the server that dies is never the one we talk through.
    const nc = await connect({ servers: cluster.servers[0]?.url ?? '' });
    t.teardown(() => nc.close());
    const backbone = await openBackbone(nc, { replicas: 3 });
    const { log, lines } = capturingLogger('warn');
    const open = () => consumeWork(backbone, 'failover', options);
    const { consumer, messages: first } = await open();
    const leader = async (): Promise<string | undefined> =>
      (await backbone.jsm.consumers.info(consumer.stream, consumer.name)).cluster?.leader;
    // Moved off server 0 by asking its leader to step down until another leads it.
    await waitFor(
      'a leader other than server 0',
      async () => {
        const now = await leader();
        if (now !== undefined && now !== 'olmq-n0') return true;
        await nc
          .request(`$JS.API.CONSUMER.LEADER.STEPDOWN.${consumer.stream}.${consumer.name}`)
          .catch(() => undefined);
        return false;
      },
      30_000,
      500,
    );
    // No periodic look within the test: only the election can bring the consume back.
    const messages = superviseConsumer(
      backbone,
      consumer,
      first,
      async () => (await open()).messages,
      log,
      { ...checks, checkEveryMs: 600_000 },
    );
    t.teardown(() => messages.stop());
    const seen: string[] = [];
    const loop = drain(messages, seen);
    await send(backbone, 'failover', 'before');
    await waitFor('the item sent before the failover', () => seen.includes('before'), 10_000);

    const dying = Number((await leader())?.replace('olmq-n', ''));
    await cluster.kill(dying);
    await waitFor(
      'a new leader',
      async () => {
        const now = await leader().catch(() => undefined);
        return now !== undefined && now !== `olmq-n${dying}`;
      },
      30_000,
      200,
    );
    await waitFor(
      'the item to be sent',
      () =>
        send(backbone, 'failover', 'after').then(
          () => true,
          () => false,
        ),
      30_000,
      200,
    );
    // Within nats.js's own heartbeat recovery (two missed heartbeats of 15 s): the election did it.
    await waitFor('the item sent after the failover', () => seen.includes('after'), 20_000);
    t.ok(
      lines.some((l) => String(l.msg).startsWith('consumer has a new leader that holds no pull')),
      'the reopening after the election is logged',
    );
    t.ok(messages.reopened >= 1, 'opened again');
    messages.stop();
    await loop;
  },
);
