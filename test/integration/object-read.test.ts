// Reading objects from a JetStream object store (catalog indexes, unpacked bundles): the whole
// object in one piece, null for none, and a read whose chunks never come is abandoned with a
// timeout that the function host counts as NATS unavailable (nats.js's own read waits for ever).
// Real nats-server.
import { Objm } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import t from 'tap';
import { readObject } from '../../shared/bus/object-read.js';
import { isBackboneUnavailable } from '../../shared/bus/unavailable.js';
import { natsServerFor } from '../harness/nats.js';

t.test('object read - whole objects, none, and a stalled read abandoned', async (t) => {
  const server = await natsServerFor(t);
  const nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  const store = await new Objm(nc).create('reads', { storage: 'memory' });
  // Several chunks (the default chunk is 128 KiB).
  const body = Buffer.alloc(300 * 1024);
  for (let i = 0; i < body.length; i++) body[i] = (i * 7) % 251;
  await store.putBlob({ name: 'big' }, body);

  const read = await readObject(store, 'big');
  t.ok(read !== null && Buffer.from(read).equals(body), 'read whole, every chunk in order');
  t.equal(await readObject(store, 'missing'), null, 'no such object reads null');

  // The chunks go (as when a stream loses them); the object's info still says they exist.
  const info = await store.info('big');
  const jsm = await jetstreamManager(nc);
  await jsm.streams.purge('OBJ_reads', { filter: `$O.reads.C.${info?.nuid ?? ''}` });
  const stalled = await readObject(store, 'big', 300).then(
    () => undefined,
    (error: unknown) => error,
  );
  t.match(stalled, { message: /reading object big stalled: no data for 300 ms/ });
  t.ok(isBackboneUnavailable(stalled), 'counted as NATS unavailable, so retried, not failed');
});
