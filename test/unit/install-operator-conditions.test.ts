import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  conditionDeployments,
  conditionServiceAccounts,
  generatorWrites,
} from '../../functions/install/operator-conditions/generator.js';
import { decideOperatorCondition } from '../../functions/install/operator-conditions/decide.js';
import { roleAsWanted } from '../../functions/install/operator-conditions/rbac.js';
import { mirroredStatus } from '../../functions/install/operator-conditions/status.js';
import { notUpgradeable } from '../../functions/install/operator-conditions/upgradeable.js';
import type {
  OperatorConditionSnapshot,
  ServedOperatorCondition as OperatorConditionObject,
} from '../../functions/install/operator-conditions/types.js';
import { smallBundle } from '../harness/install-plan.js';

const now = new Date('2026-01-01T00:00:00Z');

async function etcdCsv(): Promise<KubeObject> {
  const { csv } = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  return { ...csv, metadata: { ...csv.metadata, namespace: 'ns1', uid: 'csv-uid' } };
}

function condition(extra: Partial<OperatorConditionObject> = {}): OperatorConditionObject {
  return {
    apiVersion: 'operators.coreos.com/v2',
    kind: 'OperatorCondition',
    metadata: {
      name: 'etcdoperator.v0.9.4',
      namespace: 'ns1',
      uid: 'cond-uid',
      resourceVersion: '7',
      generation: 1,
      ownerReferences: [
        {
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'ClusterServiceVersion',
          name: 'etcdoperator.v0.9.4',
          uid: 'csv-uid',
          controller: true,
          blockOwnerDeletion: false,
        },
      ],
    },
    spec: { deployments: ['etcd-operator'], serviceAccounts: ['etcd-operator'] },
    ...extra,
  };
}

const upgradeable = (status: 'True' | 'False', extra: Record<string, unknown> = {}) => ({
  type: 'Upgradeable',
  status,
  reason: 'Testing',
  message: status === 'True' ? 'safe' : 'migration running',
  lastTransitionTime: '2026-01-01T00:00:00Z',
  ...extra,
});

t.test('operator condition - targets: strategy deployments and service accounts', async (t) => {
  const csv = await etcdCsv();
  t.same(conditionDeployments(csv), ['etcd-operator']);
  t.same(conditionServiceAccounts(csv), ['etcd-operator']);
  const { csv: nmo } = await smallBundle(
    'node-maintenance-operator',
    'node-maintenance-operator.v0.17.0',
  );
  t.same(
    conditionServiceAccounts(nmo),
    [
      'node-maintenance-operator-controller-manager',
      'node-maintenance-operator-controller-manager',
    ],
    'clusterPermissions then permissions, as upstream lists them (no de-duplication)',
  );
  const bare = {
    ...csv,
    spec: { install: { strategy: 'deployment', spec: { deployments: [] } } },
  };
  t.same(conditionServiceAccounts(bare), ['default'], 'default when no permissions name one');
  t.same(conditionDeployments(bare), []);
  t.same(conditionDeployments({ ...csv, spec: {} }), [], 'no strategy: no deployments');
});

t.test('operator condition - Upgradeable: overrides win, stale status blocks', (t) => {
  t.equal(notUpgradeable(undefined), undefined, 'no condition: upgradeable');
  t.equal(notUpgradeable(condition()), undefined, 'no Upgradeable condition: upgradeable');
  const blocked = condition({
    status: { conditions: [upgradeable('False', { observedGeneration: 1 })] },
  });
  t.equal(notUpgradeable(blocked), 'The operator is not upgradeable: migration running');
  t.equal(
    notUpgradeable({
      ...blocked,
      spec: { ...blocked.spec, overrides: [upgradeable('True')] },
    }),
    undefined,
    'an override to True wins over a False status',
  );
  t.equal(
    notUpgradeable(condition({ spec: { overrides: [upgradeable('False')] } })),
    'The operator is not upgradeable: migration running',
    'an override to False blocks',
  );
  t.equal(
    notUpgradeable(
      condition({ status: { conditions: [upgradeable('True', { observedGeneration: 0 })] } }),
    ),
    'The operatorcondition status "Upgradeable"="True" is outdated',
    'a status older than the spec blocks until mirrored',
  );
  t.equal(
    notUpgradeable(
      condition({ status: { conditions: [upgradeable('True', { observedGeneration: 1 })] } }),
    ),
    undefined,
  );
  t.end();
});

const snapshot = (extra: Partial<OperatorConditionSnapshot>): OperatorConditionSnapshot => ({
  namespace: 'ns1',
  name: 'etcdoperator.v0.9.4',
  now,
  deployments: [],
  ...extra,
});

t.test('operator condition - a CSV without one gets it, controlled by the CSV', async (t) => {
  const csv = await etcdCsv();
  const writes = generatorWrites([csv], new Map());
  t.match(writes, [
    {
      op: 'create',
      object: {
        apiVersion: 'operators.coreos.com/v2',
        kind: 'OperatorCondition',
        metadata: {
          name: 'etcdoperator.v0.9.4',
          namespace: 'ns1',
          ownerReferences: [{ kind: 'ClusterServiceVersion', uid: 'csv-uid', controller: true }],
        },
        spec: { deployments: ['etcd-operator'], serviceAccounts: ['etcd-operator'] },
      },
    },
  ]);
  t.equal(writes.length, 1);
  const copied = { ...csv, metadata: { ...csv.metadata, labels: { 'olm.copiedFrom': 'ns0' } } };
  const labelled = {
    ...csv,
    metadata: { ...csv.metadata, labels: { 'operators.coreos.com/etcd.ns1': '', other: 'x' } },
  };
  t.match(
    generatorWrites([labelled], new Map()),
    [{ op: 'create', object: { metadata: { labels: { 'operators.coreos.com/etcd.ns1': '' } } } }],
    "created with the CSV's component labels",
  );
  t.same(generatorWrites([copied], new Map()), [], 'copied CSVs get none');
  const deleting = {
    ...csv,
    metadata: { ...csv.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
  };
  t.same(generatorWrites([deleting], new Map()), [], 'deleted CSVs get none');
  t.same(
    generatorWrites([csv], new Map([['etcdoperator.v0.9.4', condition()]])),
    [],
    'one as wanted: nothing to do',
  );
});

t.test('operator condition - a changed strategy respecifies it, keeping overrides', async (t) => {
  const csv = await etcdCsv();
  const existing = condition({
    spec: {
      deployments: ['old-operator'],
      serviceAccounts: ['etcd-operator'],
      overrides: [upgradeable('True')],
    },
  });
  const writes = generatorWrites([csv], new Map([['etcdoperator.v0.9.4', existing]]));
  t.match(writes, [
    {
      op: 'update',
      object: {
        metadata: { resourceVersion: '7' },
        spec: { deployments: ['etcd-operator'], overrides: [{ type: 'Upgradeable' }] },
      },
    },
  ]);
  t.equal(writes.length, 1);
});

t.test('operator condition - Role and RoleBinding for its service accounts', (t) => {
  const writes = decideOperatorCondition(snapshot({ condition: condition() }));
  const owner = { kind: 'OperatorCondition', uid: 'cond-uid', controller: true };
  t.match(writes, [
    {
      op: 'create',
      object: {
        kind: 'Role',
        metadata: { name: 'etcdoperator.v0.9.4', namespace: 'ns1', ownerReferences: [owner] },
        rules: [
          {
            apiGroups: ['operators.coreos.com'],
            resources: ['operatorconditions'],
            resourceNames: ['etcdoperator.v0.9.4'],
            verbs: ['get', 'update', 'patch'],
          },
        ],
      },
    },
    {
      op: 'create',
      object: {
        kind: 'RoleBinding',
        metadata: { name: 'etcdoperator.v0.9.4', ownerReferences: [owner] },
        roleRef: { kind: 'Role', name: 'etcdoperator.v0.9.4' },
        subjects: [{ kind: 'ServiceAccount', name: 'etcd-operator' }],
      },
    },
  ]);
  t.equal(writes.length, 2);

  const role = writes[0]?.op === 'create' ? writes[0].object : undefined;
  const binding = writes[1]?.op === 'create' ? writes[1].object : undefined;
  if (role === undefined || binding === undefined) throw new Error('expected creates');
  t.same(
    binding['subjects'],
    [{ kind: 'ServiceAccount', name: 'etcd-operator' }],
    'subjects as upstream: kind and name, no apiGroup',
  );
  const served = { ...binding, subjects: [{ kind: 'ServiceAccount', name: 'etcd-operator' }] };
  t.same(
    decideOperatorCondition(snapshot({ condition: condition(), role, roleBinding: served })),
    [],
    'a binding as kube-apiserver serves it (empty apiGroup left out) needs no update',
  );
  t.same(
    decideOperatorCondition(snapshot({ condition: condition(), role, roleBinding: binding })),
    [],
    'nothing to do once they are in place',
  );

  const widened = { ...role, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] };
  t.match(
    decideOperatorCondition(
      snapshot({ condition: condition(), role: widened, roleBinding: binding }),
    ),
    [{ op: 'update', object: { kind: 'Role', rules: [{ verbs: ['get', 'update', 'patch'] }] } }],
    'edited rules are put back',
  );
  const rebound = {
    ...binding,
    metadata: { ...binding.metadata, uid: 'rb-uid' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
  };
  t.match(
    decideOperatorCondition(snapshot({ condition: condition(), role, roleBinding: rebound })),
    [
      {
        op: 'delete',
        ref: { kind: 'RoleBinding', name: 'etcdoperator.v0.9.4' },
        preconditions: { uid: 'rb-uid' },
      },
      { op: 'create', object: { kind: 'RoleBinding', roleRef: { kind: 'Role' } } },
    ],
    'a binding to another role is replaced (roleRef is immutable)',
  );
  t.ok(roleAsWanted(role), 'the Role as made needs no pass (trigger filter)');
  t.notOk(roleAsWanted(widened));
  t.end();
});

t.test('operator condition - OPERATOR_CONDITION_NAME is put back into its CSV deployments', (t) => {
  const deployment = (owner: string, env: { name: string; value: string }[]): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'etcd-operator',
      namespace: 'ns1',
      resourceVersion: '3',
      ownerReferences: [
        {
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'ClusterServiceVersion',
          name: owner,
          uid: 'x',
        },
      ],
    },
    spec: { template: { spec: { containers: [{ name: 'etcd', env }] } } },
  });
  const done = (writes: ReturnType<typeof decideOperatorCondition>) =>
    writes.filter((w) => w.op === 'update' && w.object.kind === 'Deployment');
  const role: KubeObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'etcdoperator.v0.9.4', ownerReferences: [] },
  };
  const stripped = deployment('etcdoperator.v0.9.4', [{ name: 'LOG', value: 'debug' }]);
  t.match(
    done(
      decideOperatorCondition(snapshot({ condition: condition(), role, deployments: [stripped] })),
    ),
    [
      {
        object: {
          spec: {
            template: {
              spec: {
                containers: [
                  {
                    env: [
                      { name: 'LOG', value: 'debug' },
                      { name: 'OPERATOR_CONDITION_NAME', value: 'etcdoperator.v0.9.4' },
                    ],
                  },
                ],
              },
            },
          },
        },
      },
    ],
  );
  const other = deployment('another.v1', []);
  t.same(
    done(decideOperatorCondition(snapshot({ condition: condition(), deployments: [other] }))),
    [],
    "another CSV's deployment is left alone",
  );
  const wrong = deployment('etcdoperator.v0.9.4', [
    { name: 'OPERATOR_CONDITION_NAME', value: 'nope' },
  ]);
  t.match(
    done(decideOperatorCondition(snapshot({ condition: condition(), deployments: [wrong] }))),
    [
      {
        object: {
          spec: {
            template: { spec: { containers: [{ env: [{ value: 'etcdoperator.v0.9.4' }] }] } },
          },
        },
      },
    ],
    'a wrong value is corrected in place',
  );
  t.end();
});

t.test(
  'operator condition - spec.conditions are mirrored into status with observedGeneration',
  (t) => {
    const c = condition({
      metadata: { ...condition().metadata, generation: 3 },
      spec: { conditions: [upgradeable('False')] },
    });
    const status = mirroredStatus(c, now);
    t.match(status, {
      conditions: [{ type: 'Upgradeable', status: 'False', observedGeneration: 3 }],
    });
    t.equal(mirroredStatus({ ...c, status: status ?? {} }, now), undefined, 'current: no write');
    const flipped = {
      ...c,
      metadata: { ...c.metadata, generation: 4 },
      spec: { conditions: [upgradeable('True', { lastTransitionTime: undefined })] },
      status: status ?? {},
    };
    const next = mirroredStatus(flipped, now);
    t.match(next, {
      conditions: [
        {
          status: 'True',
          message: 'safe',
          observedGeneration: 4,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    t.match(decideOperatorCondition(snapshot({ condition: flipped })).at(-1), {
      op: 'updateStatus',
      object: { metadata: { resourceVersion: '7' }, status: next },
    });
    t.end();
  },
);
