import { existsSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import t from 'tap';
import { NatsServerNotFoundError, startNatsServer } from '../../shared/bus/nats-server.js';
import { natsServerFor } from '../harness/nats.js';

t.test('nats harness - stream and durable consumer round trip on a real nats-server', async (t) => {
  const server = await natsServerFor(t);
  t.match(server.url, /^nats:\/\/127\.0\.0\.1:\d+$/);
  const nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'HARNESS', subjects: ['olmq.test.>'] });
  await jsm.consumers.add('HARNESS', {
    durable_name: 'worker',
    ack_policy: AckPolicy.Explicit,
    filter_subject: 'olmq.test.>',
  });
  const js = jetstream(nc);
  const ack = await js.publish('olmq.test.a', 'hello', { msgID: 'a-1' });
  t.equal(ack.seq, 1);
  const dup = await js.publish('olmq.test.a', 'hello', { msgID: 'a-1' });
  t.ok(dup.duplicate, 'same message id is de-duplicated by JetStream');

  const consumer = await js.consumers.get('HARNESS', 'worker');
  const message = await consumer.next({ expires: 5_000 });
  t.ok(message, 'the durable consumer delivers the message');
  t.equal(message?.string(), 'hello');
  message?.ack();
  const info = await consumer.info();
  t.equal(info.num_pending, 0, 'nothing left to deliver');
});

t.test('nats harness - a restarted server keeps its JetStream data and port', async (t) => {
  const server = await natsServerFor(t);
  const port = server.port;
  let nc = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'KEPT', subjects: ['olmq.kept'] });
  await jetstream(nc).publish('olmq.kept', 'survives');
  await nc.close();

  await server.restart();
  t.equal(server.port, port, 'same port after restart');
  nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  const info = await (await jetstreamManager(nc)).streams.info('KEPT');
  t.equal(info.state.messages, 1, 'the stream still holds its message');
});

t.test('nats harness - stop removes the temp store dir', async (t) => {
  const server = await startNatsServer();
  t.ok(existsSync(server.storeDir));
  await server.stop();
  t.notOk(existsSync(server.storeDir));
});

t.test('nats harness - a missing binary is a clear error', async (t) => {
  await t.rejects(
    startNatsServer({ binary: 'nats-server-that-does-not-exist' }),
    NatsServerNotFoundError,
  );
  await t.rejects(startNatsServer({ binary: 'nats-server-that-does-not-exist' }), {
    message: /nats-server not found/,
  });
});
