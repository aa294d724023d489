// What wakes the operator function (functions/operator/wakes.ts): a change of a component wakes
// the Operators whose status it can change, and a shared CRD wakes only the adoptions that
// still have to label it, so a burst of installs of one operator is not quadratic.
import t from 'tap';
import type { ObjectPart } from '../../shared/bus/object-parts.js';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  Memberships,
  crdNamespaces,
  statusParts,
  wokenOperators,
} from '../../functions/operator/wakes.js';

const crd = (labels: Record<string, string>, alongside: string[]): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: {
    name: 'etcdclusters.etcd.database.coreos.com',
    labels,
    annotations: Object.fromEntries(
      alongside.map((v, i) => [`operatorframework.io/installed-alongside-${i}`, v]),
    ),
  },
});

t.test('a shared CRD wakes the adoption of namespaces whose label it lacks, only', (t) => {
  const alongside = ['ns1/etcdoperator.v0.9.4', 'ns2/etcdoperator.v0.9.4', 'ns3/etcd.v1'];
  t.same(crdNamespaces(crd({}, alongside)), ['ns1', 'ns2', 'ns3'], 'none labelled: all');
  t.same(
    crdNamespaces(
      crd(
        {
          'operators.coreos.com/etcd.ns1': '',
          'operators.coreos.com/my.dotted.package.ns3': '',
          'olm.managed': 'true',
        },
        alongside,
      ),
    ),
    ['ns2'],
    'a package name with dots still names its namespace last',
  );
  t.end();
});

/** A change that touched exactly `parts`. */
const touching = (parts: readonly ObjectPart[]) => ({
  touches: (asked: readonly ObjectPart[]) => asked.some((p) => parts.includes(p)),
});

t.test('which Operators a component change wakes', (t) => {
  const shown = statusParts('CustomResourceDefinition');
  const labelsOnly = touching(['metadata']);
  const conditions = touching(['status.conditions']);
  t.same(wokenOperators(['a', 'b'], undefined, labelsOnly, shown), ['a', 'b'], 'not remembered');
  t.same(wokenOperators(['a', 'b', 'c'], ['a', 'b'], labelsOnly, shown), ['c'], 'a label added');
  t.same(wokenOperators(['a'], ['a', 'b'], labelsOnly, shown), ['b'], 'a label removed');
  t.same(wokenOperators(['a'], ['a'], labelsOnly, shown), [], 'labels as they were');
  // Regression: a CRD shared by N installs gained a component label at each, and every change of
  // the component labels woke all N Operators (quadratic in a burst of installs).
  const componentLabels = touching(['metadata', 'components']);
  t.same(
    wokenOperators(['a', 'b', 'c'], ['a', 'b'], componentLabels, shown),
    ['c'],
    'a component label added wakes only the Operator that gained the object',
  );
  t.same(
    wokenOperators(['a', 'b'], undefined, componentLabels, shown),
    ['a', 'b'],
    'memberships not remembered: every Operator it is a component of',
  );
  t.same(
    wokenOperators(['a'], ['b'], conditions, shown).slice().sort(),
    ['a', 'b'],
    'conditions changed: every Operator it is or was a component of',
  );
  t.same(
    wokenOperators(['a'], undefined, touching(['spec']), shown),
    [],
    'a spec change shows in no status',
  );
  t.ok(
    statusParts('ClusterServiceVersion').includes('status.phase'),
    "a CSV's phase is what its Operator shows",
  );
  t.end();
});

t.test('memberships remember the last Operators of each object, bounded', (t) => {
  const m = new Memberships(2);
  const ref = (name: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    cluster: 'c1',
    namespace: 'ns1',
    name,
  });
  t.equal(m.swap(ref('x'), ['a']), undefined);
  t.same(m.swap(ref('x'), ['a', 'b']), ['a']);
  t.same(m.swap(ref('x'), []), ['a', 'b']);
  t.same(m.swap(ref('x'), ['a']), [], 'an object without labels is remembered too');
  m.swap(ref('y'), ['a']);
  m.swap(ref('z'), ['a']);
  t.equal(m.swap(ref('x'), ['a']), undefined, 'the oldest goes first past the limit');
  t.end();
});
