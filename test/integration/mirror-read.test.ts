// Reading the object mirror on the NATS server the tests run (Debian's 2.9): listings by point
// reads (few keys) and by scan (many), and live views of a kind.
import { connect } from '@nats-io/transport-node';
import t from 'tap';
import type { Backbone } from '../../shared/bus/backbone.js';
import {
  getMirrored,
  listMirrored,
  mirroredKeys,
  namespacesWith,
} from '../../shared/bus/mirror-read.js';
import { lazyMirrorView, openMirrorView } from '../../shared/bus/mirror-view.js';
import {
  directGetLastSubject,
  indexedKey,
  mirrorStream,
  mirrorSubjectPrefix,
  namesKey,
  objectKey,
  tooManyNames,
} from '../../shared/bus/subjects.js';
import { backboneFor } from '../harness/backbone.js';

interface Group {
  metadata: { name: string; namespace: string };
  spec: { n: number };
}

const ref = (namespace: string, name: string) => ({
  cluster: 'c1',
  kind: 'OperatorGroup',
  namespace,
  name,
});

async function putGroup(backbone: Backbone, namespace: string, name: string, n: number) {
  const group: Group = { metadata: { name, namespace }, spec: { n } };
  await backbone.objects.put(objectKey(ref(namespace, name)), JSON.stringify(group));
}

const names = (groups: Group[]): string[] => groups.map((g) => g.metadata.name).sort();

t.test('mirror read - an object by key: its latest value, or nothing once deleted', async (t) => {
  const backbone = await backboneFor(t);
  await putGroup(backbone, 'ns', 'og', 1);
  await putGroup(backbone, 'ns', 'og', 2);
  await putGroup(backbone, 'ns', 'gone', 1);
  await backbone.objects.delete(objectKey(ref('ns', 'gone')));
  t.equal((await getMirrored<Group>(backbone, ref('ns', 'og')))?.spec.n, 2, 'the latest value');
  t.equal(await getMirrored(backbone, ref('ns', 'gone')), undefined, 'a deleted object');
  t.equal(await getMirrored(backbone, ref('ns', 'never')), undefined, 'a key never written');
});

t.test('mirror read - listings by point reads and by scan skip deleted objects', async (t) => {
  const backbone = await backboneFor(t);
  const many = Array.from({ length: 40 }, (_, i) => `g${String(i).padStart(2, '0')}`);
  for (const name of many) await putGroup(backbone, 'big', name, 1);
  for (const name of ['a', 'b', 'c']) await putGroup(backbone, 'small', name, 1);
  await backbone.objects.delete(objectKey(ref('big', 'g00')));
  await backbone.objects.delete(objectKey(ref('small', 'a')));
  await putGroup(backbone, 'big', 'g01', 2);

  const big = await listMirrored<Group>(backbone, {
    cluster: 'c1',
    kind: 'OperatorGroup',
    namespace: 'big',
  });
  t.same(names(big), many.slice(1), 'more keys than point reads: one scan');
  t.equal(big.find((g) => g.metadata.name === 'g01')?.spec.n, 2, 'the latest value');
  const small = await listMirrored<Group>(backbone, {
    cluster: 'c1',
    kind: 'OperatorGroup',
    namespace: 'small',
  });
  t.same(names(small), ['b', 'c']);
  t.equal((await mirroredKeys(backbone, 'c1.OperatorGroup.*.*')).length, 41);
  t.same(await namespacesWith(backbone, { cluster: 'c1', kind: 'OperatorGroup' }), [
    'big',
    'small',
  ]);
});

t.test(
  'mirror view - holds the latest of every object of its kind, and follows changes',
  async (t) => {
    const backbone = await backboneFor(t);
    await putGroup(backbone, 'ns1', 'og', 1);
    await putGroup(backbone, 'ns2', 'og', 1);
    await backbone.objects.put(
      objectKey({ cluster: 'c1', kind: 'Subscription', namespace: 'ns1', name: 'etcd' }),
      '{}',
    );
    const view = await openMirrorView<Group>(backbone, 'OperatorGroup');
    t.teardown(() => view.stop());
    t.same(names(view.list('c1')), ['og', 'og'], 'filled when open, other kinds left out');
    t.same(view.list('c2'), []);

    await putGroup(backbone, 'ns1', 'og', 2);
    await backbone.objects.delete(objectKey(ref('ns2', 'og')));
    await putGroup(backbone, 'ns3', 'other', 1);
    await view.current();
    t.same(
      view.list('c1').map((g) => [g.metadata.namespace, g.spec.n]),
      [
        ['ns1', 2],
        ['ns3', 1],
      ],
      'current() waits for every change made before it was called',
    );
    t.same(names(view.list('c1', 'ns3')), ['other']);

    // Past a check that found nothing new, other kinds' writes, then one of the kind's.
    await view.current();
    for (let i = 0; i < 20; i++)
      await backbone.objects.put(
        objectKey({ cluster: 'c1', kind: 'Subscription', namespace: 'ns1', name: `s${i}` }),
        '{}',
      );
    await putGroup(backbone, 'ns5', 'after-others', 1);
    await view.current();
    t.same(names(view.list('c1', 'ns5')), ['after-others'], 'a change behind other kinds is seen');

    const lazy = lazyMirrorView<Group>(backbone, 'OperatorGroup');
    t.teardown(() => lazy.stop());
    await putGroup(backbone, 'ns4', 'late', 1);
    t.same(names(await lazy.list('c1', 'ns4')), ['late'], 'a lazy view opens on first use');
  },
);

t.test(
  'mirror view - concurrent current() calls share a round trip started after they were called',
  async (t) => {
    const backbone = await backboneFor(t);
    await putGroup(backbone, 'ns1', 'og', 1);
    const view = await openMirrorView<Group>(backbone, 'OperatorGroup');
    t.teardown(() => view.stop());

    // Every JetStream API request on the server, counted by a second connection.
    const tap = await connect({ servers: backbone.nc.getServer() });
    t.teardown(() => tap.close());
    let directGets = 0;
    let streamInfos = 0;
    tap.subscribe('$JS.API.>', {
      callback: (_error, m) => {
        if (m.subject === '$JS.API.DIRECT.GET.KV_olmq_objects') directGets++;
        if (m.subject.startsWith('$JS.API.STREAM.INFO.')) streamInfos++;
      },
    });
    await tap.flush();

    await view.current();
    await backbone.nc.flush();
    await tap.flush();
    t.equal(directGets, 1, 'a view that is current: one direct get');
    t.equal(streamInfos, 0, 'and no stream info');

    directGets = 0;
    streamInfos = 0;
    await putGroup(backbone, 'ns1', 'og', 2);
    const first = view.current();
    await putGroup(backbone, 'ns2', 'later', 1);
    const joined = Array.from({ length: 8 }, () => view.current());
    await Promise.all([first, ...joined]);
    t.same(
      view.list('c1').map((g) => [g.metadata.namespace, g.spec.n]),
      [
        ['ns1', 2],
        ['ns2', 1],
      ],
      'every call sees the writes made before it, also one arriving during a round',
    );
    await backbone.nc.flush();
    await tap.flush();
    // Two rounds (the first, and the one the eight calls joined), each of at most two direct
    // gets and one stream info; one round per call would take at least nine.
    t.ok(directGets <= 4, `nine calls, ${directGets} direct gets`);
    t.ok(streamInfos <= 2, `nine calls, ${streamInfos} stream infos`);
  },
);

t.test(
  'mirror read - a namespace of an indexed kind is listed from the live name index',
  async (t) => {
    const backbone = await backboneFor(t);
    // As the watcher writes them: a name into the index before the object's first put.
    const add = async (name: string, all: string[]) => {
      await backbone.objects.put(namesKey('c1', 'OperatorGroup', 'ns'), JSON.stringify(all));
      await putGroup(backbone, 'ns', name, 1);
    };
    await backbone.objects.put(indexedKey('c1', 'OperatorGroup'), '{}');
    await add('a', ['a']);
    await add('b', ['a', 'b']);
    const list = () =>
      listMirrored<Group>(backbone, { cluster: 'c1', kind: 'OperatorGroup', namespace: 'ns' });
    t.same(names(await list()), ['a', 'b']);

    // The name index entries read one by one, counted by a second connection.
    const tap = await connect({ servers: backbone.nc.getServer() });
    t.teardown(() => tap.close());
    const entryGet = directGetLastSubject(mirrorStream, mirrorSubjectPrefix);
    let indexReads = 0;
    tap.subscribe(`${entryGet}*.=names.>`, {
      callback: () => {
        indexReads++;
      },
    });
    await tap.flush();

    await add('c', ['a', 'b', 'c']);
    t.same(names(await list()), ['a', 'b', 'c'], 'a name added just before is listed');
    await backbone.objects.put(namesKey('c1', 'OperatorGroup', 'ns'), JSON.stringify(['a', 'c']));
    await backbone.objects.delete(objectKey(ref('ns', 'b')));
    t.same(names(await list()), ['a', 'c'], 'a name removed is not');
    await backbone.objects.put(namesKey('c1', 'OperatorGroup', 'ns'), tooManyNames);
    await putGroup(backbone, 'ns', 'd', 1);
    t.same(names(await list()), ['a', 'c', 'd'], 'too many to list: the namespace is scanned');
    await backbone.nc.flush();
    await tap.flush();
    t.equal(indexReads, 0, 'no name index entry read one by one');
  },
);
