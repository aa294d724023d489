// The bus pipe (shared/bus/pipe.ts) on a real nats-server: JetStream publishes and their
// refusals, one-way messages in order, and requests that get no answer.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import t, { type Test } from 'tap';
import { openBackbone } from '../../shared/bus/backbone.js';
import {
  BusPipe,
  BusRequestError,
  JetStreamPublishError,
  wrongLastSequence,
} from '../../shared/bus/pipe.js';
import { natsServerFor } from '../harness/nats.js';
import { waitFor } from '../harness/wait.js';

async function connected(t: Test, url: string): Promise<NatsConnection> {
  const nc = await connect({ servers: url });
  t.teardown(() => nc.close());
  return nc;
}

t.test('bus pipe - a publish resolves with the ack and de-duplicates by message id', async (t) => {
  const server = await natsServerFor(t);
  const backbone = await openBackbone(await connected(t, server.url));
  const first = await backbone.pipe.publish('olmq.work.f.c1.a', undefined, { msgID: 'one' });
  const again = await backbone.pipe.publish('olmq.work.f.c1.a', undefined, { msgID: 'one' });
  t.equal(first.stream, 'OLMQ_WORK');
  t.ok(first.seq > 0);
  t.notOk(first.duplicate);
  t.ok(again.duplicate, 'the same message id is stored once');
  t.equal(again.seq, first.seq);
});

t.test(
  'bus pipe - a publish expecting an empty subject is refused once the subject holds a message',
  async (t) => {
    const server = await natsServerFor(t);
    const backbone = await openBackbone(await connected(t, server.url));
    const subject = '$KV.olmq_leases.f.c1.k';
    const created = await backbone.pipe.publish(subject, 'me', { expectLastSubjectSequence: 0 });
    t.equal((await backbone.leases.get('f.c1.k'))?.string(), 'me');
    const refused = await backbone.pipe
      .publish(subject, 'other', { expectLastSubjectSequence: 0 })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    t.ok(refused instanceof JetStreamPublishError);
    t.equal((refused as JetStreamPublishError).errCode, wrongLastSequence);
    const next = await backbone.pipe.publish(subject, 'me', {
      expectLastSubjectSequence: created.seq,
    });
    t.ok(next.seq > created.seq, 'the holder updates by its revision');
  },
);

t.test('bus pipe - unanswered requests and actions run in the order given', async (t) => {
  const server = await natsServerFor(t);
  const nc = await connected(t, server.url);
  const pipe = new BusPipe(nc);
  const seen: string[] = [];
  nc.subscribe('order.>', { callback: (_error, msg) => void seen.push(msg.subject) });
  await nc.flush();
  pipe.sendRequest('order.1');
  pipe.later(() => nc.publish('order.2'));
  pipe.sendRequest('order.3');
  await waitFor('three messages', () => seen.length === 3);
  t.same(seen, ['order.1', 'order.2', 'order.3']);
});

t.test(
  'bus pipe - a request sent for its effect alone is served; its answer never comes back',
  async (t) => {
    const server = await natsServerFor(t);
    const nc = await connected(t, server.url);
    const service = await connected(t, server.url);
    const pipe = new BusPipe(nc);
    const replies: string[] = [];
    service.subscribe('svc', {
      callback: (_error, msg) => {
        replies.push(msg.reply ?? '');
        msg.respond('answer');
      },
    });
    await service.flush();
    const before = nc.stats().inMsgs;
    pipe.sendRequest('svc', 'x');
    await waitFor('the request served', () => replies.length === 1);
    t.not(replies[0], '', 'the service is given a subject to answer to');
    await service.flush(); // the answer has reached the server
    await nc.flush(); // anything the server had for this connection has arrived
    t.equal(nc.stats().inMsgs, before, 'no answer is delivered to the sender');
  },
);

t.test('bus pipe - a request nobody serves fails as no responders', async (t) => {
  const server = await natsServerFor(t);
  const pipe = new BusPipe(await connected(t, server.url));
  const error = await pipe.request('nobody.here').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(error instanceof BusRequestError);
  t.equal((error as BusRequestError).reason, 'no-responders');
});

t.test('bus pipe - a request left unanswered times out', async (t) => {
  const server = await natsServerFor(t);
  const nc = await connected(t, server.url);
  nc.subscribe('silent', { callback: () => undefined });
  await nc.flush();
  const pipe = new BusPipe(nc, 200);
  const error = await pipe.request('silent').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.equal((error as BusRequestError).reason, 'timeout');
});

t.test('bus pipe - requests in flight fail at once when the connection drops', async (t) => {
  const server = await natsServerFor(t);
  const nc = await connect({ servers: server.url, reconnectTimeWait: 100 });
  t.teardown(() => nc.close());
  nc.subscribe('silent', { callback: () => undefined });
  await nc.flush();
  const pipe = new BusPipe(nc, 60_000);
  const pending = pipe.request('silent').then(
    () => undefined,
    (e: unknown) => e,
  );
  pipe.flush();
  await nc.flush(); // the request has reached the server
  await server.kill();
  const error = await pending;
  t.equal((error as BusRequestError).reason, 'disconnected');
});
