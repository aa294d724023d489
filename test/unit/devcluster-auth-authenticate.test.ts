// Authentication (certificates, tokens) and impersonation, as kube-apiserver applies them.
import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import type {
  AuthenticationContext,
  AuthenticationInput,
  UserInfo,
} from '../../devcluster/auth/index.js';
import {
  authenticate,
  bootstrapRbac,
  createServiceAccountSigningKey,
  issueServiceAccountToken,
} from '../../devcluster/auth/index.js';
import {
  clusterRole,
  clusterRoleBinding,
  rbacOf,
  roleBinding,
} from './devcluster-auth-fixtures.js';

const signingKeyPem = createServiceAccountSigningKey();
const now = new Date('2026-03-01T12:00:00Z');
const builder = { namespace: 'ns1', name: 'builder', uid: 'uid-builder' };
const aliceCertificate = { commonName: 'alice', organizations: ['devs'] };

function contextWith(rbacObjects: JsonObject[] = []): AuthenticationContext {
  return {
    signingKeyPem,
    staticTokens: new Map<string, UserInfo>([
      ['admin-token', { username: 'kube-admin', groups: ['system:masters'] }],
      ['ci-token', { username: 'ci', groups: ['system:authenticated'] }],
    ]),
    serviceAccountUid: (namespace, name) =>
      namespace === builder.namespace && name === builder.name ? builder.uid : undefined,
    rbac: rbacOf(rbacObjects),
    now,
  };
}

function asAlice(headers: AuthenticationInput['headers']): AuthenticationInput {
  return { clientCertificate: aliceCertificate, headers };
}

const impersonator = (rules: JsonObject[]): JsonObject[] => [
  clusterRole('impersonator', rules),
  clusterRoleBinding('alice-impersonates', 'impersonator', [{ kind: 'User', name: 'alice' }]),
];

void t.test('authenticate - no credentials is 401 Unauthorized', (t) => {
  t.same(authenticate({ headers: {} }, contextWith()), {
    ok: false,
    code: 401,
    reason: 'Unauthorized',
    message: 'Unauthorized',
  });
  t.end();
});

void t.test('authenticate - unknown bearer token is 401', (t) => {
  const result = authenticate({ authorizationHeader: 'Bearer nope', headers: {} }, contextWith());
  t.equal(result.ok ? 200 : result.code, 401);
  t.end();
});

void t.test('authenticate - non-bearer Authorization is 401', (t) => {
  const result = authenticate(
    { authorizationHeader: 'Basic YWRtaW46YWRtaW4=', headers: {} },
    contextWith(),
  );
  t.equal(result.ok ? 200 : result.code, 401);
  t.end();
});

void t.test('authenticate - client certificate CN is the user and O the groups', (t) => {
  t.same(authenticate(asAlice({}), contextWith()), {
    ok: true,
    user: { username: 'alice', groups: ['devs', 'system:authenticated'] },
  });
  t.end();
});

void t.test(
  'authenticate - static bearer token maps to its user once with system:authenticated',
  (t) => {
    const admin = authenticate(
      { authorizationHeader: 'Bearer admin-token', headers: {} },
      contextWith(),
    );
    t.same(admin, {
      ok: true,
      user: { username: 'kube-admin', groups: ['system:masters', 'system:authenticated'] },
    });
    const ci = authenticate({ authorizationHeader: 'bearer ci-token', headers: {} }, contextWith());
    t.same(ci, { ok: true, user: { username: 'ci', groups: ['system:authenticated'] } });
    t.end();
  },
);

void t.test(
  'authenticate - ServiceAccount token yields the ServiceAccount with its groups',
  (t) => {
    const { token } = issueServiceAccountToken(signingKeyPem, builder, 3600, now);
    const result = authenticate(
      { authorizationHeader: `Bearer ${token}`, headers: {} },
      contextWith(),
    );
    t.match(result, {
      ok: true,
      user: {
        username: 'system:serviceaccount:ns1:builder',
        uid: 'uid-builder',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
      },
    });
    t.end();
  },
);

void t.test('authenticate - ServiceAccount token of a deleted account is 401', (t) => {
  const { token } = issueServiceAccountToken(
    signingKeyPem,
    { ...builder, name: 'gone' },
    3600,
    now,
  );
  const result = authenticate(
    { authorizationHeader: `Bearer ${token}`, headers: {} },
    contextWith(),
  );
  t.equal(result.ok ? 200 : result.code, 401);
  t.end();
});

void t.test('authenticate - the client certificate wins over a bearer token', (t) => {
  const result = authenticate(
    { ...asAlice({}), authorizationHeader: 'Bearer admin-token' },
    contextWith(),
  );
  t.match(result, { ok: true, user: { username: 'alice' } });
  t.end();
});

void t.test('impersonation - user without the impersonate verb gets kube 403 wording', (t) => {
  t.same(authenticate(asAlice({ 'impersonate-user': 'bob' }), contextWith()), {
    ok: false,
    code: 403,
    reason: 'Forbidden',
    message:
      'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
  });
  t.end();
});

void t.test(
  'impersonation - allowed user becomes the impersonated user with system:authenticated',
  (t) => {
    const rbac = impersonator([{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'] }]);
    t.same(authenticate(asAlice({ 'impersonate-user': 'bob' }), contextWith(rbac)), {
      ok: true,
      user: { username: 'bob', groups: ['system:authenticated'] },
      impersonatedBy: { username: 'alice', groups: ['devs', 'system:authenticated'] },
    });
    t.end();
  },
);

void t.test('impersonation - resourceNames limit whom a user may impersonate', (t) => {
  const rbac = impersonator([
    { verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] },
  ]);
  t.equal(authenticate(asAlice({ 'impersonate-user': 'bob' }), contextWith(rbac)).ok, true);
  t.equal(authenticate(asAlice({ 'impersonate-user': 'carol' }), contextWith(rbac)).ok, false);
  t.end();
});

void t.test(
  'impersonation - a ServiceAccount is checked as serviceaccounts in its namespace',
  (t) => {
    t.same(
      authenticate(
        asAlice({ 'impersonate-user': 'system:serviceaccount:ns1:builder' }),
        contextWith(),
      ),
      {
        ok: false,
        code: 403,
        reason: 'Forbidden',
        message:
          'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"',
      },
    );
    t.end();
  },
);

void t.test(
  'impersonation - an impersonated ServiceAccount gets the ServiceAccount groups',
  (t) => {
    const rbac = [
      clusterRole('sa-impersonator', [
        { verbs: ['impersonate'], apiGroups: [''], resources: ['serviceaccounts'] },
      ]),
      roleBinding('ns1', 'alice', { kind: 'ClusterRole', name: 'sa-impersonator' }, [
        { kind: 'User', name: 'alice' },
      ]),
    ];
    t.match(
      authenticate(
        asAlice({ 'impersonate-user': 'system:serviceaccount:ns1:builder' }),
        contextWith(rbac),
      ),
      {
        ok: true,
        user: {
          username: 'system:serviceaccount:ns1:builder',
          groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
        },
      },
    );
    t.end();
  },
);

void t.test(
  'impersonation - the edit role may impersonate ServiceAccounts of its namespace only',
  (t) => {
    const rbac = [
      ...bootstrapRbac(),
      roleBinding('ns1', 'alice-edit', { kind: 'ClusterRole', name: 'edit' }, [
        { kind: 'User', name: 'alice' },
      ]),
    ];
    t.equal(
      authenticate(
        asAlice({ 'impersonate-user': 'system:serviceaccount:ns1:builder' }),
        contextWith(rbac),
      ).ok,
      true,
    );
    t.equal(
      authenticate(
        asAlice({ 'impersonate-user': 'system:serviceaccount:ns2:builder' }),
        contextWith(rbac),
      ).ok,
      false,
    );
    t.end();
  },
);

void t.test(
  'impersonation - malformed ServiceAccount names are impersonated as plain users',
  (t) => {
    const rbac = impersonator([{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'] }]);
    t.match(
      authenticate(
        asAlice({ 'impersonate-user': 'system:serviceaccount:Bad_NS:x' }),
        contextWith(rbac),
      ),
      {
        ok: true,
        user: { username: 'system:serviceaccount:Bad_NS:x', groups: ['system:authenticated'] },
      },
    );
    t.end();
  },
);

void t.test('impersonation - every requested group is checked', (t) => {
  const rbac = impersonator([
    { verbs: ['impersonate'], apiGroups: [''], resources: ['users'] },
    { verbs: ['impersonate'], apiGroups: [''], resources: ['groups'], resourceNames: ['readers'] },
  ]);
  const result = authenticate(
    asAlice({ 'impersonate-user': 'bob', 'impersonate-group': ['readers', 'admins'] }),
    contextWith(rbac),
  );
  t.same(result, {
    ok: false,
    code: 403,
    reason: 'Forbidden',
    message:
      'groups "admins" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
  });
  t.end();
});

void t.test('impersonation - requested groups replace the ServiceAccount groups', (t) => {
  const rbac = impersonator([
    { verbs: ['impersonate'], apiGroups: [''], resources: ['serviceaccounts', 'groups'] },
  ]);
  const result = authenticate(
    asAlice({
      'impersonate-user': 'system:serviceaccount:ns1:builder',
      'impersonate-group': ['readers'],
    }),
    contextWith(rbac),
  );
  t.match(result, { ok: true, user: { groups: ['readers', 'system:authenticated'] } });
  t.end();
});

void t.test('impersonation - naming system:authenticated explicitly does not add it twice', (t) => {
  const rbac = impersonator([
    { verbs: ['impersonate'], apiGroups: [''], resources: ['users', 'groups'] },
  ]);
  const result = authenticate(
    asAlice({ 'impersonate-user': 'bob', 'impersonate-group': ['system:authenticated', 'x'] }),
    contextWith(rbac),
  );
  t.match(result, { ok: true, user: { groups: ['system:authenticated', 'x'] } });
  t.end();
});

void t.test('impersonation - groups joined by node into one header value are split', (t) => {
  const rbac = impersonator([
    { verbs: ['impersonate'], apiGroups: [''], resources: ['users', 'groups'] },
  ]);
  const result = authenticate(
    asAlice({ 'Impersonate-User': 'bob', 'Impersonate-Group': 'a, b' }),
    contextWith(rbac),
  );
  t.match(result, {
    ok: true,
    user: { username: 'bob', groups: ['a', 'b', 'system:authenticated'] },
  });
  t.end();
});

void t.test(
  'impersonation - extra values are checked as userextras/<key> of authentication.k8s.io',
  (t) => {
    const rbac = impersonator([{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'] }]);
    t.same(
      authenticate(
        asAlice({ 'impersonate-user': 'bob', 'impersonate-extra-scopes': ['view'] }),
        contextWith(rbac),
      ),
      {
        ok: false,
        code: 403,
        reason: 'Forbidden',
        message:
          'userextras.authentication.k8s.io "view" is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
      },
    );
    t.end();
  },
);

void t.test('impersonation - allowed extras and uid are carried by the user', (t) => {
  const rbac = impersonator([
    { verbs: ['impersonate'], apiGroups: [''], resources: ['users'] },
    {
      verbs: ['impersonate'],
      apiGroups: ['authentication.k8s.io'],
      resources: ['userextras/acme.com/project', 'uids'],
    },
  ]);
  const result = authenticate(
    asAlice({
      'impersonate-user': 'bob',
      'impersonate-extra-acme.com%2fproject': ['p1', 'p2'],
      'impersonate-uid': 'bob-uid',
    }),
    contextWith(rbac),
  );
  t.same(result, {
    ok: true,
    user: {
      username: 'bob',
      groups: ['system:authenticated'],
      uid: 'bob-uid',
      extra: { 'acme.com/project': ['p1', 'p2'] },
    },
    impersonatedBy: { username: 'alice', groups: ['devs', 'system:authenticated'] },
  });
  t.end();
});

void t.test('impersonation - uid is checked as uids of authentication.k8s.io', (t) => {
  const rbac = impersonator([{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'] }]);
  const result = authenticate(
    asAlice({ 'impersonate-user': 'bob', 'impersonate-uid': 'u1' }),
    contextWith(rbac),
  );
  t.match(result, {
    ok: false,
    code: 403,
    message:
      'uids.authentication.k8s.io "u1" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
  });
  t.end();
});

void t.test('impersonation - groups without a user is an internal error as in kube', (t) => {
  t.match(authenticate(asAlice({ 'impersonate-group': ['x'] }), contextWith()), {
    ok: false,
    code: 500,
    reason: 'InternalError',
  });
  t.end();
});

void t.test('impersonation - system:masters may impersonate anyone', (t) => {
  const result = authenticate(
    {
      authorizationHeader: 'Bearer admin-token',
      headers: { 'impersonate-user': 'system:serviceaccount:ns9:any' },
    },
    contextWith(),
  );
  t.match(result, {
    ok: true,
    user: { username: 'system:serviceaccount:ns9:any' },
    impersonatedBy: { username: 'kube-admin' },
  });
  t.end();
});

void t.test('impersonation - impersonating system:anonymous gives system:unauthenticated', (t) => {
  const rbac = impersonator([{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'] }]);
  t.match(authenticate(asAlice({ 'impersonate-user': 'system:anonymous' }), contextWith(rbac)), {
    ok: true,
    user: { username: 'system:anonymous', groups: ['system:unauthenticated'] },
  });
  t.end();
});

void t.test(
  'impersonation - unauthenticated callers get 401 before any impersonation check',
  (t) => {
    t.match(authenticate({ headers: { 'impersonate-user': 'bob' } }, contextWith()), {
      ok: false,
      code: 401,
    });
    t.end();
  },
);
