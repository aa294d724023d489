// The RBAC of a CSV's permissions on the devcluster, named as upstream OLM v0.26.0 names it
// (pkg/controller/registry/resolver/rbac.go): Role and RoleBinding alike, ClusterRole and
// ClusterRoleBinding alike and per namespace of the install — so uninstalling the operator from
// one namespace leaves the other install's ClusterRole alone.
import t from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import {
  getCsv,
  installFunctionFor,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import { createInstallPlan, smallBundle } from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

const csvName = 'etcdoperator.v0.9.4';
const rbac = 'rbac.authorization.k8s.io/v1';

const owned = async (client: KubeClient, kind: string, namespace: string) =>
  (
    await client.list(
      { apiVersion: rbac, kind },
      { labelSelector: `olm.owner=${csvName},olm.owner.namespace=${namespace}` },
    )
  ).items;

t.test(
  'rbac names - two installs of one operator keep their own ClusterRoles through an uninstall',
  async (t) => {
    const { client } = await installFunctionFor(t);
    const bundle = await smallBundle('etcd', csvName);
    const install = (bundle.csv['spec'] as { install: { spec: Record<string, unknown> } }).install;
    install.spec['clusterPermissions'] = [
      {
        serviceAccountName: 'etcd-operator',
        rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['nodes'] }],
      },
    ];
    for (const namespace of ['one', 'two']) {
      await namespaceWithOperatorGroup(client, namespace);
      await createInstallPlan(client, { name: 'install', namespace, bundles: [bundle] });
      await waitForCsvPhase(client, namespace, csvName, 'Succeeded', undefined, 30_000);
    }
    const [role] = await owned(client, 'Role', 'one');
    const [roleBinding] = await owned(client, 'RoleBinding', 'one');
    t.match(role?.metadata.name, /^etcdoperator\.v0\.9\.4-etcd-operator-[4-9bcdf]+$/);
    t.equal(roleBinding?.metadata.name, role?.metadata.name, 'RoleBinding named as its Role');
    const [oneRole] = await owned(client, 'ClusterRole', 'one');
    const [twoRole] = await owned(client, 'ClusterRole', 'two');
    const [twoBinding] = await owned(client, 'ClusterRoleBinding', 'two');
    t.match(twoRole?.metadata.name, /^etcdoperator\.v0\.9\.4-[4-9bcdf]+$/);
    t.not(oneRole?.metadata.name, twoRole?.metadata.name, 'one ClusterRole per install');
    t.equal(twoBinding?.metadata.name, twoRole?.metadata.name, 'binding named as its role');

    await client.delete({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'one',
      name: csvName,
    });
    await waitFor(
      'the uninstalled CSV to be gone',
      async () => ((await getCsv(client, 'one', csvName)) === undefined ? true : undefined),
      20_000,
    );
    await waitFor(
      'its ClusterRole to be gone',
      async () => ((await owned(client, 'ClusterRole', 'one')).length === 0 ? true : undefined),
      20_000,
    );
    const ref = (twoBinding as KubeObject & { roleRef: { name: string } }).roleRef;
    t.ok(
      await client.get({ apiVersion: rbac, kind: 'ClusterRole', name: ref.name }),
      "the other install's ClusterRole stays",
    );
  },
);
