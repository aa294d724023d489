import t from 'tap';
import { changedParts, serializeByParts, touchesParts } from '../../shared/bus/object-parts.js';

const subscription = (status: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  metadata: { name: 'etcd', namespace: 'ns1', resourceVersion: String(Math.random()), labels },
  spec: { name: 'etcd', channel: 'alpha' },
  status: { state: status },
});

t.test('object parts - the JSON is the object as JSON.stringify writes it', (t) => {
  const object = { ...subscription('UpgradePending'), data: { a: '1' }, gone: undefined };
  t.same(JSON.parse(serializeByParts(object).json), JSON.parse(JSON.stringify(object)));
  t.equal(serializeByParts(object).json, JSON.stringify(object));
  t.end();
});

t.test('object parts - a change names exactly the parts it touched', (t) => {
  const base = serializeByParts(subscription('UpgradePending')).signature;
  t.same(
    changedParts(base, serializeByParts(subscription('AtLatestKnown')).signature),
    ['status', 'status.state'],
    'a status write (new resourceVersion) touches only status, naming the fields it changed',
  );
  const dropped = serializeByParts({ ...subscription('UpgradePending'), status: {} }).signature;
  t.same(changedParts(base, dropped), ['status', 'status.state'], 'a removed field changed');
  t.same(
    changedParts(base, serializeByParts(subscription('UpgradePending', { a: 'b' })).signature),
    ['metadata'],
  );
  t.same(changedParts(base, serializeByParts(subscription('UpgradePending')).signature), []);
  const withData = serializeByParts({ ...subscription('UpgradePending'), data: { k: 'v' } });
  t.same(changedParts(base, withData.signature), ['other']);
  t.end();
});

t.test('object parts - a trigger reading some parts skips changes to the others', (t) => {
  t.equal(touchesParts('status', ['metadata', 'spec']), false);
  t.equal(touchesParts('none', ['metadata', 'spec']), false, 'nothing but resourceVersion');
  t.equal(touchesParts('metadata,status', ['metadata', 'spec']), true);
  t.equal(touchesParts(undefined, ['spec']), true, 'no header: every part may have changed');
  t.equal(touchesParts('status,status.conditions', ['spec', 'status.currentCSV']), false);
  t.equal(touchesParts('status,status.currentCSV', ['spec', 'status.currentCSV']), true);
  t.equal(
    touchesParts('status', ['status.currentCSV']),
    true,
    'a status change naming no fields (an older watcher) may touch any',
  );
  t.end();
});
