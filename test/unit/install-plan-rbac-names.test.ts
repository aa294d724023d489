// The RBAC the plan derives from a CSV's permissions, named as upstream's
// RBACForClusterServiceVersion (pkg/controller/registry/resolver/rbac.go): Role and RoleBinding
// alike `<csv>-<sa>-<hash>`, ClusterRole and ClusterRoleBinding alike `<csv>-<hash>` with the
// namespace in the hash, the hash kube's SafeEncodeString of a decimal FNV-1a 32.
import t from 'tap';
import { rbacForCsv } from '../../shared/install-plan/index.js';
import { fnv32a, generatedRbacName, safeEncodeString } from '../../shared/kube/names.js';

const csv = (name: string) => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name },
  spec: {
    install: {
      strategy: 'deployment',
      spec: {
        deployments: [],
        permissions: [
          {
            serviceAccountName: 'etcd-operator',
            rules: [{ verbs: ['*'], apiGroups: ['x'], resources: ['*'] }],
          },
        ],
        clusterPermissions: [
          {
            serviceAccountName: 'etcd-operator',
            rules: [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }],
          },
        ],
      },
    },
  },
});

const names = (objects: ReturnType<typeof rbacForCsv>) =>
  Object.fromEntries(objects.map((o) => [o.kind, o.metadata.name ?? '']));

t.test('rbac names - hash primitives', (t) => {
  t.equal(fnv32a(''), 0x811c9dc5);
  t.equal(fnv32a('a'), 0xe40c292c);
  t.equal(safeEncodeString('0123456789'), '456789bcdf', "kube's alphabet, byte by byte");
  t.match(generatedRbacName('base', { a: 1 }), /^base-[4-9bcdf]{1,10}$/);
  const long = generatedRbacName('x'.repeat(80), 1);
  t.ok(long.length <= 63, 'within 63 characters');
  t.match(long, /^x+-[4-9bcdf]+$/);
  t.end();
});

t.test('rbac names - Role and RoleBinding alike, ClusterRole and binding alike', (t) => {
  const n = names(rbacForCsv(csv('etcdoperator.v0.9.4'), 'team-a'));
  t.match(n['Role'], /^etcdoperator\.v0\.9\.4-etcd-operator-[4-9bcdf]{1,10}$/);
  t.equal(n['RoleBinding'], n['Role']);
  t.match(n['ClusterRole'], /^etcdoperator\.v0\.9\.4-[4-9bcdf]{1,10}$/);
  t.equal(n['ClusterRoleBinding'], n['ClusterRole']);
  const b = names(rbacForCsv(csv('etcdoperator.v0.9.4'), 'team-b'));
  t.equal(b['Role'], n['Role'], 'a Role is named alike in every namespace, as upstream');
  t.not(b['ClusterRole'], n['ClusterRole'], 'a ClusterRole is per namespace of the install');
  const objects = rbacForCsv(csv('etcdoperator.v0.9.4'), 'team-a');
  const binding = objects.find((o) => o.kind === 'ClusterRoleBinding');
  t.match(binding, { roleRef: { kind: 'ClusterRole', name: n['ClusterRole'] } });
  t.match(binding?.metadata.labels, {
    'olm.owner': 'etcdoperator.v0.9.4',
    'olm.owner.namespace': 'team-a',
    'olm.owner.kind': 'ClusterServiceVersion',
    'olm.permissions.hash': /^[0-9A-Za-z]+$/,
  });
  t.end();
});

t.test('rbac names - long names keep within 63 characters', (t) => {
  const n = names(rbacForCsv(csv('node-maintenance-operator.v0.21.0-with-a-long-suffix'), 'ns'));
  for (const name of Object.values(n)) t.ok(name.length <= 63, name);
  t.end();
});
