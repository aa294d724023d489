// The RBAC upstream's catalog operator plans for a CSV's install strategy: a ServiceAccount per
// named account (not `default`), a Role + RoleBinding per permissions entry and a ClusterRole +
// ClusterRoleBinding per clusterPermissions entry, each binding named as its role:
// `<csv>-<sa>-<hash>` over the CSV's name and the entry, `<csv>-<hash>` over the CSV's name, its
// namespace and the entry (so the same operator installed in two namespaces gets two
// ClusterRoles), at most 63 characters (kube/names.ts generatedRbacName); labelled with the
// CSV's owner labels and olm.permissions.hash (the content hash).
import type { StrategyDeploymentPermissions } from '../api/clusterserviceversion.js';
import type { KubeObject } from '../kube/client.js';
import { generatedRbacName, sha224Base62 } from '../kube/names.js';

/** Upstream's olm.permissions.hash: base62 of sha224 over the JSON of what it hashes. */
export function permissionsHash(value: unknown): string {
  return sha224Base62(JSON.stringify(value));
}

/** A CSV as a bundle ships it: JSON not validated yet. */
type CsvManifest = Readonly<Record<string, unknown>>;

// The one look into the untyped manifest: its name and its strategy's permissions.
function permissionsOf(csv: CsvManifest): {
  name: string;
  permissions: readonly StrategyDeploymentPermissions[];
  clusterPermissions: readonly StrategyDeploymentPermissions[];
} {
  const { metadata, spec } = csv as {
    metadata?: { name?: string };
    spec?: {
      install?: {
        spec?: {
          permissions?: StrategyDeploymentPermissions[];
          clusterPermissions?: StrategyDeploymentPermissions[];
        };
      };
    };
  };
  return {
    name: metadata?.name ?? '',
    permissions: spec?.install?.spec?.permissions ?? [],
    clusterPermissions: spec?.install?.spec?.clusterPermissions ?? [],
  };
}

/** The RBAC objects upstream plans for a CSV's permissions (SAs, Roles, bindings). */
export function rbacForCsv(csv: CsvManifest, namespace: string): KubeObject[] {
  const { name: csvName, permissions, clusterPermissions } = permissionsOf(csv);
  const ownerLabels = {
    'olm.owner': csvName,
    'olm.owner.namespace': namespace,
    'olm.owner.kind': 'ClusterServiceVersion',
  };
  // As upstream's RBACForClusterServiceVersion: the namespaced objects name the CSV as a
  // non-blocking owner (its uid is filled in when the step is written).
  const ownerReferences = [
    {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      name: csvName,
      uid: '',
      controller: false,
      blockOwnerDeletion: false,
    },
  ];
  const objects: KubeObject[] = [];
  const accounts = new Set<string>();
  const account = (name: string): void => {
    if (name === 'default' || accounts.has(name)) return;
    accounts.add(name);
    objects.push({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace, ownerReferences },
    });
  };
  for (const p of permissions) {
    account(p.serviceAccountName);
    const roleHash = permissionsHash(p.rules);
    const roleName = generatedRbacName(`${csvName}-${p.serviceAccountName}`, [csvName, p]);
    objects.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: {
        name: roleName,
        namespace,
        ownerReferences,
        labels: { ...ownerLabels, 'olm.permissions.hash': roleHash },
      },
      rules: p.rules,
    });
    const roleRef = { kind: 'Role', name: roleName, apiGroup: 'rbac.authorization.k8s.io' };
    const subjects = [{ kind: 'ServiceAccount', name: p.serviceAccountName, namespace }];
    const bindingHash = permissionsHash({ roleRef, subjects });
    objects.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: {
        name: roleName,
        namespace,
        ownerReferences,
        labels: { ...ownerLabels, 'olm.permissions.hash': bindingHash },
      },
      roleRef,
      subjects,
    });
  }
  for (const p of clusterPermissions) {
    account(p.serviceAccountName);
    const roleHash = permissionsHash(p.rules);
    const roleName = generatedRbacName(csvName, [csvName, namespace, p]);
    objects.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: roleName, labels: { ...ownerLabels, 'olm.permissions.hash': roleHash } },
      rules: p.rules,
    });
    const roleRef = { kind: 'ClusterRole', name: roleName, apiGroup: 'rbac.authorization.k8s.io' };
    const subjects = [{ kind: 'ServiceAccount', name: p.serviceAccountName, namespace }];
    const bindingHash = permissionsHash({ roleRef, subjects });
    objects.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: {
        name: roleName,
        // Upstream leaves the namespace on the binding's manifest; it is dropped when written.
        namespace,
        labels: { ...ownerLabels, 'olm.permissions.hash': bindingHash },
      },
      roleRef,
      subjects,
    });
  }
  return objects;
}
