// An install creates a CSV together with its RBAC, and the watcher may mirror the RBAC first.
// The rbac function, woken by a Role of the CSV, must not take the CSV's absence from the
// mirror for its deletion: that deleted the install's ClusterRoleBindings, and the CSV waited
// Pending for them for ever.
import t from 'tap';
import { getMirrored } from '../../shared/bus/mirror-read.js';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  bundleCsv,
  createNamespace,
  createOperatorGroup,
  createPermissionRbac,
  startMultitenancy,
  waitForGroupStatus,
  waitForObject,
} from '../harness/multitenancy.js';
import { waitFor } from '../harness/wait.js';
import { stallWatcherWatch } from '../harness/watcher.js';

const owner = (csv: string) => ({
  'olm.owner': csv,
  'olm.owner.namespace': 'operators',
  'olm.owner.kind': 'ClusterServiceVersion',
  'olm.managed': 'true',
});

const binding = (csv: string): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: `${csv}-cluster`, labels: owner(csv) },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
  subjects: [{ kind: 'ServiceAccount', name: 'etcd-operator', namespace: 'operators' }],
});

t.test(
  'rbac - a new CSV not mirrored yet keeps the cluster RBAC created with it; a deleted one loses it',
  async (t) => {
    const { client, fixture, backbone, hosts } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    await createOperatorGroup(client, 'operators', 'og', { targetNamespaces: ['operators'] });
    await waitForGroupStatus(client, 'operators', 'og');

    // The watcher's CSV watch goes quiet: the CSV created now stays out of the mirror.
    const stall = await stallWatcherWatch(fixture, 'operators.coreos.com/clusterserviceversions');

    const bundle = await bundleCsv('etcd', 'etcdoperator.v0.9.4');
    const { status: _status, ...body } = bundle;
    const csv = await client.create({
      ...body,
      metadata: { ...bundle.metadata, namespace: 'operators' },
    });
    const name = csv.metadata.name ?? '';
    const crbRef = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      name: `${name}-cluster`,
    };
    await client.create(binding(name));
    // Its Roles wake the rbac function for the CSV.
    await createPermissionRbac(client, csv);
    const mirrored = (kind: string, namespace: string, n: string) =>
      getMirrored<KubeObject>(backbone, { cluster: 'c1', kind, namespace, name: n });
    await waitFor(
      'the Role in the mirror',
      () => mirrored('Role', 'operators', `${name}-0`),
      30_000,
    );
    t.equal(await mirrored('ClusterServiceVersion', 'operators', name), undefined, 'no CSV there');
    await waitFor('the rbac function to settle', () => hosts.rbac.idle(), 30_000);
    t.ok(await client.get(crbRef), 'the ClusterRoleBinding is kept');

    stall.end();
    await waitFor(
      'the CSV in the mirror',
      () => mirrored('ClusterServiceVersion', 'operators', name),
      30_000,
    );
    await waitFor('the rbac function to settle', () => hosts.rbac.idle(), 30_000);
    t.ok(await client.get(crbRef), 'and stays once the CSV is mirrored');

    // Deleted, the CSV's cluster RBAC goes with it (owner labels are not garbage collected).
    await client.delete({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'operators',
      name,
    });
    await waitForObject(client, 'the binding deleted', crbRef, (b) => b === undefined);
    t.pass('deleting the CSV deleted it');
  },
);
