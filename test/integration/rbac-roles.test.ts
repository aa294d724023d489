import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  aggregateClusterRoleName,
  aggregationLabel,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import {
  bundleCsv,
  createNamespace,
  createOperatorGroup,
  createOwnedCrds,
  createPermissionRbac,
  installCsv,
  startMultitenancy,
  waitForGroupStatus,
  waitForObject,
} from '../harness/multitenancy.js';

const clusterRole = (name: string) => ({
  kind: 'ClusterRole',
  apiVersion: 'rbac.authorization.k8s.io/v1',
  name,
});

t.test(
  'rbac - a Succeeded CSV gets per-API ClusterRoles; the group aggregates them; kubectl auth can-i agrees for a bound user',
  async (t) => {
    const { client, fixture } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    await createNamespace(client, 'tenant');
    const csv = await bundleCsv('etcd', 'etcdoperator.v0.9.4');
    await createOwnedCrds(client, csv);
    await createOperatorGroup(client, 'operators', 'og', {
      targetNamespaces: ['operators', 'tenant'],
    });
    await waitForGroupStatus(client, 'operators', 'og');
    await installCsv(client, csv, 'operators');

    const api = { group: 'etcd.database.coreos.com', version: 'v1beta2', kind: 'EtcdCluster' };
    const crd = await client.get({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: 'etcdclusters.etcd.database.coreos.com',
    });
    const expected: [string, string[], string][] = [
      ['etcdclusters.etcd.database.coreos.com-v1beta2-admin', ['*'], 'admin'],
      [
        'etcdclusters.etcd.database.coreos.com-v1beta2-edit',
        ['create', 'update', 'patch', 'delete'],
        'edit',
      ],
      ['etcdclusters.etcd.database.coreos.com-v1beta2-view', ['get', 'list', 'watch'], 'view'],
      ['etcdclusters.etcd.database.coreos.com-v1beta2-crdview', ['get'], 'view'],
    ];
    for (const [name, verbs, suffix] of expected) {
      const role = (await waitForObject<RoleObject>(
        client,
        name,
        clusterRole(name),
        (r) => r !== undefined,
      )) as RoleObject;
      t.same(role.rules?.[0]?.verbs, verbs, `${name} verbs`);
      t.equal(
        role.metadata.labels?.[`rbac.authorization.k8s.io/aggregate-to-${suffix}`],
        'true',
        `${name} kube aggregation label`,
      );
      t.equal(
        role.metadata.labels?.[aggregationLabel(api, suffix as 'admin')],
        'true',
        `${name} group aggregation label`,
      );
      t.equal(role.metadata.labels?.['olm.managed'], 'true');
      t.equal(
        role.metadata.ownerReferences?.[0]?.uid,
        crd?.metadata.uid,
        `${name} owned by the CRD`,
      );
    }
    const crdview = await client.get<RoleObject>({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      name: expected[3]?.[0] ?? '',
    });
    t.same(crdview?.rules?.[0], {
      verbs: ['get'],
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      resourceNames: ['etcdclusters.etcd.database.coreos.com'],
    });

    // The group's three aggregated roles select every provided API.
    const adminName = aggregateClusterRoleName('operators', 'og', 'admin');
    t.match(adminName, /^olm\.og\.og\.admin-[0-9a-zA-Z]+$/);
    const admin = (await waitForObject<RoleObject>(
      client,
      'aggregated admin selects 3 APIs',
      clusterRole(adminName),
      (r) => r?.aggregationRule?.clusterRoleSelectors.length === 3,
    )) as RoleObject;
    t.same(admin.metadata.labels, {
      'olm.owner': 'og',
      'olm.owner.namespace': 'operators',
      'olm.owner.kind': 'OperatorGroup',
      'olm.managed': 'true',
    });
    t.ok(
      admin.aggregationRule?.clusterRoleSelectors.some(
        (s) => s.matchLabels[aggregationLabel(api, 'admin')] === 'true',
      ),
    );
    await waitForObject<RoleObject>(
      client,
      'aggregated admin has the rules',
      clusterRole(adminName),
      (r) =>
        (r?.rules ?? []).some(
          (rule) => rule.resources?.includes('etcdclusters') === true && rule.verbs.includes('*'),
        ),
    );
    for (const suffix of ['edit', 'view'] as const) {
      await waitForObject(
        client,
        `aggregated ${suffix}`,
        clusterRole(aggregateClusterRoleName('operators', 'og', suffix)),
        (r) => r !== undefined,
      );
    }

    const skip = kubectlMissing();
    if (skip !== undefined) {
      t.skip(skip, () => undefined);
      return;
    }
    const viewName = aggregateClusterRoleName('operators', 'og', 'view');
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'alice-view', namespace: 'tenant' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: viewName },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
    await waitForObject<RoleObject>(
      client,
      'aggregated view has the rules',
      clusterRole(viewName),
      (r) => (r?.rules ?? []).some((rule) => rule.resources?.includes('etcdclusters') === true),
    );
    const can = async (verb: string, resource: string, namespace: string) =>
      (
        await kubectl(fixture, ['auth', 'can-i', verb, resource, '-n', namespace, '--as', 'alice'])
      ).stdout.trim();
    t.equal(
      await can('list', 'etcdclusters.etcd.database.coreos.com', 'tenant'),
      'yes',
      'view grants list',
    );
    t.equal(
      await can('delete', 'etcdclusters.etcd.database.coreos.com', 'tenant'),
      'no',
      'view does not grant delete',
    );
    t.equal(
      await can('list', 'etcdclusters.etcd.database.coreos.com', 'operators'),
      'no',
      'only where bound',
    );
  },
);

t.test(
  'rbac - AllNamespaces: the operator Roles and RoleBindings are lifted to ClusterRoles and ClusterRoleBindings',
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    await createOperatorGroup(client, 'operators', 'global');
    const csv = await bundleCsv('prometheus', 'prometheusoperator.0.37.0');
    await createOwnedCrds(client, csv);
    await waitForGroupStatus(client, 'operators', 'global');
    const installed = await installCsv(client, csv, 'operators');
    await createPermissionRbac(client, installed);
    const name = `${installed.metadata.name ?? ''}-0`;
    const role = (await waitForObject<RoleObject>(
      client,
      'lifted ClusterRole',
      clusterRole(name),
      (r) => r !== undefined,
    )) as RoleObject;
    t.same(
      role.rules?.at(-1),
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['namespaces'] },
      'plus view namespaces',
    );
    t.equal(role.metadata.labels?.['olm.owner'], installed.metadata.name, 'keeps the owner labels');
    type Crb = KubeObject & {
      roleRef: { kind: string; name: string };
      subjects: { name: string }[];
    };
    const crb = (await waitForObject<Crb>(
      client,
      'lifted CRB',
      { kind: 'ClusterRoleBinding', apiVersion: 'rbac.authorization.k8s.io/v1', name },
      (r) => r !== undefined,
    )) as Crb;
    t.same(crb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name });

    // Deleting the CSV takes its cluster-scoped RBAC along.
    await client.delete({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'operators',
      name: installed.metadata.name,
    });
    await waitForObject(
      client,
      'lifted ClusterRole gone',
      clusterRole(name),
      (r) => r === undefined,
    );
  },
);

t.test(
  "rbac - a new API reaches the group's aggregated roles as patches decided on the mirror, with no LIST",
  async (t) => {
    const { client, fixture } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    await createOperatorGroup(client, 'operators', 'og', { targetNamespaces: ['operators'] });
    await waitForGroupStatus(client, 'operators', 'og');
    const names = (['admin', 'edit', 'view'] as const).map((suffix) =>
      aggregateClusterRoleName('operators', 'og', suffix),
    );
    for (const name of names)
      await waitForObject(client, name, clusterRole(name), (r) => r !== undefined);
    // The roles exist: the pass that created them listed the API's. Count LISTs from now on.
    const lists = fixture.cluster.faults.inject({
      verbs: ['list'],
      resources: ['rbac.authorization.k8s.io/clusterroles'],
      action: { kind: 'delay', ms: 0 },
    });

    const csv = await bundleCsv('etcd', 'etcdoperator.v0.9.4');
    await createOwnedCrds(client, csv);
    await installCsv(client, csv, 'operators');
    for (const name of names) {
      await waitForObject<RoleObject>(
        client,
        `${name} selects the 3 APIs`,
        clusterRole(name),
        (r) => r?.aggregationRule?.clusterRoleSelectors.length === 3,
      );
    }
    t.equal(lists.hits, 0, 'no LIST of ClusterRoles for the new APIs');
  },
);

t.test(
  'rbac - a deleted group takes its aggregated ClusterRoles and namespace labels along',
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    await createNamespace(client, 'a');
    const group = await createOperatorGroup(client, 'operators', 'og', { targetNamespaces: ['a'] });
    const label = `olm.operatorgroup.uid/${group.metadata.uid ?? ''}`;
    await waitForObject(
      client,
      'a labelled',
      { kind: 'Namespace', apiVersion: 'v1', name: 'a' },
      (n) => n?.metadata.labels?.[label] === '',
    );
    const admin = aggregateClusterRoleName('operators', 'og', 'admin');
    await waitForObject(client, 'admin role', clusterRole(admin), (r) => r !== undefined);
    await client.delete({
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      namespace: 'operators',
      name: 'og',
    });
    await waitForObject(client, 'admin role gone', clusterRole(admin), (r) => r === undefined);
    await waitForObject(
      client,
      'label gone',
      { kind: 'Namespace', apiVersion: 'v1', name: 'a' },
      (n) => n !== undefined && n.metadata.labels?.[label] === undefined,
    );
    t.pass();
  },
);

t.test(
  "rbac - a ClusterRole of a group's aggregated name made by someone else is adopted, not replaced",
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    const admin = aggregateClusterRoleName('operators', 'og', 'admin');
    const made = await client.create<RoleObject>({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: admin, labels: { team: 'platform' } },
      rules: [],
    });
    await createOperatorGroup(client, 'operators', 'og', { targetNamespaces: ['operators'] });
    const adopted = await waitForObject(
      client,
      "the admin role labelled the group's",
      clusterRole(admin),
      (r) => r?.metadata.labels?.['olm.owner'] === 'og',
    );
    t.equal(adopted?.metadata.uid, made.metadata.uid, 'the same object');
    t.equal(adopted?.metadata.labels?.['team'], 'platform', 'its own labels kept');
    t.equal(adopted?.metadata.labels?.['olm.owner.namespace'], 'operators', 'owned by labels');
  },
);

t.test(
  'rbac - intersecting groups providing one API: the newcomer fails InterOperatorGroupOwnerConflict and recovers when the holder goes',
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'global');
    await createNamespace(client, 'team');
    await createOperatorGroup(client, 'global', 'all');
    await createOperatorGroup(client, 'team', 'own', { targetNamespaces: ['team'] });
    const ogRef = (namespace: string, name: string) => ({
      kind: 'OperatorGroup',
      apiVersion: 'operators.coreos.com/v1',
      namespace,
      name,
    });
    for (const [ns, name] of [
      ['global', 'all'],
      ['team', 'own'],
    ] as const) {
      await waitForGroupStatus(client, ns, name);
    }
    const holder = await installCsv(
      client,
      await bundleCsv('prometheus', 'prometheusoperator.0.37.0'),
      'global',
    );
    await waitForObject(client, 'holder APIs on its group', ogRef('global', 'all'), (g) =>
      (g?.metadata.annotations?.['olm.providedAPIs'] ?? '').includes(
        'Prometheus.v1.monitoring.coreos.com',
      ),
    );
    const newcomer = await installCsv(
      client,
      await bundleCsv('prometheus', 'prometheusoperator.0.22.2'),
      'team',
    );
    type Csv = KubeObject & { status?: { phase?: string; reason?: string; message?: string } };
    const ref = {
      kind: 'ClusterServiceVersion',
      apiVersion: 'operators.coreos.com/v1alpha1',
      namespace: 'team',
      name: newcomer.metadata.name ?? '',
    };
    const failed = await waitForObject<Csv>(
      client,
      'newcomer fails',
      ref,
      (c) => c?.status?.reason === 'InterOperatorGroupOwnerConflict',
    );
    t.equal(failed?.status?.phase, 'Failed');
    t.equal(failed?.status?.message, 'intersecting operatorgroups provide the same apis');
    t.equal(
      (await client.get(ogRef('team', 'own')))?.metadata.annotations?.['olm.providedAPIs'],
      undefined,
      'its group annotation stays empty',
    );

    await client.delete({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'global',
      name: holder.metadata.name,
    });
    const recovered = await waitForObject<Csv>(
      client,
      'newcomer back to Pending',
      ref,
      (c) => c?.status?.phase === 'Pending',
    );
    t.equal(recovered?.status?.reason, 'RequirementsUnknown');
    t.equal(
      recovered?.status?.message,
      'OperatorGroup no longer intersecting with conflicting owner',
    );
    await waitForObject(client, 'APIs moved to the newcomer’s group', ogRef('team', 'own'), (g) =>
      (g?.metadata.annotations?.['olm.providedAPIs'] ?? '').includes(
        'Prometheus.v1.monitoring.coreos.com',
      ),
    );
  },
);
