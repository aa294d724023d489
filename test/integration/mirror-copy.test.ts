// A function process's live copy of the mirror (shared/bus/mirror-copy.ts) on the NATS server the
// tests run: reads through it answer what reads of NATS answer, once a kind is kept, through
// updates, deletions and a fill racing with writes.
import t, { type Test } from 'tap';
import type { Backbone } from '../../shared/bus/backbone.js';
import { putMirrorValue } from '../../shared/bus/large-values.js';
import { LiveMirrorCopy } from '../../shared/bus/mirror-copy.js';
import {
  getMirrored,
  listMirrored,
  namespacesHolding,
  namespacesWith,
} from '../../shared/bus/mirror-read.js';
import { lazyMirrorView } from '../../shared/bus/mirror-view.js';
import { mirrorStream, objectKey } from '../../shared/bus/subjects.js';
import { backboneFor } from '../harness/backbone.js';
import { waitFor } from '../harness/wait.js';

interface Group {
  metadata: { name: string; namespace: string };
  spec: { n: number; pad?: string };
}

const ref = (namespace: string, name: string, kind = 'OperatorGroup') => ({
  cluster: 'c1',
  kind,
  namespace,
  name,
});

const putGroup = (backbone: Backbone, namespace: string, name: string, n: number) =>
  backbone.objects.put(
    objectKey(ref(namespace, name)),
    JSON.stringify({ metadata: { name, namespace }, spec: { n } } satisfies Group),
  );

// The backbone a function process hands its functions, with its copy (stopped at teardown).
function withCopy(t: Test, backbone: Backbone): Backbone & { copy: LiveMirrorCopy } {
  const copy = new LiveMirrorCopy(backbone);
  t.teardown(() => copy.stop());
  return { ...backbone, copy };
}

// Every group of the cluster as name → n, by the given reader.
async function groups(mirror: Backbone): Promise<Record<string, number>> {
  const all = await listMirrored<Group>(mirror, { cluster: 'c1', kind: 'OperatorGroup' });
  const pairs = all.map((g): [string, number] => [
    `${g.metadata.namespace}/${g.metadata.name}`,
    g.spec.n,
  ]);
  return Object.fromEntries(pairs.sort((a, b) => a[0].localeCompare(b[0])));
}

// Reads the kind through the copy until it keeps it (the first read starts its fill).
async function kept(mirror: Backbone & { copy: LiveMirrorCopy }, kind = 'OperatorGroup') {
  await mirror.copy.reached('c1');
  await waitFor(`the copy keeps ${kind}`, () => mirror.copy.entries('c1', kind) !== undefined);
}

t.test('mirror copy - reads answer what NATS answers, through updates and deletions', async (t) => {
  const backbone = await backboneFor(t);
  await putGroup(backbone, 'a', 'og', 1);
  await putGroup(backbone, 'b', 'og', 1);
  await putGroup(backbone, 'b', 'other', 1);
  const functions = withCopy(t, backbone);
  t.equal(
    functions.copy.text(objectKey(ref('a', 'og'))),
    undefined,
    'a cluster not followed yet: the copy keeps nothing, reads go to NATS',
  );
  t.equal((await getMirrored<Group>(functions, ref('a', 'og')))?.spec.n, 1);
  await kept(functions);
  t.same(await groups(functions), await groups(backbone), 'the fill holds what was there');

  await putGroup(backbone, 'a', 'og', 2);
  await backbone.objects.delete(objectKey(ref('b', 'other')));
  await putGroup(backbone, 'c', 'og', 1);
  await functions.copy.reached('c1');
  t.equal(functions.copy.text(objectKey(ref('b', 'other'))), null, 'a deletion is kept as absent');
  t.equal((await getMirrored<Group>(functions, ref('a', 'og')))?.spec.n, 2, 'the latest value');
  t.equal(await getMirrored(functions, ref('b', 'other')), undefined, 'a deleted object');
  t.same(await groups(functions), { 'a/og': 2, 'b/og': 1, 'c/og': 1 });
  t.same(await groups(functions), await groups(backbone));
  t.same(
    (await listMirrored<Group>(functions, { ...ref('b', 'og'), namespace: 'b' })).map(
      (g) => g.metadata.name,
    ),
    ['og'],
    'one namespace',
  );
  t.same(await namespacesWith(functions, { cluster: 'c1', kind: 'OperatorGroup' }), [
    'a',
    'b',
    'c',
  ]);
  t.same((await namespacesHolding(functions, ref('', 'og'))).sort(), ['a', 'b', 'c']);

  // A change seen by another consumer, by its sequence: no catch-up round needed.
  const seq = await putGroup(backbone, 'a', 'og', 3);
  await functions.copy.reached('c1', seq);
  t.equal((await getMirrored<Group>(functions, ref('a', 'og')))?.spec.n, 3);
});

t.test('mirror copy - a fill racing with writes ends with what NATS holds', async (t) => {
  const backbone = await backboneFor(t);
  for (let i = 0; i < 200; i++) await putGroup(backbone, `ns${i % 20}`, `og${i}`, 0);
  const functions = withCopy(t, backbone);
  await functions.copy.reached('c1');
  t.equal(functions.copy.entries('c1', 'OperatorGroup'), undefined, 'the first read starts a fill');
  // Writes while the fill runs: updates, deletions, and objects created after it started.
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < 200; i += 3) writes.push(putGroup(backbone, `ns${i % 20}`, `og${i}`, 1));
  for (let i = 1; i < 200; i += 7)
    writes.push(backbone.objects.delete(objectKey(ref(`ns${i % 20}`, `og${i}`))));
  for (let i = 200; i < 230; i++) writes.push(putGroup(backbone, `ns${i % 20}`, `og${i}`, 2));
  await Promise.all(writes);
  await kept(functions);
  await functions.copy.reached('c1');
  const expected = await groups(backbone);
  t.equal(Object.keys(expected).length, 200 - 29 + 30);
  t.same(await groups(functions), expected);
});

t.test('mirror copy - a value too large to publish whole is read in full', async (t) => {
  const backbone = await backboneFor(t);
  const functions = withCopy(t, backbone);
  await kept(functions);
  const pad = 'x'.repeat(1_200_000);
  const group: Group = { metadata: { name: 'big', namespace: 'a' }, spec: { n: 7, pad } };
  await putMirrorValue(backbone, objectKey(ref('a', 'big')), JSON.stringify(group), undefined);
  await functions.copy.reached('c1');
  const read = functions.copy.text(objectKey(ref('a', 'big')));
  t.equal(typeof read === 'string' ? (JSON.parse(read) as Group).spec.pad : read, pad);
});

t.test('mirror copy - a stopped copy answers nothing: reads go to NATS again', async (t) => {
  const backbone = await backboneFor(t);
  await putGroup(backbone, 'a', 'og', 1);
  const functions = withCopy(t, backbone);
  await kept(functions);
  functions.copy.stop();
  await putGroup(backbone, 'a', 'og', 2);
  t.equal(functions.copy.entries('c1', 'OperatorGroup'), undefined);
  t.equal((await getMirrored<Group>(functions, ref('a', 'og')))?.spec.n, 2);
  await t.rejects(functions.copy.reached('c1'), /stopped/);
});

t.test(
  'mirror copy - changed() tells a load waiting for its own write when a change lands',
  async (t) => {
    const backbone = await backboneFor(t);
    const functions = withCopy(t, backbone);
    t.equal(await functions.copy.changed('c1', 50), false, 'a cluster not followed: at once');
    await kept(functions);
    t.equal(await functions.copy.changed('c1', 50), false, 'nothing written: after the wait');
    const waiting = functions.copy.changed('c1', 10_000);
    await putGroup(backbone, 'a', 'og', 1);
    t.equal(await waiting, true, 'a change applied');
    t.equal(functions.copy.text(objectKey(ref('a', 'og'))) !== null, true, 'and readable then');
  },
);

t.test(
  'mirror copy - a lazy view answers from the copy once it keeps the kind, with no round trip',
  async (t) => {
    const backbone = await backboneFor(t);
    await putGroup(backbone, 'a', 'og', 1);
    const functions = withCopy(t, backbone);
    const view = lazyMirrorView<Group>(functions, 'OperatorGroup');
    t.teardown(() => view.stop());
    // Catch-up rounds are direct gets of the mirror stream by sequence (its bare API subject).
    let rounds = 0;
    const tap = backbone.nc.subscribe(`$JS.API.DIRECT.GET.${mirrorStream}`, {
      callback: () => {
        rounds++;
      },
    });
    t.teardown(() => tap.unsubscribe());
    const roundsDuring = async <T>(read: () => Promise<T>): Promise<[T, number]> => {
      await backbone.nc.flush();
      const before = rounds;
      const value = await read();
      await backbone.nc.flush();
      return [value, rounds - before];
    };
    // The copy follows no cluster yet: the view reads through its own consumer, a round a list.
    const [first, viewRounds] = await roundsDuring(() => view.list('c1', 'a'));
    t.same(
      first.map((g) => g.spec.n),
      [1],
    );
    t.ok(viewRounds > 0, 'its own view catches up with a round trip');
    await kept(functions);
    await putGroup(backbone, 'a', 'og', 2);
    await putGroup(backbone, 'b', 'og', 1);
    await functions.copy.reached('c1');
    const [all, copyRounds] = await roundsDuring(() => view.list('c1'));
    t.same(
      all.map((g) => `${g.metadata.namespace} ${g.spec.n}`).sort(),
      ['a 2', 'b 1'],
      'the latest objects',
    );
    t.equal(copyRounds, 0, 'from the copy, caught up by its barrier: no round trip');
    t.same(
      (await view.list('c1', 'b')).map((g) => g.spec.n),
      [1],
      'one namespace',
    );

    // Listed again, an unchanged object is the one parsed before; a changed one is parsed anew.
    const byNamespace = (groups: Group[]) =>
      new Map(groups.map((g) => [g.metadata.namespace, g] as const));
    const before = byNamespace(all);
    await putGroup(backbone, 'b', 'og', 2);
    await functions.copy.reached('c1');
    const after = byNamespace(await view.list('c1'));
    t.equal(after.get('a'), before.get('a'), 'unchanged: the same object');
    t.not(after.get('b'), before.get('b'), 'changed: another object');
    t.equal(after.get('b')?.spec.n, 2, 'as changed');
  },
);

t.test('mirror copy - a kind that outgrows the budget is read from NATS again', async (t) => {
  const backbone = await backboneFor(t);
  const copy = new LiveMirrorCopy(backbone, { maxBytes: 20_000 });
  t.teardown(() => copy.stop());
  const functions = { ...backbone, copy };
  await putGroup(backbone, 'a', 'og', 1);
  const big = (name: string) => ({ ...ref('a', name, 'ClusterServiceVersion') });
  const csv = (name: string) =>
    JSON.stringify({ metadata: { name }, spec: { pad: 'x'.repeat(3_000) } });
  await backbone.objects.put(objectKey(big('first')), csv('first'));
  await kept(functions);
  await kept(functions, 'ClusterServiceVersion');
  for (let i = 0; i < 10; i++)
    await backbone.objects.put(objectKey(big(`csv${i}`)), csv(`csv${i}`));
  await functions.copy.reached('c1');
  t.equal(copy.entries('c1', 'ClusterServiceVersion'), undefined, 'the large kind is refused');
  t.equal(
    (
      await listMirrored(functions, {
        cluster: 'c1',
        kind: 'ClusterServiceVersion',
        namespace: 'a',
      })
    ).length,
    11,
    'and listed from NATS',
  );
  t.same(await groups(functions), { 'a/og': 1 }, 'the small kind is kept');
  t.not(copy.entries('c1', 'OperatorGroup'), undefined);
});
