// Adoption decisions (functions/operator/adopt.ts): which objects get or lose an Operator's
// component label, as upstream's AdoptionReconciler labels them.
import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import { decideAdoption, type AdoptionSnapshot } from '../../functions/operator/adopt.js';
import { componentLabelKey, operatorNames } from '../../shared/api/component-labels.js';

const label = 'operators.coreos.com/etcd.ns1';

const obj = (
  kind: string,
  name: string,
  extra: Partial<KubeObject['metadata']> = {},
  rest: Record<string, unknown> = {},
  apiVersion = 'v1',
): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace: 'ns1', ...extra },
  ...rest,
});

// A cluster-scoped object (no namespace).
const clusterObj = (kind: string, name: string, extra: Partial<KubeObject['metadata']> = {}) => {
  const o = obj(kind, name, extra);
  delete o.metadata.namespace;
  return o;
};

const sub = (status: Record<string, unknown> = {}, labels?: Record<string, string>) =>
  obj(
    'Subscription',
    'etcd',
    labels === undefined ? {} : { labels },
    { spec: { name: 'etcd' }, status },
    'operators.coreos.com/v1alpha1',
  );
const csv = (name: string, extra: Partial<KubeObject['metadata']> = {}) =>
  obj(
    'ClusterServiceVersion',
    name,
    { uid: `uid-${name}`, ...extra },
    { spec: { customresourcedefinitions: { owned: [{ name: 'etcdclusters.etcd' }] } } },
    'operators.coreos.com/v1alpha1',
  );
const plan = (name: string, labels?: Record<string, string>) =>
  obj(
    'InstallPlan',
    name,
    labels === undefined ? {} : { labels },
    {},
    'operators.coreos.com/v1alpha1',
  );

function snapshot(extra: Partial<AdoptionSnapshot>): AdoptionSnapshot {
  return {
    namespace: 'ns1',
    subscriptions: [],
    installPlans: [],
    csvs: [],
    candidates: [],
    crds: [],
    ...extra,
  };
}

const patched = (s: AdoptionSnapshot) =>
  Object.fromEntries(decideAdoption(s).map((p) => [`${p.ref.kind} ${p.ref.name ?? ''}`, p.labels]));

t.test('operator adoption - names: <package>.<namespace>, cut to a label name', (t) => {
  t.equal(componentLabelKey('etcd.ns1'), label);
  const long = `${'a'.repeat(61)}.-b`;
  t.equal(componentLabelKey(long), `operators.coreos.com/${'a'.repeat(61)}`, 'no trailing . or -');
  t.same(operatorNames({ [label]: '', 'olm.managed': 'true' }), ['etcd.ns1']);
  t.end();
});

t.test(
  'operator adoption - a Subscription, its installed CSV, its plan and what the CSV owns are labelled in one pass',
  (t) => {
    const installed = csv('etcd.v2');
    const owned = [
      obj('Deployment', 'etcd-operator', {
        ownerReferences: [
          {
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'ClusterServiceVersion',
            name: 'etcd.v2',
            uid: 'uid-etcd.v2',
          },
        ],
      }),
      clusterObj('ClusterRole', 'etcd-cluster', {
        labels: {
          'olm.owner': 'etcd.v2',
          'olm.owner.namespace': 'ns1',
          'olm.owner.kind': 'ClusterServiceVersion',
        },
      }),
    ];
    const notOwned = obj('Deployment', 'other', {
      ownerReferences: [
        {
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'ClusterServiceVersion',
          name: 'x',
          uid: 'uid-x',
        },
      ],
    });
    const crd = clusterObj('CustomResourceDefinition', 'etcdclusters.etcd');
    const got = patched(
      snapshot({
        subscriptions: [sub({ installedCSV: 'etcd.v2', installPlanRef: { name: 'install-b' } })],
        installPlans: [plan('install-a', { [label]: '' }), plan('install-b')],
        csvs: [installed, csv('etcd.v1')],
        candidates: [...owned, notOwned],
        crds: [crd],
      }),
    );
    t.same(got, {
      'Subscription etcd': { [label]: '' },
      'InstallPlan install-b': { [label]: '' },
      'InstallPlan install-a': { [label]: null },
      'ClusterServiceVersion etcd.v2': { [label]: '' },
      'Deployment etcd-operator': { [label]: '' },
      'ClusterRole etcd-cluster': { [label]: '' },
      'CustomResourceDefinition etcdclusters.etcd': { [label]: '' },
    });
    t.end();
  },
);

t.test('operator adoption - labelled objects are not patched again', (t) => {
  t.same(
    decideAdoption(snapshot({ subscriptions: [sub({}, { [label]: '' })], csvs: [csv('etcd.v1')] })),
    [],
    'nothing installed yet, and the Subscription already labelled',
  );
  t.end();
});

t.test('operator adoption - a labelled CSV projects its labels without a Subscription', (t) => {
  const got = patched(
    snapshot({
      csvs: [csv('etcd.v1', { labels: { [label]: '' } })],
      candidates: [
        obj('ServiceAccount', 'sa', {
          ownerReferences: [
            {
              apiVersion: 'operators.coreos.com/v1alpha1',
              kind: 'ClusterServiceVersion',
              name: 'etcd.v1',
              uid: 'uid-etcd.v1',
            },
          ],
        }),
      ],
    }),
  );
  t.same(got, { 'ServiceAccount sa': { [label]: '' } });
  t.end();
});

t.test('operator adoption - a copied CSV is never a component', (t) => {
  const copy = csv('etcd.v1', { labels: { 'olm.copiedFrom': 'operators', [label]: '' } });
  const got = patched(
    snapshot({ subscriptions: [sub({ installedCSV: 'etcd.v1' }, { [label]: '' })], csvs: [copy] }),
  );
  t.same(got, { 'ClusterServiceVersion etcd.v1': { [label]: null } });
  t.end();
});

t.test(
  'operator adoption - a generated dependency Subscription gets its own Operator label (#19 item 17)',
  (t) => {
    const generated = obj(
      'Subscription',
      'etcd-singlenamespace-alpha-community-olm',
      { labels: { 'olm.managed': 'true' }, annotations: { 'olm.generated-by': 'install-x' } },
      { spec: { name: 'etcd' }, status: {} },
      'operators.coreos.com/v1alpha1',
    );
    t.same(patched(snapshot({ subscriptions: [generated] })), {
      'Subscription etcd-singlenamespace-alpha-community-olm': { [label]: '' },
    });
    t.end();
  },
);
