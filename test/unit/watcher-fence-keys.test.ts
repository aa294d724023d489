import t from 'tap';
import { epochHeaders, epochOf } from '../../shared/bus/fencing.js';
import { epochKey, indexedKey, namesKey, objectKey } from '../../shared/bus/subjects.js';
import { fencedKeyOf } from '../../watcher/fence.js';

t.test(
  'watcher fencing - a fenced key names the object or name index entry to write again',
  (t) => {
    const ref = { cluster: 'c.1', kind: 'Subscription', namespace: 'ns.a', name: 'my.sub' };
    t.same(fencedKeyOf(objectKey(ref), 42), {
      what: 'object',
      kind: 'Subscription',
      namespace: 'ns.a',
      name: 'my.sub',
      seq: 42,
    });
    t.same(fencedKeyOf(objectKey({ ...ref, kind: 'Namespace', namespace: '' }), 7), {
      what: 'object',
      kind: 'Namespace',
      namespace: '',
      name: 'my.sub',
      seq: 7,
    });
    t.same(fencedKeyOf(namesKey('c.1', 'Subscription', 'ns.a'), 1), {
      what: 'names',
      kind: 'Subscription',
      namespace: 'ns.a',
    });
    t.equal(fencedKeyOf(indexedKey('c.1', 'Subscription'), 1), undefined, 'not rewritten');
    t.equal(fencedKeyOf(epochKey('c.1'), 1), undefined, 'the epoch record is not an object');
    t.end();
  },
);

t.test(
  'watcher fencing - the epoch header round-trips; a missing or malformed one is unfenced',
  (t) => {
    t.equal(epochOf(epochHeaders(12)), 12);
    t.equal(epochOf(undefined), undefined);
    const bad = epochHeaders(1);
    bad.set('Olmq-Epoch', 'x');
    t.equal(epochOf(bad), undefined);
    t.end();
  },
);
