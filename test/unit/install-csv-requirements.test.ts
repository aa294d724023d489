// The CSV's requirement rows as upstream's requirementAndPermissionStatus writes them
// (pkg/controller/operators/olm/requirements.go): minKubeVersion against the server's version,
// CRDs sorted by name, native APIs, and per ServiceAccount (no uuid) one PolicyRule dependent
// per rule, checked against the RBAC that exists.
import t from 'tap';
import type { Csv } from '../../functions/install/csv-status.js';
import {
  minKubeVersionRow,
  nativeApiKey,
  requirementStatus,
  type RequirementsSnapshot,
} from '../../functions/install/csv/requirements.js';
import { ruleJson, ruleSatisfied, type RbacView } from '../../functions/install/csv/rule-check.js';
import type { Strategy } from '../../functions/install/csv/strategy.js';
import type { RequirementsContext } from '../../functions/install/csv/types.js';

const rbacGroup = 'rbac.authorization.k8s.io';
const sa = (name: string, owners: { kind: string; uid: string }[] = []) => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: {
    name,
    namespace: 'ns1',
    uid: `${name}-uid`,
    ...(owners.length === 0
      ? {}
      : {
          ownerReferences: owners.map((o) => ({
            apiVersion: 'operators.coreos.com/v1alpha1',
            name: 'x',
            ...o,
          })),
        }),
  },
});

const csvOf = (spec: Record<string, unknown> = {}): Csv =>
  ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'op.v1', namespace: 'ns1', uid: 'csv-uid' },
    spec: { install: { strategy: 'deployment', spec: { deployments: [] } }, ...spec },
  }) as unknown as Csv;

const namespacedRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] };
const clusterRule = { verbs: ['create', 'get'], apiGroups: [''], resources: ['namespaces'] };
const strategy: Strategy = {
  deployments: [],
  permissions: [{ serviceAccountName: 'op', rules: [namespacedRule] }],
  clusterPermissions: [{ serviceAccountName: 'op', rules: [clusterRule] }],
};

const binding = (kind: string, roleKind: string, role: string, namespace?: string) => ({
  apiVersion: `${rbacGroup}/v1`,
  kind,
  metadata: { name: role, ...(namespace === undefined ? {} : { namespace }) },
  subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: 'ns1' }],
  roleRef: { apiGroup: rbacGroup, kind: roleKind, name: role },
});
const role = (kind: string, name: string, rules: unknown[], namespace?: string) => ({
  apiVersion: `${rbacGroup}/v1`,
  kind,
  metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
  rules,
});

const granted = {
  roles: [role('Role', 'r', [namespacedRule], 'ns1')],
  roleBindings: [binding('RoleBinding', 'Role', 'r', 'ns1')],
  clusterRoles: [role('ClusterRole', 'cr', [clusterRule])],
  clusterRoleBindings: [binding('ClusterRoleBinding', 'ClusterRole', 'cr')],
} as unknown as RbacView;
const none: RbacView = { roles: [], roleBindings: [], clusterRoles: [], clusterRoleBindings: [] };

const snapshot = (
  rbac: RbacView,
  extra: Partial<RequirementsContext> = {},
  accounts = [sa('op', [{ kind: 'ClusterServiceVersion', uid: 'csv-uid' }])],
): RequirementsSnapshot => ({
  namespace: 'ns1',
  crds: new Map(),
  serviceAccounts: accounts,
  requirements: { serverVersion: 'v1.30.6', nativeApis: new Map(), rbac, ...extra },
});

t.test('requirements - a ServiceAccount lists one PolicyRule dependent per rule, no uuid', (t) => {
  const { rows, met } = requirementStatus(csvOf(), strategy, snapshot(granted));
  t.ok(met);
  t.same(rows, [
    {
      group: '',
      version: 'v1',
      kind: 'ServiceAccount',
      name: 'op',
      status: 'Present',
      message: '',
      dependents: [
        {
          group: rbacGroup,
          version: 'v1',
          kind: 'PolicyRule',
          status: 'Satisfied',
          message: 'namespaced rule:{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]}',
        },
        {
          group: rbacGroup,
          version: 'v1',
          kind: 'PolicyRule',
          status: 'Satisfied',
          message:
            'cluster rule:{"verbs":["create","get"],"apiGroups":[""],"resources":["namespaces"]}',
        },
      ],
    },
  ]);
  t.end();
});

t.test('requirements - rules the existing RBAC does not grant are NotSatisfied', (t) => {
  const { rows, met } = requirementStatus(csvOf(), strategy, snapshot(none));
  t.notOk(met);
  t.match(rows[0], {
    status: 'PresentNotSatisfied',
    message: 'Policy rule not satisfied for service account',
    dependents: [{ status: 'NotSatisfied' }, { status: 'NotSatisfied' }],
  });
  // A cluster rule is not granted by a RoleBinding to a ClusterRole.
  const onlyNamespaced = {
    ...none,
    clusterRoles: granted.clusterRoles,
    roleBindings: [binding('RoleBinding', 'ClusterRole', 'cr', 'ns1')],
  } as unknown as RbacView;
  const sa1 = { namespace: 'ns1', name: 'op' };
  t.ok(ruleSatisfied(onlyNamespaced, sa1, 'ns1', clusterRule), 'in the namespace');
  t.notOk(ruleSatisfied(onlyNamespaced, sa1, '', clusterRule), 'not cluster-wide');
  t.end();
});

t.test('requirements - rule matching: wildcards, resource names, non-resource URLs', (t) => {
  const sa1 = { namespace: 'ns1', name: 'op' };
  const view = (rules: unknown[]) =>
    ({
      ...none,
      clusterRoles: [role('ClusterRole', 'cr', rules)],
      clusterRoleBindings: [binding('ClusterRoleBinding', 'ClusterRole', 'cr')],
    }) as unknown as RbacView;
  const all = view([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  t.ok(
    ruleSatisfied(all, sa1, '', {
      verbs: ['delete'],
      apiGroups: ['apps'],
      resources: ['deployments'],
    }),
  );
  t.notOk(ruleSatisfied(all, sa1, '', { verbs: ['get'], nonResourceURLs: ['/metrics'] }));
  const named = view([
    { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] },
  ]);
  t.ok(
    ruleSatisfied(named, sa1, '', {
      verbs: ['get'],
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: ['a'],
    }),
  );
  t.notOk(
    ruleSatisfied(named, sa1, '', { verbs: ['get'], apiGroups: [''], resources: ['secrets'] }),
  );
  const urls = view([{ verbs: ['get'], nonResourceURLs: ['/metrics*'] }]);
  t.ok(ruleSatisfied(urls, sa1, '', { verbs: ['get'], nonResourceURLs: ['/metrics/x'] }));
  const other = { namespace: 'ns2', name: 'op' };
  t.notOk(ruleSatisfied(all, other, '', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }));
  t.equal(
    ruleJson({ verbs: ['get'], apiGroups: [], resources: ['pods'], nonResourceURLs: [] }),
    '{"verbs":["get"],"resources":["pods"]}',
    "Go's field order, empty lists left out",
  );
  t.end();
});

t.test('requirements - a ServiceAccount owned by another CSV is not satisfied', (t) => {
  const { rows, met } = requirementStatus(
    csvOf(),
    strategy,
    snapshot(granted, {}, [sa('op', [{ kind: 'ClusterServiceVersion', uid: 'old-uid' }])]),
  );
  t.notOk(met);
  t.same(rows, [
    {
      group: '',
      version: 'v1',
      kind: 'ServiceAccount',
      name: 'op',
      status: 'PresentNotSatisfied',
      message: 'Service account is owned by another ClusterServiceVersion',
    },
  ]);
  const missing = requirementStatus(csvOf(), strategy, snapshot(granted, {}, []));
  t.same(missing.rows[0]?.status, 'NotPresent');
  t.end();
});

t.test('requirements - minKubeVersion against the server version, first', (t) => {
  const csv = csvOf({ minKubeVersion: '1.23.0' });
  const { rows } = requirementStatus(csv, strategy, snapshot(granted));
  t.same(rows[0], {
    group: 'operators.coreos.com',
    version: 'v1alpha1',
    kind: 'ClusterServiceVersion',
    name: 'op.v1',
    status: 'Present',
    message: 'CSV minKubeVersion (1.23.0) less than server version (v1.30.6)',
  });
  t.match(minKubeVersionRow(csvOf({ minKubeVersion: '1.31.0' }), 'v1.30.6'), {
    status: 'PresentNotSatisfied',
    message: 'CSV version requirement not met: minKubeVersion (1.31.0) > server version (1.30.6)',
  });
  t.match(minKubeVersionRow(csvOf({ minKubeVersion: '1.23' }), 'v1.30.6'), {
    message: 'CSV version parsing error',
  });
  t.match(minKubeVersionRow(csv, undefined), { message: 'Server version discovery error' });
  t.match(minKubeVersionRow(csv, 'v1.30.6-k3s.1'), { status: 'Present' });
  t.equal(minKubeVersionRow(csvOf(), 'v1.30.6'), undefined, 'no row without minKubeVersion');
  const unmet = requirementStatus(csvOf({ minKubeVersion: '2.0.0' }), strategy, snapshot(granted));
  t.notOk(unmet.met);
  t.end();
});

t.test('requirements - CRDs sorted by name, then native APIs', (t) => {
  const csv = csvOf({
    customresourcedefinitions: {
      owned: [{ name: 'b.x.io', version: 'v1', kind: 'B' }],
      required: [{ name: 'a.x.io', version: 'v1', kind: 'A' }],
    },
    nativeAPIs: [
      { group: 'apps', version: 'v1', kind: 'Deployment' },
      { group: 'nope.io', version: 'v1', kind: 'Nope' },
    ],
  });
  const nativeApis = new Map([
    [nativeApiKey({ group: 'apps', version: 'v1', kind: 'Deployment' }), true],
  ]);
  const { rows, met } = requirementStatus(csv, strategy, snapshot(granted, { nativeApis }));
  t.notOk(met);
  t.same(
    rows.map((r) => `${r.kind}/${r.name}/${r.status}/${r.message}`),
    [
      'CustomResourceDefinition/a.x.io/NotPresent/CRD is not present',
      'CustomResourceDefinition/b.x.io/NotPresent/CRD is not present',
      'Deployment/v1.apps/Present/Native API exists',
      'Nope/v1.nope.io/NotPresent/Native API does not exist',
      'ServiceAccount/op/Present/',
    ],
  );
  t.end();
});
