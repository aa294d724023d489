// Operator object decisions (functions/operator/components.ts): its status lists the components
// with their conditions in upstream's order; it is created while components exist.
import t from 'tap';
import type { Operator } from '../../shared/api/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  componentRef,
  decideOperator,
  operatorStatus,
} from '../../functions/operator/components.js';

const csv: KubeObject = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'etcd.v1', namespace: 'ns1' },
  status: {
    phase: 'Succeeded',
    reason: 'InstallSucceeded',
    message: 'install strategy completed with no errors',
    lastUpdateTime: '2026-01-01T00:00:00Z',
    lastTransitionTime: '2026-01-01T00:00:00Z',
    conditions: [{ phase: 'Pending' }],
  },
};
const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'etcd-operator', namespace: 'ns1' },
  status: {
    replicas: 1,
    conditions: [
      {
        type: 'Available',
        status: 'True',
        reason: 'MinimumReplicasAvailable',
        message: 'ok',
        lastUpdateTime: '2026-01-01T00:00:00Z',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  },
};
const role: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'etcd-x' },
};

t.test('operator status - a CSV component has its phase as one True condition', (t) => {
  t.same(componentRef(csv), {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    name: 'etcd.v1',
    namespace: 'ns1',
    conditions: [
      {
        type: 'Succeeded',
        status: 'True',
        reason: 'InstallSucceeded',
        message: 'install strategy completed with no errors',
        lastUpdateTime: '2026-01-01T00:00:00Z',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  });
  t.end();
});

t.test('operator status - refs sorted by kind, with status.conditions copied', (t) => {
  const status = operatorStatus('etcd.ns1', [deployment, csv, role]);
  t.same(status.components?.labelSelector, {
    matchExpressions: [{ key: 'operators.coreos.com/etcd.ns1', operator: 'Exists' }],
  });
  t.same(
    status.components?.refs?.map((r) => r.kind),
    ['ClusterRole', 'ClusterServiceVersion', 'Deployment'],
  );
  t.same(status.components?.refs?.[0], {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    name: 'etcd-x',
  });
  t.match(status.components?.refs?.[2]?.conditions, [{ type: 'Available', status: 'True' }]);
  t.end();
});

t.test('operator status - created while it has components, never without', (t) => {
  const created = decideOperator({ name: 'etcd.ns1', operator: undefined, components: [csv] });
  t.match(created.writes, [
    { op: 'create', object: { kind: 'Operator', metadata: { name: 'etcd.ns1' } } },
  ]);
  t.same(created.statusOfCreated, operatorStatus('etcd.ns1', [csv]), 'its status, for after');
  t.same(
    decideOperator({ name: 'etcd.ns1', operator: undefined, components: [] }).writes,
    [],
    'a deleted Operator with no components stays deleted',
  );
  t.end();
});

t.test('operator status - written only when it differs; kept with no refs when empty', (t) => {
  const operator: Operator = {
    metadata: { name: 'etcd.ns1', resourceVersion: '7' },
    status: operatorStatus('etcd.ns1', [csv]),
  };
  t.same(decideOperator({ name: 'etcd.ns1', operator, components: [csv] }).writes, []);
  const emptied = decideOperator({ name: 'etcd.ns1', operator, components: [] });
  t.match(emptied.writes, [
    {
      op: 'updateStatus',
      object: {
        metadata: { resourceVersion: '7' },
        status: { components: { labelSelector: {} } },
      },
    },
  ]);
  const w = emptied.writes[0];
  t.equal(
    w !== undefined && 'object' in w
      ? (w.object['status'] as Operator['status'])?.components?.refs
      : 'none',
    undefined,
    'no refs',
  );
  t.end();
});
