// The ledger of own writes on a real devcluster, watcher and nats-server: right after a write,
// a load may decide on the mirror only once the mirror shows that write (a stalled watch keeps
// it from doing so), and after a conflict only once the API was read.
import t from 'tap';
import { listMirrored } from '../../shared/bus/mirror-read.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { executeWrites, StaleDecisionError } from '../../shared/kube/executor.js';
import { OwnWrites } from '../../shared/kube/own-writes.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { waitFor } from '../harness/wait.js';
import { stallWatcherWatch, watcherFor } from '../harness/watcher.js';

const role = (labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name: 'r', namespace: 'ow', labels },
  rules: [],
});

const roleRef = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  namespace: 'ow',
  name: 'r',
};

t.test('own writes - a write the mirror does not show yet sends the load to the API', async (t) => {
  const { fixture, client } = await clusterFor(t);
  const backbone = await backboneFor(t);
  await watcherFor(t, fixture, backbone);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ow' } });
  await client.create(role());
  const mirrored = () =>
    listMirrored<KubeObject>(backbone, { cluster: 'c1', kind: 'Role', namespace: 'ow' });
  await waitFor('the Role in the mirror', async () => (await mirrored()).length === 1, 15_000);

  const ledger = new OwnWrites();
  const shown = async () => ledger.shownIn('c1', 'ow', { Role: await mirrored() });
  t.ok(await shown(), 'nothing written yet: the mirror stands');

  // The watcher's Role watch goes quiet: what is written now stays out of the mirror.
  const stall = await stallWatcherWatch(fixture, 'rbac.authorization.k8s.io/roles');

  const current = await client.get(roleRef);
  const update = {
    ...role({ step: 'one' }),
    metadata: { ...current!.metadata, labels: { step: 'one' } },
  };
  await executeWrites(
    client,
    [{ op: 'update', object: update }],
    'test',
    ledger.observer('c1', ['Role']),
  );
  const written = (await client.get(roleRef))?.metadata.resourceVersion;
  t.equal(ledger.unseen, 1, 'the write is recorded');
  const lagging = await mirrored();
  t.not(lagging[0]?.metadata.resourceVersion, written, 'the mirror lags the write');
  t.notOk(await shown(), 'so the load reads the API');

  stall.end();
  await waitFor('the mirror to show the write', shown, 30_000);
  t.equal((await mirrored())[0]?.metadata.labels?.['step'], 'one', 'as written');
  t.equal(ledger.unseen, 0, 'and the ledger forgot it');

  // Another writer changes the Role; a write on the older version conflicts.
  const before = await client.get(roleRef);
  await client.update({ ...before!, metadata: { ...before!.metadata, labels: { step: 'other' } } });
  const stale = { ...before!, metadata: { ...before!.metadata, labels: { step: 'two' } } };
  await t.rejects(
    executeWrites(
      client,
      [{ op: 'update', object: stale }],
      'test',
      ledger.observer('c1', ['Role']),
    ),
    StaleDecisionError,
  );
  ledger.conflicted('c1', 'ow');
  await waitFor(
    'the mirror to show the other write',
    async () => (await mirrored())[0]?.metadata.labels?.['step'] === 'other',
    30_000,
  );
  t.notOk(await shown(), 'after a conflict the mirror does not stand, even caught up');
  ledger.readFromApi('c1', 'ow');
  t.ok(await shown(), 'once the API was read, it does again');
});
