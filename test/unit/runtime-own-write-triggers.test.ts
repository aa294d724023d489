// A trigger that skips its function's own writes coming back: only the versions those writes
// returned, of the object they were made to, in the cluster they were made in.
import t from 'tap';
import { OwnWrites } from '../../shared/kube/own-writes.js';
import { unlessOwnWrite } from '../../shared/runtime/own-write-triggers.js';
import type { ObjectChange, Trigger } from '../../shared/runtime/types.js';

const ref = { cluster: 'c1', kind: 'Subscription', namespace: 'ns1', name: 'etcd' };
const object = (resourceVersion: string) => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  metadata: { name: 'etcd', namespace: 'ns1', resourceVersion },
});
const change = (o: unknown, at = ref): ObjectChange => ({
  ref: at,
  object: o,
  touches: () => true,
  differs: () => true,
});

t.test('own write triggers - a change its own write left starts no work', async (t) => {
  const ledger = new OwnWrites();
  const inner: Trigger = {
    kind: 'Subscription',
    parts: ['spec'],
    workKeys: (c) => [{ queue: 'plan', key: [c.ref.namespace] }],
  };
  const trigger = unlessOwnWrite(inner, ledger);
  t.equal(trigger.kind, 'Subscription');
  t.same(trigger.parts, ['spec'], 'the parts it reads stay');
  const keys = async (c: ObjectChange) => (await trigger.workKeys(c)).length;
  ledger.observer('c1', ['Subscription'])({ op: 'updateStatus', object: object('4') }, '5', true);
  t.equal(await keys(change(object('5'))), 0, 'the version the status write returned');
  t.equal(await keys(change(object('6'))), 1, "another writer's version after it");
  t.equal(await keys(change(object('4'))), 1, 'the version the write replaced');
  t.equal(await keys(change(undefined)), 1, 'a deletion');
  t.equal(await keys(change(object('5'), { ...ref, cluster: 'c2' })), 1, 'another cluster');
});
