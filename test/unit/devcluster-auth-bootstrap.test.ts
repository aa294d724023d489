// The default RBAC objects, judged by what they let users do.
import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import type { UserInfo } from '../../devcluster/auth/index.js';
import { authorize, bootstrapRbac } from '../../devcluster/auth/index.js';
import { pathRequest, rbacOf, resourceRequest, roleBinding } from './devcluster-auth-fixtures.js';

const defaults = bootstrapRbac();
const carol: UserInfo = { username: 'carol', groups: ['system:authenticated'] };

function named(kind: string, name: string): JsonObject | undefined {
  return defaults.find((o) => o['kind'] === kind && (o['metadata'] as JsonObject)['name'] === name);
}

/** The defaults plus a RoleBinding of carol to `clusterRole` in namespace team. */
function withCarolAs(clusterRole: string) {
  return rbacOf([
    ...defaults,
    roleBinding('team', 'carol', { kind: 'ClusterRole', name: clusterRole }, [
      { kind: 'User', name: 'carol' },
    ]),
  ]);
}

void t.test(
  'bootstrap rbac - every object is labelled and annotated as kube bootstraps it',
  (t) => {
    for (const object of defaults) {
      const metadata = object['metadata'] as JsonObject;
      t.same(metadata['labels'], {
        ...(metadata['labels'] as JsonObject),
        'kubernetes.io/bootstrapping': 'rbac-defaults',
      });
      t.same(metadata['annotations'], { 'rbac.authorization.kubernetes.io/autoupdate': 'true' });
    }
    t.end();
  },
);

void t.test('bootstrap rbac - holds the roles and bindings users meet', (t) => {
  for (const name of [
    'cluster-admin',
    'admin',
    'edit',
    'view',
    'system:aggregate-to-admin',
    'system:aggregate-to-edit',
    'system:aggregate-to-view',
    'system:discovery',
    'system:basic-user',
    'system:public-info-viewer',
    'system:auth-delegator',
  ]) {
    t.ok(named('ClusterRole', name), `ClusterRole ${name}`);
  }
  for (const name of [
    'cluster-admin',
    'system:discovery',
    'system:basic-user',
    'system:public-info-viewer',
  ]) {
    t.ok(named('ClusterRoleBinding', name), `ClusterRoleBinding ${name}`);
  }
  t.ok(named('Role', 'extension-apiserver-authentication-reader'));
  t.end();
});

void t.test('bootstrap rbac - cluster-admin is bound to system:masters', (t) => {
  t.same(named('ClusterRoleBinding', 'cluster-admin')?.['subjects'], [
    { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' },
  ]);
  t.end();
});

void t.test('bootstrap rbac - any authenticated user may discover APIs and review itself', (t) => {
  const rbac = rbacOf(defaults);
  t.equal(authorize(pathRequest(carol, 'get', '/apis/apps/v1'), rbac).allowed, true);
  t.equal(authorize(pathRequest(carol, 'get', '/version'), rbac).allowed, true);
  const review = resourceRequest(carol, 'create', {
    apiGroup: 'authorization.k8s.io',
    resource: 'selfsubjectaccessreviews',
  });
  t.equal(authorize(review, rbac).allowed, true);
  t.equal(
    authorize(resourceRequest(carol, 'list', { resource: 'pods', namespace: 'team' }), rbac)
      .allowed,
    false,
  );
  t.end();
});

void t.test('bootstrap rbac - unauthenticated callers may only read public info', (t) => {
  const anonymous: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
  const rbac = rbacOf(defaults);
  t.equal(authorize(pathRequest(anonymous, 'get', '/healthz'), rbac).allowed, true);
  t.equal(authorize(pathRequest(anonymous, 'get', '/api'), rbac).allowed, false);
  t.end();
});

void t.test('bootstrap rbac - admin, edit and view already hold their aggregated rules', (t) => {
  for (const name of ['admin', 'edit', 'view']) {
    const rules = named('ClusterRole', name)?.['rules'];
    t.ok(Array.isArray(rules) && rules.length > 5, `${name} has rules`);
  }
  t.end();
});

void t.test('bootstrap rbac - view reads workloads but not secrets', (t) => {
  const rbac = withCarolAs('view');
  t.equal(
    authorize(resourceRequest(carol, 'list', { resource: 'pods', namespace: 'team' }), rbac)
      .allowed,
    true,
  );
  t.equal(
    authorize(
      resourceRequest(carol, 'watch', {
        apiGroup: 'apps',
        resource: 'deployments',
        namespace: 'team',
      }),
      rbac,
    ).allowed,
    true,
  );
  t.equal(
    authorize(
      resourceRequest(carol, 'get', { resource: 'secrets', namespace: 'team', name: 's' }),
      rbac,
    ).allowed,
    false,
  );
  t.equal(
    authorize(resourceRequest(carol, 'create', { resource: 'pods', namespace: 'team' }), rbac)
      .allowed,
    false,
  );
  t.end();
});

void t.test(
  'bootstrap rbac - edit writes workloads and impersonates ServiceAccounts but not RBAC',
  (t) => {
    const rbac = withCarolAs('edit');
    t.equal(
      authorize(
        resourceRequest(carol, 'create', {
          apiGroup: 'apps',
          resource: 'deployments',
          namespace: 'team',
        }),
        rbac,
      ).allowed,
      true,
    );
    t.equal(
      authorize(
        resourceRequest(carol, 'get', { resource: 'secrets', namespace: 'team', name: 's' }),
        rbac,
      ).allowed,
      true,
    );
    t.equal(
      authorize(
        resourceRequest(carol, 'update', {
          apiGroup: 'coordination.k8s.io',
          resource: 'leases',
          namespace: 'team',
          name: 'l',
        }),
        rbac,
      ).allowed,
      true,
    );
    t.equal(
      authorize(
        resourceRequest(carol, 'impersonate', {
          resource: 'serviceaccounts',
          namespace: 'team',
          name: 'sa',
        }),
        rbac,
      ).allowed,
      true,
    );
    t.equal(
      authorize(
        resourceRequest(carol, 'create', {
          apiGroup: 'rbac.authorization.k8s.io',
          resource: 'roles',
          namespace: 'team',
        }),
        rbac,
      ).allowed,
      false,
    );
    t.end();
  },
);

void t.test('bootstrap rbac - admin manages Roles and RoleBindings in its namespace', (t) => {
  const rbac = withCarolAs('admin');
  t.equal(
    authorize(
      resourceRequest(carol, 'create', {
        apiGroup: 'rbac.authorization.k8s.io',
        resource: 'rolebindings',
        namespace: 'team',
      }),
      rbac,
    ).allowed,
    true,
  );
  t.equal(
    authorize(resourceRequest(carol, 'list', { resource: 'pods', namespace: 'team' }), rbac)
      .allowed,
    true,
    'via view',
  );
  t.equal(
    authorize(
      resourceRequest(carol, 'create', {
        apiGroup: 'rbac.authorization.k8s.io',
        resource: 'rolebindings',
        namespace: 'other',
      }),
      rbac,
    ).allowed,
    false,
  );
  t.end();
});

void t.test(
  'bootstrap rbac - extension-apiserver-authentication-reader reads only its ConfigMap',
  (t) => {
    const rbac = rbacOf([
      ...defaults,
      roleBinding(
        'kube-system',
        'reader',
        { kind: 'Role', name: 'extension-apiserver-authentication-reader' },
        [{ kind: 'User', name: 'carol' }],
      ),
    ]);
    const read = (name: string) =>
      authorize(
        resourceRequest(carol, 'get', { resource: 'configmaps', namespace: 'kube-system', name }),
        rbac,
      ).allowed;
    t.equal(read('extension-apiserver-authentication'), true);
    t.equal(read('other'), false);
    t.end();
  },
);

void t.test('bootstrap rbac - a fresh call returns fresh objects', (t) => {
  const first = bootstrapRbac();
  (first[0]?.['metadata'] as JsonObject)['name'] = 'changed';
  t.not((bootstrapRbac()[0]?.['metadata'] as JsonObject)['name'], 'changed');
  t.end();
});
