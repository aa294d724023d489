import t from 'tap';
import {
  ApiSet,
  InvalidTargetNamespacesError,
  NamespaceSet,
  aggregateClusterRole,
  aggregateClusterRoleName,
  aggregationLabel,
  apiKeyHash,
  apiServiceClusterRoles,
  crdClusterRoles,
  installModeProblem,
  memberAnnotations,
  memberAnnotationsDiffer,
  namespaceLabelChanges,
  namespacesAddedOrRemoved,
  namespacesChanged,
  providedApisAction,
  providedApisOf,
  prunedGroupApis,
  roleMatches,
  reconcileApiIntersection,
  singletonClusterRole,
  singletonClusterRoleBinding,
  surfaceTargets,
  targetNamespaces,
  targetSelectionOf,
  tenantRole,
  tenantRoleBinding,
  type OperatorGroupLike,
} from '../../shared/operator-group/index.js';

const group = (
  namespace: string,
  name: string,
  namespaces: string[],
  apis = '',
  staticApis = false,
): OperatorGroupLike => ({
  metadata: {
    namespace,
    name,
    uid: `${namespace}-${name}`,
    annotations: apis === '' ? {} : { 'olm.providedAPIs': apis },
  },
  spec: { staticProvidedAPIs: staticApis },
  status: { namespaces },
});

t.test(
  'operator-group targets - targetNamespaces wins, a missing or empty selector is all, else the selector',
  (t) => {
    t.same(
      targetSelectionOf({
        metadata: { name: 'g' },
        spec: { targetNamespaces: ['b', 'a', 'b'], selector: { matchLabels: { x: 'y' } } },
      }),
      {
        type: 'explicit',
        namespaces: ['a', 'b'],
      },
    );
    t.same(targetSelectionOf({ metadata: { name: 'g' } }), { type: 'all' });
    t.same(targetSelectionOf({ metadata: { name: 'g' }, spec: { selector: {} } }), { type: 'all' });
    t.same(
      targetSelectionOf({ metadata: { name: 'g' }, spec: { selector: { matchExpressions: [] } } }),
      { type: 'all' },
    );
    t.same(
      targetSelectionOf({
        metadata: { name: 'g' },
        spec: { selector: { matchLabels: { x: 'y' } } },
      }).type,
      'selector',
    );
    t.same(targetNamespaces({ type: 'all' }), ['']);
    t.same(
      targetNamespaces({ type: 'selector', selector: { matchLabels: { a: 'b' } } }, ['z', 'a']),
      ['a', 'z'],
    );
    t.same(
      targetNamespaces({ type: 'selector', selector: { matchLabels: { a: 'b' } } }, []),
      [],
      'a selector may match nothing',
    );
    t.end();
  },
);

t.test(
  'operator-group targets - "" inside targetNamespaces is a non-retryable error naming the list',
  (t) => {
    const error = t.throws(() =>
      targetSelectionOf({ metadata: { name: 'g' }, spec: { targetNamespaces: ['a', ''] } }),
    ) as InvalidTargetNamespacesError;
    t.ok(error instanceof InvalidTargetNamespacesError);
    t.equal(error.retryable, false);
    t.match(error.message, /TargetNamespaces cannot contain NamespaceAll/);
    t.end();
  },
);

t.test(
  'operator-group targets - set changes, added/removed, and NamespaceSet semantics of ""',
  (t) => {
    t.notOk(namespacesChanged(['a', 'b'], ['b', 'a']));
    t.ok(namespacesChanged(['a'], ['a', 'b']));
    t.ok(namespacesChanged(['a'], undefined));
    t.same(namespacesAddedOrRemoved(['a', 'b'], ['b', 'c']), ['a', 'c']);
    t.same(namespacesAddedOrRemoved([''], ['a']), ['a'], '"" is never requeued');
    const all = new NamespaceSet(['']);
    t.ok(all.isAll);
    t.ok(all.contains('anything'));
    t.ok(all.intersects(new NamespaceSet(['x'])));
    t.notOk(all.intersects(new NamespaceSet([])), 'All ∩ ∅ = ∅');
    t.notOk(new NamespaceSet(['a']).intersects(new NamespaceSet(['b'])));
    t.ok(NamespaceSet.fromAnnotation('a,b').contains('b'));
    t.ok(NamespaceSet.fromAnnotation('').isAll, 'an empty annotation is all namespaces');
    t.end();
  },
);

t.test(
  'operator-group targets - provided-API surface adds the group namespace unless global',
  (t) => {
    t.same(surfaceTargets(group('ns', 'g', ['a'])).toArray(), ['a', 'ns']);
    t.ok(surfaceTargets(group('ns', 'g', [''])).isAll);
    t.same(
      surfaceTargets(group('ns', 'g', [])).toArray(),
      [],
      'a group targeting nothing surfaces nowhere',
    );
    t.end();
  },
);

t.test(
  'operator-group annotations - members carry the group, its namespace and sorted targets',
  (t) => {
    const g = group('ops', 'og', ['b', 'a']);
    t.same(memberAnnotations(g), {
      'olm.operatorNamespace': 'ops',
      'olm.operatorGroup': 'og',
      'olm.targetNamespaces': 'a,b',
    });
    t.same(memberAnnotations(group('ops', 'og', [''])), {
      'olm.operatorNamespace': 'ops',
      'olm.operatorGroup': 'og',
      'olm.targetNamespaces': '',
    });
    t.notOk(
      memberAnnotationsDiffer(
        {
          'olm.operatorNamespace': 'ops',
          'olm.operatorGroup': 'og',
          'olm.targetNamespaces': 'a,b',
          other: 'x',
        },
        g,
      ),
    );
    t.ok(
      memberAnnotationsDiffer(
        { 'olm.operatorNamespace': 'ops', 'olm.operatorGroup': 'og', 'olm.targetNamespaces': 'a' },
        g,
      ),
    );
    t.ok(memberAnnotationsDiffer(undefined, g));
    t.end();
  },
);

t.test(
  'operator-group labels - namespaces carry exactly the uid labels of the non-global groups targeting them',
  (t) => {
    t.same(namespaceLabelChanges({ 'olm.operatorgroup.uid/old': '', keep: 'x' }, ['new']), {
      add: ['olm.operatorgroup.uid/new'],
      remove: ['olm.operatorgroup.uid/old'],
    });
    t.same(namespaceLabelChanges({ 'olm.operatorgroup.uid/u': '' }, ['u']), {
      add: [],
      remove: [],
    });
    t.end();
  },
);

t.test('operator-group membership - install modes against targets, with upstream messages', (t) => {
  const modes = (...supported: string[]) =>
    ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'].map((type) => ({
      type,
      supported: supported.includes(type),
    }));
  const cases: [string, ReturnType<typeof modes>, string | undefined, string | undefined][] = [
    [
      'own ns needs OwnNamespace',
      modes('SingleNamespace'),
      'ops',
      'OwnNamespace InstallModeType not supported, cannot configure to watch own namespace',
    ],
    ['own ns ok', modes('OwnNamespace'), 'ops', undefined],
    [
      'all needs AllNamespaces',
      modes('OwnNamespace'),
      '',
      'AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces',
    ],
    ['all ok', modes('AllNamespaces'), '', undefined],
    [
      'other ns needs SingleNamespace',
      modes('OwnNamespace'),
      'x',
      'SingleNamespace InstallModeType not supported, cannot configure to watch one namespace',
    ],
    [
      'several need MultiNamespace',
      modes('SingleNamespace'),
      'x,y',
      'MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces',
    ],
    [
      'several incl. own need OwnNamespace too',
      modes('MultiNamespace'),
      'ops,y',
      'OwnNamespace InstallModeType not supported, cannot configure to watch own namespace',
    ],
    ['several ok', modes('MultiNamespace'), 'x,y', undefined],
  ];
  for (const [name, m, targets, message] of cases) {
    const problem = installModeProblem(m, 'ops', targets);
    t.equal(problem?.message, message, name);
    if (message !== undefined)
      t.equal(problem?.reason, 'UnsupportedOperatorGroup', `${name}: reason`);
  }
  t.same(installModeProblem(modes('AllNamespaces'), 'ops', undefined), {
    reason: 'NoTargetNamespaces',
    message: 'csv missing olm.targetNamespaces annotation',
  });
  t.equal(
    installModeProblem(
      [
        { type: 'AllNamespaces', supported: true },
        { type: 'AllNamespaces', supported: false },
      ],
      'ops',
      '',
    )?.reason,
    'InvalidInstallModes',
  );
  t.end();
});

t.test(
  'operator-group provided APIs - from owned CRDs and APIServices; annotation parsing and fnv64a hashes',
  (t) => {
    const apis = providedApisOf({
      spec: {
        customresourcedefinitions: {
          owned: [
            {
              name: 'etcdclusters.etcd.database.coreos.com',
              version: 'v1beta2',
              kind: 'EtcdCluster',
            },
          ],
        },
        apiservicedefinitions: {
          owned: [{ name: 'things', group: 'x.io', version: 'v1', kind: 'Thing' }],
        },
      },
    });
    t.equal(apis.toString(), 'EtcdCluster.v1beta2.etcd.database.coreos.com,Thing.v1.x.io');
    t.equal(
      ApiSet.parse('Thing.v1.x.io, EtcdCluster.v1beta2.etcd.database.coreos.com').toString(),
      apis.toString(),
    );
    t.equal(ApiSet.parse('').size, 0);
    t.equal(ApiSet.parse('bad').size, 0, 'malformed entries are skipped');
    // fnv-1a 64 reference values: "" → cbf29ce484222325, "a" → af63dc4c8601ec8c.
    t.equal(apiKeyHash({ kind: 'a', version: '', group: '' }).length > 0, true);
    t.equal(
      apiKeyHash({ kind: 'EtcdCluster', version: 'v1beta2', group: 'etcd.database.coreos.com' }),
      fnv('EtcdCluster.v1beta2.etcd.database.coreos.com'),
    );
    t.end();
  },
);

function fnv(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const c of Buffer.from(text)) h = ((h ^ BigInt(c)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16);
}

t.test('operator-group intersection - the table row by row', (t) => {
  const P = ApiSet.parse('A.v1.g');
  // Rows: (P⊆G, P∩I≠∅) → result.
  const own = group('ns1', 'g1', ['ns1'], 'A.v1.g');
  const ownEmpty = group('ns1', 'g1', ['ns1']);
  const otherWithA = group('ns2', 'g2', ['ns1'], 'A.v1.g'); // targets ns1: intersects
  const otherDisjoint = group('ns3', 'g3', ['ns3'], 'A.v1.g');
  t.equal(
    reconcileApiIntersection(P, own, [own, otherWithA]),
    'RemoveAPIs',
    'P⊆G ∧ P∩I≠∅ → RemoveAPIs',
  );
  t.equal(
    reconcileApiIntersection(P, ownEmpty, [ownEmpty, otherWithA]),
    'APIConflict',
    'P⊄G ∧ P∩I≠∅ → APIConflict',
  );
  t.equal(
    reconcileApiIntersection(P, ownEmpty, [ownEmpty, otherDisjoint]),
    'AddAPIs',
    'P⊄G, no intersection → AddAPIs',
  );
  t.equal(
    reconcileApiIntersection(P, own, [own, otherDisjoint]),
    'NoAPIConflict',
    'P⊆G, no intersection → NoAPIConflict',
  );
  t.equal(
    reconcileApiIntersection(P, ownEmpty, [ownEmpty, group('ns9', 'all', [''], 'A.v1.g')]),
    'APIConflict',
    'a global group intersects every group',
  );
  t.equal(
    reconcileApiIntersection(new ApiSet([]), ownEmpty, [ownEmpty]),
    'NoAPIConflict',
    'no APIs, nothing to do',
  );
  t.end();
});

t.test(
  'operator-group intersection - actions: union, difference, static groups, conflict messages',
  (t) => {
    const P = ApiSet.parse('A.v1.g');
    const g = group('ns1', 'g1', ['ns1'], 'B.v1.g');
    t.same(
      providedApisAction(P, g, [g]),
      { type: 'setGroupApis', value: 'A.v1.g,B.v1.g' },
      'AddAPIs writes the union',
    );
    const holder = group('ns1', 'g1', ['ns1'], 'A.v1.g,B.v1.g');
    const rival = group('ns2', 'g2', ['ns1'], 'A.v1.g');
    t.same(
      providedApisAction(P, holder, [holder, rival]),
      { type: 'setGroupApis', value: 'B.v1.g' },
      'RemoveAPIs writes the difference',
    );
    t.same(providedApisAction(P, g, [g, rival]), {
      type: 'fail',
      reason: 'InterOperatorGroupOwnerConflict',
      message: 'intersecting operatorgroups provide the same apis',
    });
    const staticGroup = group('ns1', 'g1', ['ns1'], 'B.v1.g', true);
    t.same(providedApisAction(P, staticGroup, [staticGroup]), {
      type: 'fail',
      reason: 'CannotModifyStaticOperatorGroupProvidedAPIs',
      message: 'static provided api operatorgroup cannot be modified by these apis',
    });
    const staticHolder = group('ns1', 'g1', ['ns1'], 'A.v1.g', true);
    t.same(
      providedApisAction(P, staticHolder, [staticHolder]),
      { type: 'none' },
      'a static group that already lists the APIs accepts the CSV',
    );
    const already = group('ns1', 'g1', ['ns1'], 'A.v1.g');
    t.same(providedApisAction(P, already, [already]), { type: 'none' });
    t.end();
  },
);

t.test(
  'operator-group pruning - entries no member provides go; static groups and pending members stop it',
  (t) => {
    const g = group('ns1', 'g1', ['ns1'], 'A.v1.g,B.v1.g');
    t.equal(
      prunedGroupApis(g, [{ apis: ApiSet.parse('A.v1.g'), phase: 'Succeeded', deleting: false }]),
      'A.v1.g',
    );
    t.equal(prunedGroupApis(g, []), '', 'no members: everything goes');
    t.equal(
      prunedGroupApis(g, [
        { apis: ApiSet.parse('A.v1.g,B.v1.g'), phase: 'Succeeded', deleting: false },
      ]),
      undefined,
      'nothing to prune',
    );
    t.equal(
      prunedGroupApis(group('ns1', 'g1', ['ns1'], 'A.v1.g', true), []),
      undefined,
      'static groups are never pruned',
    );
    t.equal(
      prunedGroupApis(g, [{ apis: ApiSet.parse('C.v1.g'), phase: 'Pending', deleting: false }]),
      undefined,
      'a Pending member about to add APIs aborts pruning',
    );
    t.end();
  },
);

t.test('operator-group roles - aggregated ClusterRole names, labels and selectors', (t) => {
  const name = aggregateClusterRoleName('ns', 'og', 'admin');
  t.match(name, /^olm\.og\.og\.admin-[0-9A-Za-z]+$/);
  t.not(name, aggregateClusterRoleName('other', 'og', 'admin'), 'the namespace is in the hash');
  const long = aggregateClusterRoleName('ns', 'x'.repeat(300), 'view');
  t.ok(long.length <= 253, 'long group names are cut to fit 253 characters');
  const api = { kind: 'A', version: 'v1', group: 'g' };
  const role = aggregateClusterRole(
    { namespace: 'ns', name: 'og' },
    'edit',
    new ApiSet([api, { kind: 'B', version: 'v1', group: 'g' }]),
  );
  t.same(role.metadata.labels, {
    'olm.owner': 'og',
    'olm.owner.namespace': 'ns',
    'olm.owner.kind': 'OperatorGroup',
    'olm.managed': 'true',
  });
  const selectors =
    role.aggregationRule?.clusterRoleSelectors.map((s) => Object.keys(s.matchLabels)[0]) ?? [];
  t.same(selectors, [...selectors].sort(), 'selectors sorted');
  t.ok(selectors.includes(aggregationLabel(api, 'edit')));
  t.equal(
    aggregationLabel(api, 'edit'),
    `olm.opgroup.permissions/aggregate-to-${apiKeyHash(api)}-edit`,
  );
  t.equal(
    aggregateClusterRole({ namespace: 'ns', name: 'og' }, 'view', new ApiSet([])).aggregationRule,
    undefined,
    'no APIs, no aggregation rule',
  );
  t.end();
});

t.test(
  'operator-group roles - an aggregated role filled by the aggregation controller is up to date',
  (t) => {
    const intended = aggregateClusterRole(
      { namespace: 'ns', name: 'og' },
      'admin',
      new ApiSet([{ kind: 'A', version: 'v1', group: 'g' }]),
    );
    const filled = { ...intended, rules: [{ verbs: ['*'], apiGroups: ['g'], resources: ['as'] }] };
    t.ok(roleMatches(filled, intended), 'rules aggregated into it are not a difference');
    const relabelled = { ...filled, metadata: { ...filled.metadata, labels: {} } };
    t.notOk(roleMatches(relabelled, intended), 'labels still are');
    const plain = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'plain' },
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
    };
    t.notOk(roleMatches({ ...plain, rules: [] }, plain), 'a plain role compares its rules');
    t.end();
  },
);

t.test('operator-group roles - per-API ClusterRoles: names, verbs, labels and owner', (t) => {
  const owner = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    name: 'widgets.x.io',
    uid: 'u1',
  };
  const roles = crdClusterRoles({ name: 'widgets.x.io', version: 'v1', kind: 'Widget' }, owner);
  t.same(
    roles.map((r) => r.metadata.name),
    [
      'widgets.x.io-v1-admin',
      'widgets.x.io-v1-edit',
      'widgets.x.io-v1-view',
      'widgets.x.io-v1-crdview',
    ],
  );
  t.same(
    roles.map((r) => r.rules?.[0]?.verbs),
    [['*'], ['create', 'update', 'patch', 'delete'], ['get', 'list', 'watch'], ['get']],
  );
  t.same(roles[0]?.rules?.[0], { verbs: ['*'], apiGroups: ['x.io'], resources: ['widgets'] });
  t.same(roles[3]?.rules?.[0], {
    verbs: ['get'],
    apiGroups: ['apiextensions.k8s.io'],
    resources: ['customresourcedefinitions'],
    resourceNames: ['widgets.x.io'],
  });
  const api = { kind: 'Widget', version: 'v1', group: 'x.io' };
  t.same(roles[1]?.metadata.labels, {
    'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
    [aggregationLabel(api, 'edit')]: 'true',
    'olm.managed': 'true',
  });
  t.equal(
    roles[3]?.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-view'],
    'true',
    'crdview aggregates to view',
  );
  t.same(roles[0]?.metadata.ownerReferences, [
    { ...owner, blockOwnerDeletion: false, controller: false },
  ]);
  t.throws(
    () => crdClusterRoles({ name: 'nodot', version: 'v1', kind: 'X' }, owner),
    /invalid parsing of name/,
  );
  const svc = apiServiceClusterRoles(
    { name: 'things', group: 'y.io', version: 'v2', kind: 'Thing' },
    { ...owner, kind: 'APIService' },
  );
  t.same(
    svc.map((r) => r.metadata.name),
    ['things-v2-admin', 'things-v2-edit', 'things-v2-view'],
  );
  t.same(svc[2]?.rules?.[0], {
    verbs: ['get', 'list', 'watch'],
    apiGroups: ['y.io'],
    resources: ['things'],
  });
  t.end();
});

t.test('operator-group roles - AllNamespaces lifting and tenant copies', (t) => {
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: {
      name: 'r',
      namespace: 'ops',
      labels: { 'olm.owner': 'csv' },
      uid: 'x',
      resourceVersion: '1',
    },
    rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
  };
  const lifted = singletonClusterRole(role);
  t.same(lifted.metadata, { name: 'r', labels: { 'olm.owner': 'csv' } });
  t.same(lifted.rules?.at(-1), {
    verbs: ['get', 'list', 'watch'],
    apiGroups: [''],
    resources: ['namespaces'],
  });
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'b', namespace: 'ops', labels: {} },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
    subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'ops' }],
  };
  t.same(singletonClusterRoleBinding(binding).roleRef, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name: 'r',
  });
  const owner = { name: 'csv', namespace: 'tenant', uid: 'copy-uid' };
  const copied = tenantRole(role, owner, 'ops');
  t.same(copied.metadata.labels, {
    'olm.owner': 'csv',
    'olm.owner.namespace': 'tenant',
    'olm.owner.kind': 'ClusterServiceVersion',
    'olm.copiedFrom': 'ops',
    'olm.managed': 'true',
  });
  t.equal(copied.metadata.namespace, 'tenant');
  t.equal(copied.metadata.ownerReferences?.[0]?.uid, 'copy-uid');
  t.equal(copied.metadata.uid, undefined, 'identity is not copied');
  t.same(tenantRoleBinding(binding, owner, 'ops').subjects, binding.subjects);
  t.end();
});
