// The ledger of a function's own writes: a load may decide on the mirror only when the mirror
// shows every write the function recorded (that version or newer), and no conflict is pending.
import t from 'tap';
import type { Write } from '../../shared/kube/executor.js';
import { OwnWrites, showsVersion } from '../../shared/kube/own-writes.js';

const sub = (name: string, resourceVersion?: string, uid = `uid-${name}`) => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  metadata: {
    name,
    namespace: 'ns',
    uid,
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
  },
});
const status = (name: string): Write => ({ op: 'updateStatus', object: sub(name, '1') });

void t.test('own writes - versions compare as integers; others only match themselves', (t) => {
  t.ok(showsVersion('10', '9'), 'a newer revision (not a string comparison)');
  t.ok(showsVersion('9', '9'), 'the same revision');
  t.notOk(showsVersion('9', '10'), 'an older revision');
  t.notOk(showsVersion(undefined, '1'), 'no object');
  t.ok(showsVersion('abc', 'abc'), 'an opaque version matches itself');
  t.notOk(showsVersion('abd', 'abc'), 'another opaque version is not known to be newer');
  t.notOk(showsVersion('12', '1a'), 'a non-integer written version');
  t.ok(showsVersion('123456789012345678901', '123456789012345678900'), 'beyond 2^53');
  t.end();
});

void t.test('own writes - the mirror must show each recorded write of the kinds read', (t) => {
  const ledger = new OwnWrites();
  t.ok(ledger.shownIn('c1', 'ns', { Subscription: [] }), 'nothing written: the mirror stands');
  ledger.wrote('c1', status('a'), '12');
  ledger.wrote('c1', status('b'), '15');
  t.notOk(ledger.shownIn('c1', 'ns', { Subscription: [sub('a', '11'), sub('b', '15')] }), 'a lags');
  t.notOk(ledger.shownIn('c1', 'ns', { Subscription: [sub('b', '15')] }), 'a missing');
  t.ok(ledger.shownIn('c1', 'other', { Subscription: [] }), 'another namespace is not concerned');
  t.ok(ledger.shownIn('c2', 'ns', { Subscription: [] }), 'nor another cluster');
  t.ok(ledger.shownIn('c1', 'ns', { InstallPlan: [] }), 'nor a kind not written');
  t.ok(
    ledger.shownIn('c1', 'ns', { Subscription: [sub('a', '13'), sub('b', '15')] }),
    'both shown (a newer)',
  );
  t.equal(ledger.unseen, 0, 'writes seen are forgotten');
  t.ok(ledger.shownIn('c1', 'ns', { Subscription: [sub('a', '2')] }), 'and ask nothing later');
  t.end();
});

void t.test('own writes - a deletion is shown by the absence of the object', (t) => {
  const ledger = new OwnWrites();
  const del: Write = {
    op: 'delete',
    ref: { apiVersion: 'v1', kind: 'Subscription', namespace: 'ns', name: 'a' },
    preconditions: { uid: 'uid-a', resourceVersion: '5' },
  };
  ledger.wrote('c1', del, undefined);
  t.notOk(ledger.shownIn('c1', 'ns', { Subscription: [sub('a', '5')] }), 'still mirrored');
  t.ok(ledger.shownIn('c1', 'ns', { Subscription: [sub('a', '9', 'uid-new')] }), 'recreated');
  ledger.wrote('c1', del, undefined);
  t.ok(ledger.shownIn('c1', 'ns', { Subscription: [] }), 'gone');
  t.end();
});

void t.test(
  'own writes - a conflict or an unversioned answer sends the next load to the API',
  (t) => {
    const ledger = new OwnWrites();
    ledger.conflicted('c1', 'ns');
    t.notOk(ledger.shownIn('c1', 'ns', { Subscription: [] }), 'after a conflict');
    ledger.readFromApi('c1', 'ns');
    t.ok(ledger.shownIn('c1', 'ns', { Subscription: [] }), 'until the API was read');
    ledger.wrote('c1', status('a'), undefined);
    t.notOk(ledger.shownIn('c1', 'ns', { Subscription: [sub('a', '99')] }), 'no version answered');
    ledger.readFromApi('c1', 'ns');
    t.ok(ledger.shownIn('c1', 'ns', { Subscription: [sub('a', '99')] }), 'read from the API since');
    t.end();
  },
);

void t.test('own writes - the observer records only the kinds the load checks', (t) => {
  const ledger = new OwnWrites();
  const observe = ledger.observer('c1', ['Subscription']);
  observe({ op: 'create', object: { ...sub('x'), kind: 'Role', apiVersion: 'v1' } }, '3', true);
  observe(
    { op: 'event', object: { ...sub('e'), kind: 'Event', apiVersion: 'v1' } },
    undefined,
    true,
  );
  t.equal(ledger.unseen, 0, 'neither a Role nor an Event is recorded');
  observe(status('a'), '4', true);
  t.equal(ledger.unseen, 1, 'a Subscription is');
  t.end();
});

void t.test(
  'own writes - beyond its limit the oldest namespace is forgotten, and read from the API',
  (t) => {
    const ledger = new OwnWrites(2);
    ledger.wrote('c1', status('a'), '1');
    ledger.wrote(
      'c1',
      { op: 'updateStatus', object: { ...sub('b'), metadata: { name: 'b', namespace: 'n2' } } },
      '2',
    );
    ledger.wrote(
      'c1',
      { op: 'updateStatus', object: { ...sub('c'), metadata: { name: 'c', namespace: 'n3' } } },
      '3',
    );
    t.equal(ledger.unseen, 2, 'kept within the limit');
    t.notOk(
      ledger.shownIn('c1', 'ns', { Subscription: [sub('a', '1')] }),
      'the forgotten namespace reads the API',
    );
    ledger.readFromApi('c1', 'ns');
    t.ok(ledger.shownIn('c1', 'ns', { Subscription: [] }), 'once');
    t.end();
  },
);

void t.test('own writes - one object: only its own write counts', (t) => {
  const ledger = new OwnWrites();
  const ref = (name: string) => ({ kind: 'Subscription', namespace: 'ns', name });
  t.ok(ledger.showsObject('c1', ref('a'), undefined), 'nothing written: absent stands');
  ledger.wrote('c1', status('a'), '12');
  ledger.wrote('c1', status('b'), '15');
  t.notOk(ledger.showsObject('c1', ref('a'), undefined), 'written, not mirrored yet');
  t.notOk(ledger.showsObject('c1', ref('a'), sub('a', '11')), 'an older version');
  t.ok(ledger.showsObject('c1', ref('c'), undefined), "b's unseen write does not concern c");
  t.ok(ledger.showsObject('c1', ref('a'), sub('a', '12')), 'shown');
  t.equal(ledger.unseen, 1, "a's write is forgotten, b's kept");
  t.ok(ledger.showsObject('c1', ref('a'), sub('a', '3')), 'and asks nothing later');
  ledger.conflicted('c1', 'ns');
  t.notOk(ledger.showsObject('c1', ref('c'), undefined), 'a pending conflict: the API');
  t.end();
});

void t.test("own writes - a change at a version the function's writes left is its own", (t) => {
  const ledger = new OwnWrites();
  const observe = ledger.observer('c1', ['Subscription']);
  const ref = { cluster: 'c1', kind: 'Subscription', namespace: 'ns', name: 'a' };
  const create: Write = { op: 'create', object: sub('a') };
  observe(create, '5', true);
  observe(status('a'), '7', true);
  t.ok(ledger.isOwnWrite(ref, sub('a', '5')), 'the create, though written over since');
  t.ok(ledger.isOwnWrite(ref, sub('a', '7')), 'the status write');
  t.notOk(ledger.isOwnWrite(ref, sub('a', '6')), "another writer's version in between");
  t.notOk(ledger.isOwnWrite(ref, sub('a', '8')), "another writer's later version");
  t.notOk(ledger.isOwnWrite(ref, sub('a')), 'no version');
  t.notOk(ledger.isOwnWrite({ ...ref, cluster: 'c2' }, sub('a', '7')), 'another cluster');
  t.notOk(ledger.isOwnWrite({ ...ref, name: 'b' }, sub('b', '7')), 'another object');
  observe(create, '9', false);
  t.notOk(
    ledger.isOwnWrite(ref, sub('a', '9')),
    'a create that found the object there: its version is not ours',
  );
  t.notOk(ledger.isOwnWrite(ref, sub('a', '7')), 'nor, from then on, the earlier ones');
  observe(status('a'), '10', true);
  observe(
    { op: 'delete', ref: { ...ref, apiVersion: 'operators.coreos.com/v1alpha1' } },
    undefined,
    true,
  );
  t.notOk(ledger.isOwnWrite(ref, sub('a', '10')), 'a deletion forgets the object');
  t.end();
});
