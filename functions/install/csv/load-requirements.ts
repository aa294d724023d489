// What the full requirement checks read (requirements.ts), while a CSV of the namespace is new or
// Pending: the API server's version, whether the native APIs the CSVs name are served, and the
// RBAC their PolicyRules are checked against (the namespace's Roles and RoleBindings, the
// cluster's ClusterRoles and ClusterRoleBindings), from the watcher's mirror (it mirrors all
// RBAC), as upstream reads its informers: RBAC a plan creates after its CSV is seen by the
// Pending requeue, as it would be when read from the API a moment too early.
import type {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
} from '../../../shared/api/core.js';
import { listMirrored, type MirrorSource } from '../../../shared/bus/mirror-read.js';
import { lazyMirrorView, type LazyMirrorView } from '../../../shared/bus/mirror-view.js';
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

/** How long an API server's version is taken as known (it changes only with an upgrade). */
const serverVersionTtlMs = 30_000;
const serverVersions = new WeakMap<KubeClient, { version: string; until: number }>();

async function serverVersion(client: KubeClient): Promise<string | undefined> {
  const known = serverVersions.get(client);
  if (known !== undefined && known.until > Date.now()) return known.version;
  try {
    const info = (await client.request('GET', '/version', 'get')) as { gitVersion?: unknown };
    if (typeof info.gitVersion !== 'string') return undefined;
    serverVersions.set(client, {
      version: info.gitVersion,
      until: Date.now() + serverVersionTtlMs,
    });
    return info.gitVersion;
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

/** Live views of the cluster's RBAC: every requirement check reads all of it. */
export interface ClusterRbacViews {
  clusterRoles: LazyMirrorView<Served<ClusterRole>>;
  clusterRoleBindings: LazyMirrorView<Served<ClusterRoleBinding>>;
  stop(): void;
}

/** Opens (lazily, on first use) the views of ClusterRoles and ClusterRoleBindings. */
export function clusterRbacViews(mirror: MirrorSource): ClusterRbacViews {
  const clusterRoles = lazyMirrorView<Served<ClusterRole>>(mirror, 'ClusterRole');
  const clusterRoleBindings = lazyMirrorView<Served<ClusterRoleBinding>>(
    mirror,
    'ClusterRoleBinding',
  );
  return {
    clusterRoles,
    clusterRoleBindings,
    stop() {
      clusterRoles.stop();
      clusterRoleBindings.stop();
    },
  };
}

/** Where the requirement context is read from. */
export interface RequirementsSource {
  cluster: string;
  namespace: string;
  mirror: MirrorSource;
  clusterRbac: ClusterRbacViews;
}

/** Reads the requirement context, or undefined when no CSV of the namespace needs it. */
export async function loadRequirements(
  client: KubeClient,
  from: RequirementsSource,
  csvs: readonly Csv[],
): Promise<RequirementsContext | undefined> {
  const pending = csvs.filter(checked);
  if (pending.length === 0) return undefined;
  const { cluster, namespace, mirror } = from;
  const apis = pending.flatMap((c) => c.spec.nativeAPIs ?? []);
  const [version, roles, roleBindings, clusterRoles, clusterRoleBindings, nativeApis] =
    await Promise.all([
      pending.some((c) => (c.spec.minKubeVersion ?? '') !== '')
        ? serverVersion(client)
        : Promise.resolve(undefined),
      listMirrored<Served<Role>>(mirror, { cluster, kind: 'Role', namespace }),
      listMirrored<Served<RoleBinding>>(mirror, { cluster, kind: 'RoleBinding', namespace }),
      from.clusterRbac.clusterRoles.list(cluster, ''),
      from.clusterRbac.clusterRoleBindings.list(cluster, ''),
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
      roles,
      roleBindings,
      clusterRoles,
      clusterRoleBindings,
    },
  };
}
