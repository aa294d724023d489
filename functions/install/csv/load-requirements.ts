// What the full requirement checks read (requirements.ts), while a CSV of the namespace is new or
// Pending: the API server's version, whether the native APIs the CSVs name are served, and the
// RBAC their PolicyRules are checked against (the namespace's Roles and RoleBindings, the
// cluster's ClusterRoles and ClusterRoleBindings).
import type {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
} from '../../../shared/api/core.js';
import type { KubeClient } from '../../../shared/kube/client.js';
import { isNotFound } from '../../../shared/kube/errors.js';
import type { Served } from '../../../shared/kube/served.js';
import type { Csv } from '../csv-status.js';
import { nativeApiKey } from './requirements.js';
import type { RequirementsContext } from './types.js';

const checkedPhases = new Set(['', 'Pending']);

/** Whether the CSV's requirements are checked in full in this pass (not a copy; new or Pending). */
const checked = (csv: Csv): boolean =>
  csv.metadata.labels?.['olm.copiedFrom'] === undefined &&
  csv.status?.reason !== 'Copied' &&
  checkedPhases.has(csv.status?.phase ?? '');

async function serverVersion(client: KubeClient): Promise<string | undefined> {
  try {
    const info = (await client.request('GET', '/version', 'get')) as { gitVersion?: unknown };
    return typeof info.gitVersion === 'string' ? info.gitVersion : undefined;
  } catch {
    return undefined; // upstream's "Server version discovery error"
  }
}

async function served(client: KubeClient, group: string, version: string, kind: string) {
  try {
    await client.resource(group === '' ? version : `${group}/${version}`, kind);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** Reads the requirement context, or undefined when no CSV of the namespace needs it. */
export async function loadRequirements(
  client: KubeClient,
  namespace: string,
  csvs: readonly Csv[],
): Promise<RequirementsContext | undefined> {
  const pending = csvs.filter(checked);
  if (pending.length === 0) return undefined;
  const rbac = 'rbac.authorization.k8s.io/v1';
  const apis = pending.flatMap((c) => c.spec.nativeAPIs ?? []);
  const [version, roles, roleBindings, clusterRoles, clusterRoleBindings, nativeApis] =
    await Promise.all([
      pending.some((c) => (c.spec.minKubeVersion ?? '') !== '')
        ? serverVersion(client)
        : Promise.resolve(undefined),
      client.list<Served<Role>>({ apiVersion: rbac, kind: 'Role', namespace }),
      client.list<Served<RoleBinding>>({ apiVersion: rbac, kind: 'RoleBinding', namespace }),
      client.list<Served<ClusterRole>>({ apiVersion: rbac, kind: 'ClusterRole' }),
      client.list<Served<ClusterRoleBinding>>({ apiVersion: rbac, kind: 'ClusterRoleBinding' }),
      Promise.all(
        apis.map(
          async (api) =>
            [nativeApiKey(api), await served(client, api.group, api.version, api.kind)] as const,
        ),
      ),
    ]);
  return {
    serverVersion: version,
    nativeApis: new Map(nativeApis),
    rbac: {
      roles: roles.items,
      roleBindings: roleBindings.items,
      clusterRoles: clusterRoles.items,
      clusterRoleBindings: clusterRoleBindings.items,
    },
  };
}
