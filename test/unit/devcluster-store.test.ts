import t from 'tap';
import { ObjectStore } from '../../devcluster/storage/store.js';
import type { ChangeEvent } from '../../devcluster/storage/types.js';

const cm = (name: string, namespace = 'default') => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
});

void t.test('store - every write gets the next cluster-wide resourceVersion', (t) => {
  const store = new ObjectStore();
  const a = store.put('configmaps', cm('a'));
  const b = store.put('secrets', cm('b'));
  const rvA = Number((a['metadata'] as Record<string, unknown>)['resourceVersion']);
  const rvB = Number((b['metadata'] as Record<string, unknown>)['resourceVersion']);
  t.equal(rvB, rvA + 1);
  t.equal(store.currentResourceVersion(), rvB);
  t.end();
});

void t.test('store - lists in namespace/name order, optionally within one namespace', (t) => {
  const store = new ObjectStore();
  for (const [name, ns] of [
    ['b', 'y'],
    ['a', 'y'],
    ['c', 'x'],
  ] as const)
    store.put('configmaps', cm(name, ns));
  const names = (list: Record<string, unknown>[]) =>
    list.map((o) => (o['metadata'] as Record<string, string>)['name']);
  t.same(names(store.list('configmaps')), ['c', 'a', 'b']);
  t.same(names(store.list('configmaps', 'y')), ['a', 'b']);
  t.end();
});

void t.test('store - events since a resourceVersion replay later changes of one resource', (t) => {
  const store = new ObjectStore();
  store.put('configmaps', cm('a'));
  const after = store.currentResourceVersion();
  store.put('configmaps', cm('b'));
  store.put('secrets', cm('s'));
  store.remove('configmaps', 'default', 'a');
  const since = store.eventsSince(after, 'configmaps');
  t.ok(since.ok);
  if (since.ok)
    t.same(
      since.events.map((e) => `${e.type}:${e.name}`),
      ['ADDED:b', 'DELETED:a'],
    );
  t.end();
});

void t.test('store - a resourceVersion older than the bounded log is expired', (t) => {
  const store = new ObjectStore({ eventLogSize: 2 });
  const first = store.currentResourceVersion();
  for (const name of ['a', 'b', 'c', 'd']) store.put('configmaps', cm(name));
  const since = store.eventsSince(first, 'configmaps');
  t.notOk(since.ok);
  t.ok(
    store.eventsSince(store.currentResourceVersion() - 2, 'configmaps').ok,
    'the last two events are still there',
  );
  t.end();
});

void t.test('store - listeners see changes synchronously with the previous object', (t) => {
  const store = new ObjectStore();
  const seen: ChangeEvent[] = [];
  store.subscribe((e) => seen.push(e));
  store.put('configmaps', cm('a'));
  store.put('configmaps', { ...cm('a'), data: { x: '1' } });
  t.equal(seen.length, 2);
  t.equal(seen[1]?.type, 'MODIFIED');
  t.same(seen[1]?.previous?.['data'], undefined);
  t.end();
});

void t.test('store - deleted objects carry the deletion resourceVersion', (t) => {
  const store = new ObjectStore();
  store.put('configmaps', cm('a'));
  const removed = store.remove('configmaps', 'default', 'a');
  t.equal(
    (removed?.['metadata'] as Record<string, string>)['resourceVersion'],
    String(store.currentResourceVersion()),
  );
  t.equal(store.get('configmaps', 'default', 'a'), undefined);
  t.end();
});
