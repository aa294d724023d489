// The chaos benches' and tests' counting (test/harness/chaos-outcome.ts): what counts as lost,
// extra and duplicated, and what does not (copies, other namespaces, an OperatorGroup's alike
// aggregated roles).
import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import { countOutcome, type Csv, type Plan } from '../harness/chaos-outcome.js';

const csv = (namespace: string, name: string, phase: string, copied = false): Csv => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { namespace, name, ...(copied ? { labels: { 'olm.copiedFrom': 'elsewhere' } } : {}) },
  status: { phase },
});
const plan = (namespace: string, name: string, generation: number, csvs: string[]): Plan => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'InstallPlan',
  metadata: { namespace, name },
  spec: { generation, clusterServiceVersionNames: csvs },
});
const role = (
  name: string,
  ownerKind: string,
  rules: unknown[],
  namespace?: string,
): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: namespace === undefined ? 'ClusterRole' : 'Role',
  metadata: {
    name,
    ...(namespace === undefined ? {} : { namespace }),
    labels: { 'olm.owner': 'etcd.v1', 'olm.owner.namespace': 'a', 'olm.owner.kind': ownerKind },
  },
  rules,
});
const rule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };

void t.test('chaos outcome - a clean run counts nothing', (t) => {
  const outcome = countOutcome(['a/etcd.v1', 'b/etcd.v1'], {
    csvs: [
      csv('a', 'etcd.v1', 'Succeeded'),
      csv('b', 'etcd.v1', 'Succeeded'),
      csv('b', 'other.v1', 'Succeeded', true),
      csv('elsewhere', 'stray.v1', 'Failed'),
    ],
    plans: [plan('a', 'install-1', 1, ['etcd.v1']), plan('b', 'install-1', 1, ['etcd.v1'])],
    rbac: [
      role('etcd-r1', 'ClusterServiceVersion', [rule], 'a'),
      role('etcd-r1', 'ClusterServiceVersion', [rule], 'b'),
      // An OperatorGroup's admin/edit/view before any API: alike, and not duplicates.
      role('olm.og.og.admin-x', 'OperatorGroup', []),
      role('olm.og.og.edit-x', 'OperatorGroup', []),
    ],
  });
  t.same(outcome, {
    succeeded: 2,
    lost: [],
    extraCsvs: [],
    installPlans: 2,
    duplicatedPlanGenerations: 0,
    duplicatedPlannedCsvs: 0,
    duplicatedRbac: [],
  });
  t.end();
});

void t.test('chaos outcome - lost, extra and duplicated are counted', (t) => {
  const outcome = countOutcome(['a/etcd.v1', 'a/hawtio.v1', 'b/etcd.v1'], {
    csvs: [
      csv('a', 'etcd.v1', 'Succeeded'),
      csv('a', 'hawtio.v1', 'Installing'),
      csv('a', 'unasked.v1', 'Succeeded'),
    ],
    plans: [
      plan('a', 'install-1', 1, ['etcd.v1']),
      plan('a', 'install-2', 1, ['etcd.v1', 'hawtio.v1']),
      plan('a', 'install-3', 1, ['hawtio.v1']),
    ],
    rbac: [
      role('etcd-r1', 'ClusterServiceVersion', [rule], 'a'),
      role('etcd-r2', 'ClusterServiceVersion', [rule], 'a'),
      role('etcd-c1', 'ClusterServiceVersion', [rule]),
      role('etcd-c2', 'ClusterServiceVersion', [rule]),
      role('etcd-c3', 'ClusterServiceVersion', [{ ...rule, verbs: ['list'] }]),
    ],
  });
  t.equal(outcome.succeeded, 1);
  t.same(outcome.lost, ['a/hawtio.v1', 'b/etcd.v1'], 'not Succeeded, and missing');
  t.same(outcome.extraCsvs, ['a/unasked.v1']);
  t.equal(outcome.duplicatedPlanGenerations, 2, 'three plans of generation 1');
  t.equal(outcome.duplicatedPlannedCsvs, 2, 'etcd and hawtio each planned twice');
  t.same(outcome.duplicatedRbac, ['Role/a/etcd-r2', 'ClusterRole//etcd-c2']);
  t.end();
});
