// Bindings, subjects, reasons and the rules review of the RBAC authorizer.
import t from 'tap';
import type { UserInfo } from '../../devcluster/auth/index.js';
import { authorize, rulesReview } from '../../devcluster/auth/index.js';
import {
  alice,
  clusterRole,
  clusterRoleBinding,
  pathRequest,
  rbacOf,
  resourceRequest,
  role,
  roleBinding,
} from './devcluster-auth-fixtures.js';

const podReader = clusterRole('pod-reader', [
  { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
]);
const saUser: UserInfo = {
  username: 'system:serviceaccount:ns1:builder',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
};
const listPodsIn = (user: UserInfo, namespace: string) =>
  resourceRequest(user, 'list', { resource: 'pods', namespace });

void t.test('rbac authorize - nothing bound denies with no reason', (t) => {
  t.same(authorize(listPodsIn(alice, 'ns1'), rbacOf([podReader])), { allowed: false, reason: '' });
  t.end();
});

void t.test('rbac authorize - system:masters is allowed without any binding', (t) => {
  const admin: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
  t.equal(
    authorize(resourceRequest(admin, 'delete', { resource: 'nodes', name: 'n' }), rbacOf([]))
      .allowed,
    true,
  );
  t.end();
});

void t.test(
  'rbac authorize - ClusterRoleBinding to a user allows in every namespace and names the binding',
  (t) => {
    const rbac = rbacOf([
      podReader,
      clusterRoleBinding('readers', 'pod-reader', [{ kind: 'User', name: 'alice' }]),
    ]);
    t.same(authorize(listPodsIn(alice, 'ns1'), rbac), {
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "readers" of ClusterRole "pod-reader" to User "alice"',
    });
    t.equal(authorize(resourceRequest(alice, 'list', { resource: 'pods' }), rbac).allowed, true);
    t.end();
  },
);

void t.test('rbac authorize - ClusterRoleBinding to a group matches members only', (t) => {
  const rbac = rbacOf([
    podReader,
    clusterRoleBinding('devs', 'pod-reader', [{ kind: 'Group', name: 'devs' }]),
  ]);
  t.match(authorize(listPodsIn(alice, 'ns1'), rbac).reason, 'to Group "devs"');
  const bob: UserInfo = { username: 'bob', groups: ['system:authenticated'] };
  t.equal(authorize(listPodsIn(bob, 'ns1'), rbac).allowed, false);
  t.end();
});

void t.test('rbac authorize - RoleBinding to a ClusterRole grants only in its namespace', (t) => {
  const rbac = rbacOf([
    podReader,
    roleBinding('ns1', 'rb', { kind: 'ClusterRole', name: 'pod-reader' }, [
      { kind: 'User', name: 'alice' },
    ]),
  ]);
  t.same(authorize(listPodsIn(alice, 'ns1'), rbac), {
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "rb/ns1" of ClusterRole "pod-reader" to User "alice"',
  });
  t.equal(authorize(listPodsIn(alice, 'ns2'), rbac).allowed, false);
  t.equal(
    authorize(resourceRequest(alice, 'list', { resource: 'pods' }), rbac).allowed,
    false,
    'cluster scope',
  );
  t.end();
});

void t.test(
  'rbac authorize - RoleBinding to a Role uses the Role of the binding namespace',
  (t) => {
    const rules = [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }];
    const rbac = rbacOf([
      role('ns2', 'reader', rules),
      roleBinding('ns1', 'rb', { kind: 'Role', name: 'reader' }, [{ kind: 'User', name: 'alice' }]),
      roleBinding('ns2', 'rb', { kind: 'Role', name: 'reader' }, [{ kind: 'User', name: 'alice' }]),
    ]);
    t.equal(authorize(listPodsIn(alice, 'ns2'), rbac).allowed, true);
    t.same(authorize(listPodsIn(alice, 'ns1'), rbac), {
      allowed: false,
      reason: '',
      evaluationError: 'RBAC: role.rbac.authorization.k8s.io "reader" not found',
    });
    t.end();
  },
);

void t.test(
  'rbac authorize - ServiceAccount subject without namespace means the binding namespace',
  (t) => {
    const rbac = rbacOf([
      podReader,
      roleBinding('ns1', 'rb', { kind: 'ClusterRole', name: 'pod-reader' }, [
        { kind: 'ServiceAccount', name: 'builder' },
      ]),
    ]);
    t.same(authorize(listPodsIn(saUser, 'ns1'), rbac), {
      allowed: true,
      reason:
        'RBAC: allowed by RoleBinding "rb/ns1" of ClusterRole "pod-reader" to ServiceAccount "builder/ns1"',
    });
    t.end();
  },
);

void t.test('rbac authorize - ServiceAccount subject of another namespace does not match', (t) => {
  const rbac = rbacOf([
    podReader,
    roleBinding('ns1', 'rb', { kind: 'ClusterRole', name: 'pod-reader' }, [
      { kind: 'ServiceAccount', name: 'builder', namespace: 'ns2' },
    ]),
  ]);
  t.equal(authorize(listPodsIn(saUser, 'ns1'), rbac).allowed, false);
  t.end();
});

void t.test(
  'rbac authorize - ServiceAccount subject in a ClusterRoleBinding needs its namespace',
  (t) => {
    const withNamespace = rbacOf([
      podReader,
      clusterRoleBinding('crb', 'pod-reader', [
        { kind: 'ServiceAccount', name: 'builder', namespace: 'ns1' },
      ]),
    ]);
    t.equal(
      authorize(listPodsIn(saUser, 'other'), withNamespace).reason,
      'RBAC: allowed by ClusterRoleBinding "crb" of ClusterRole "pod-reader" to ServiceAccount "builder/ns1"',
    );
    const withoutNamespace = rbacOf([
      podReader,
      clusterRoleBinding('crb', 'pod-reader', [{ kind: 'ServiceAccount', name: 'builder' }]),
    ]);
    t.equal(authorize(listPodsIn(saUser, 'ns1'), withoutNamespace).allowed, false);
    t.end();
  },
);

void t.test('rbac authorize - ServiceAccount groups can be bound', (t) => {
  const rbac = rbacOf([
    podReader,
    clusterRoleBinding('all-sa-in-ns1', 'pod-reader', [
      { kind: 'Group', name: 'system:serviceaccounts:ns1' },
    ]),
  ]);
  t.equal(authorize(listPodsIn(saUser, 'ns9'), rbac).allowed, true);
  t.end();
});

void t.test('rbac authorize - ClusterRoleBindings are consulted before RoleBindings', (t) => {
  const rbac = rbacOf([
    podReader,
    roleBinding('ns1', 'rb', { kind: 'ClusterRole', name: 'pod-reader' }, [
      { kind: 'User', name: 'alice' },
    ]),
    clusterRoleBinding('crb', 'pod-reader', [{ kind: 'User', name: 'alice' }]),
  ]);
  t.match(
    authorize(listPodsIn(alice, 'ns1'), rbac).reason,
    /^RBAC: allowed by ClusterRoleBinding "crb"/,
  );
  t.end();
});

void t.test('rbac authorize - the first subject that applies is the one reported', (t) => {
  const rbac = rbacOf([
    podReader,
    clusterRoleBinding('crb', 'pod-reader', [
      { kind: 'User', name: 'bob' },
      { kind: 'Group', name: 'devs' },
      { kind: 'User', name: 'alice' },
    ]),
  ]);
  t.match(authorize(listPodsIn(alice, 'ns1'), rbac).reason, /to Group "devs"$/);
  t.end();
});

void t.test('rbac authorize - a binding to a missing ClusterRole explains the denial', (t) => {
  const rbac = rbacOf([clusterRoleBinding('crb', 'ghost', [{ kind: 'User', name: 'alice' }])]);
  t.same(authorize(listPodsIn(alice, 'ns1'), rbac), {
    allowed: false,
    reason: '',
    evaluationError: 'RBAC: clusterrole.rbac.authorization.k8s.io "ghost" not found',
  });
  t.end();
});

void t.test('rbac authorize - several resolution errors are listed once each in brackets', (t) => {
  const rbac = rbacOf([
    clusterRoleBinding('a', 'ghost', [{ kind: 'User', name: 'alice' }]),
    clusterRoleBinding('b', 'ghost', [{ kind: 'User', name: 'alice' }]),
    roleBinding('ns1', 'c', { kind: 'Role', name: 'phantom' }, [{ kind: 'User', name: 'alice' }]),
  ]);
  t.equal(
    authorize(listPodsIn(alice, 'ns1'), rbac).evaluationError,
    'RBAC: [clusterrole.rbac.authorization.k8s.io "ghost" not found, role.rbac.authorization.k8s.io "phantom" not found]',
  );
  t.end();
});

void t.test('rbac authorize - a resolution error does not hide a later grant', (t) => {
  const rbac = rbacOf([
    podReader,
    clusterRoleBinding('a', 'ghost', [{ kind: 'User', name: 'alice' }]),
    clusterRoleBinding('b', 'pod-reader', [{ kind: 'User', name: 'alice' }]),
  ]);
  t.same(authorize(listPodsIn(alice, 'ns1'), rbac), {
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "pod-reader" to User "alice"',
  });
  t.end();
});

void t.test('rbac authorize - non-resource URLs are granted by ClusterRoleBindings only', (t) => {
  const healthz = clusterRole('healthz', [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]);
  const viaRoleBinding = rbacOf([
    healthz,
    roleBinding('ns1', 'rb', { kind: 'ClusterRole', name: 'healthz' }, [
      { kind: 'User', name: 'alice' },
    ]),
  ]);
  t.equal(authorize(pathRequest(alice, 'get', '/healthz'), viaRoleBinding).allowed, false);
  const viaClusterRoleBinding = rbacOf([
    healthz,
    clusterRoleBinding('crb', 'healthz', [{ kind: 'User', name: 'alice' }]),
  ]);
  t.equal(authorize(pathRequest(alice, 'get', '/healthz'), viaClusterRoleBinding).allowed, true);
  t.end();
});

void t.test('rbac authorize - unsupported roleRef kind is an evaluation error', (t) => {
  const binding = clusterRoleBinding('crb', 'x', [{ kind: 'User', name: 'alice' }]);
  binding['roleRef'] = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Policy', name: 'x' };
  t.equal(
    authorize(listPodsIn(alice, 'ns1'), rbacOf([binding])).evaluationError,
    'RBAC: unsupported role reference kind: "Policy"',
  );
  t.end();
});

void t.test('rbac rules review - lists the rules of every applying binding, split by kind', (t) => {
  const rbac = rbacOf([
    podReader,
    clusterRole('mixed', [
      { verbs: ['get'], nonResourceURLs: ['/healthz'] },
      { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] },
    ]),
    clusterRoleBinding('crb', 'mixed', [{ kind: 'Group', name: 'devs' }]),
    roleBinding('ns1', 'rb', { kind: 'ClusterRole', name: 'pod-reader' }, [
      { kind: 'User', name: 'alice' },
    ]),
    roleBinding('ns2', 'rb', { kind: 'ClusterRole', name: 'pod-reader' }, [
      { kind: 'User', name: 'alice' },
    ]),
  ]);
  t.same(rulesReview(alice, 'ns1', rbac), {
    resourceRules: [
      { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'] },
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
    ],
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
    incomplete: false,
  });
  t.end();
});

void t.test(
  'rbac rules review - resolution errors are reported without marking it incomplete',
  (t) => {
    const rbac = rbacOf([
      roleBinding('ns1', 'rb', { kind: 'Role', name: 'gone' }, [{ kind: 'User', name: 'alice' }]),
    ]);
    t.same(rulesReview(alice, 'ns1', rbac), {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: false,
      evaluationError: 'role.rbac.authorization.k8s.io "gone" not found',
    });
    t.end();
  },
);
