import t from 'tap';
import { codes } from '../../shared/api/index.js';
import {
  componentLabelPrefix,
  partsButComponents,
  partsDiffer,
  pickParts,
  serializeByParts,
  type ObjectPart,
} from '../../shared/bus/object-parts.js';

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

// The parts (of those a trigger may ask for) that differ between two signatures, as a trigger
// that remembered them of the first sees them.
const parts: ObjectPart[] = ['metadata', 'spec', 'status', 'status.state', 'status.other', 'other'];
const differing = (before: string, after: string): ObjectPart[] =>
  parts.filter((part) => partsDiffer(pickParts(before, parts), after, [part]));

t.test('object parts - signatures differ in exactly the parts a change touched', (t) => {
  const base = serializeByParts(subscription('UpgradePending')).signature;
  t.same(
    differing(base, serializeByParts(subscription('AtLatestKnown')).signature),
    ['status', 'status.state'],
    'a status write (new resourceVersion) touches only status and the fields it changed',
  );
  const dropped = serializeByParts({ ...subscription('UpgradePending'), status: {} }).signature;
  t.same(differing(base, dropped), ['status', 'status.state'], 'a removed field changed');
  t.same(differing(base, serializeByParts(subscription('UpgradePending', { a: 'b' })).signature), [
    'metadata',
  ]);
  t.same(differing(base, serializeByParts(subscription('UpgradePending')).signature), []);
  const withData = serializeByParts({ ...subscription('UpgradePending'), data: { k: 'v' } });
  t.same(differing(base, withData.signature), ['other']);
  t.end();
});

t.test('object parts - what was not remembered may differ', (t) => {
  const base = serializeByParts(subscription('UpgradePending')).signature;
  const spec = pickParts(base, ['spec']);
  t.equal(partsDiffer(undefined, base, ['spec']), true, 'nothing looked at before');
  t.equal(partsDiffer(spec, undefined, ['spec']), true, 'a message without a signature');
  t.equal(partsDiffer(spec, base, ['spec']), false);
  t.equal(partsDiffer(spec, base, ['status.state']), true, 'a part not remembered');
  t.equal(partsDiffer(pickParts(base, ['status.gone']), base, ['status.gone']), false, 'absent');
  t.end();
});

t.test(
  'object parts - the Operator API component labels are their own part, left out of metadata',
  (t) => {
    const plain = serializeByParts(subscription('UpgradePending', { a: 'b' })).signature;
    const labelled = serializeByParts(
      subscription('UpgradePending', { a: 'b', 'operators.coreos.com/etcd.ns1': '' }),
    ).signature;
    const all: ObjectPart[] = ['metadata', 'components', 'spec', 'status', 'other'];
    const changed = all.filter((part) => partsDiffer(pickParts(plain, all), labelled, [part]));
    t.same(changed, ['components'], 'labelling for an Operator changes components alone');
    const relabelled = serializeByParts(
      subscription('UpgradePending', { a: 'c', 'operators.coreos.com/etcd.ns1': '' }),
    ).signature;
    t.same(
      all.filter((part) => partsDiffer(pickParts(labelled, all), relabelled, [part])),
      ['metadata'],
      'another label still changes metadata',
    );
    const { labels: _none, ...bare } = subscription('UpgradePending').metadata;
    const unlabelled = serializeByParts({ ...subscription('UpgradePending'), metadata: bare });
    const first = serializeByParts(
      subscription('UpgradePending', { 'operators.coreos.com/etcd.ns1': '' }),
    );
    t.same(
      all.filter((part) =>
        partsDiffer(pickParts(unlabelled.signature, all), first.signature, [part]),
      ),
      ['components'],
      'the first label of an object with none, a component label, changes components alone',
    );
    t.same(partsButComponents, [
      'metadata',
      'spec',
      'status',
      'other',
      'annotations.olm.providedAPIs',
    ]);
    t.equal(componentLabelPrefix, codes.OlmLabelPrefix.Operator, 'the same prefix as the API');
    t.end();
  },
);

t.test(
  'object parts - an OperatorGroup olm.providedAPIs change touches its own part, not metadata',
  (t) => {
    const group = (annotations: Record<string, string>) => ({
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'og', namespace: 'ns1', resourceVersion: '1', annotations },
      spec: {},
    });
    const asked: ObjectPart[] = ['metadata', 'spec', 'annotations.olm.providedAPIs'];
    const diff = (a: Record<string, string>, b: Record<string, string>): ObjectPart[] => {
      const before = pickParts(serializeByParts(group(a)).signature, asked);
      const after = serializeByParts(group(b)).signature;
      return asked.filter((part) => partsDiffer(before, after, [part]));
    };
    const provided = 'olm.providedAPIs';
    t.same(diff({}, { [provided]: 'A.v1.g' }), ['annotations.olm.providedAPIs'], 'added');
    const { annotations: _none, ...bare } = group({}).metadata;
    t.same(
      asked.filter((part) =>
        partsDiffer(
          pickParts(serializeByParts({ ...group({}), metadata: bare }).signature, asked),
          serializeByParts(group({ [provided]: 'A.v1.g' })).signature,
          [part],
        ),
      ),
      ['annotations.olm.providedAPIs'],
      'added to a group with no annotations at all',
    );
    t.same(
      diff({ [provided]: 'A.v1.g' }, { [provided]: 'A.v1.g,B.v1.g' }),
      ['annotations.olm.providedAPIs'],
      'changed',
    );
    t.same(diff({ [provided]: 'A.v1.g' }, {}), ['annotations.olm.providedAPIs'], 'removed');
    t.same(
      diff({ [provided]: 'A.v1.g' }, { [provided]: 'A.v1.g', other: 'x' }),
      ['metadata'],
      'another annotation is metadata',
    );
    t.ok(
      partsButComponents.includes('annotations.olm.providedAPIs'),
      'a trigger naming no parts still reads it',
    );
    t.end();
  },
);
