// Upstream's retry of CSVs that failed for good (InstallComponentFailedNoRetry, e.g. a scoped
// install Forbidden to create its Deployment): olm-operator's syncObject moves every such CSV of
// a namespace to Pending/DetectedClusterChange "Cluster resources changed state" when RBAC
// changes there, and the namespace's OperatorGroup sync does when its service account changes.
// That is edge-triggered (something changed), so it is its own definition, keyed per namespace.
// Only installs acting as a service account (OperatorGroup spec.serviceAccountName) can be
// Forbidden, so RBAC changes look only at such namespaces, found in the mirror: no CSV is read
// for the many RBAC writes of ordinary installs.
// - Role, RoleBinding: their namespace, if its OperatorGroup names a service account;
// - ClusterRole, ClusterRoleBinding: every namespace whose OperatorGroup names one (upstream:
//   every namespace);
// - OperatorGroup: its namespace (status.serviceAccountRef is written by the rbac function).
import type { KubeClient } from '../../shared/kube/client.js';
import { isConflict } from '../../shared/kube/errors.js';
import type { MirrorSource } from '../../shared/bus/mirror-read.js';
import { lazyMirrorView } from '../../shared/bus/mirror-view.js';
import type { WorkKey } from '../../shared/bus/subjects.js';
import {
  StaleDecisionError,
  type FunctionDefinition,
  type ObjectChange,
  type WorkContext,
} from '../../shared/runtime/function-host.js';
import { transitioned, type CsvObject } from './csv-lifecycle.js';
import { namespaceTrigger } from './csv-function.js';
import { installFieldManager } from './plan-function.js';

/** The CSVs of one namespace, read after an RBAC change there. */
export interface RbacRetrySnapshot {
  namespace: string;
  now: Date;
  csvs: CsvObject[];
}

/** Status writes: CSVs moved back to Pending. */
export interface RbacRetryWrites {
  csvs: CsvObject[];
}

/** Pure: every InstallComponentFailedNoRetry CSV goes to Pending/DetectedClusterChange. */
export function decideRbacRetry(s: RbacRetrySnapshot): { writes: RbacRetryWrites } {
  const csvs: CsvObject[] = [];
  for (const csv of s.csvs) {
    if (csv.status?.phase !== 'Failed' || csv.status.reason !== 'InstallComponentFailedNoRetry')
      continue;
    if (csv.metadata.labels?.['olm.copiedFrom'] !== undefined) continue;
    const status = transitioned(
      csv,
      {
        phase: 'Pending',
        reason: 'DetectedClusterChange',
        message: 'Cluster resources changed state',
      },
      s.now,
    );
    if (status !== undefined) csvs.push({ ...csv, status });
  }
  return { writes: { csvs } };
}

interface OperatorGroupLike {
  metadata: { namespace?: string };
  spec?: { serviceAccountName?: string };
}

/** Namespaces (sorted) of the OperatorGroups that name a service account. */
export function scopedNamespacesOf(groups: readonly OperatorGroupLike[]): string[] {
  const namespaces = new Set<string>();
  for (const og of groups) {
    if (og.spec?.serviceAccountName && og.metadata.namespace) namespaces.add(og.metadata.namespace);
  }
  return [...namespaces].sort();
}

/** The retry definition over `clients` (by cluster id), reading OperatorGroups from `mirror`. */
export function rbacRetryFunction(options: {
  clients: ReadonlyMap<string, KubeClient>;
  mirror: MirrorSource;
  now?: () => Date;
}): FunctionDefinition<RbacRetrySnapshot, RbacRetryWrites> & { close(): void } {
  const now = options.now ?? (() => new Date());
  const clientOf = (cluster: string): KubeClient => {
    const client = options.clients.get(cluster);
    if (client === undefined) throw new Error(`no client for cluster ${cluster}`);
    return client;
  };
  // Cluster-scoped RBAC concerns every scoped namespace; namespaced RBAC its own, if scoped.
  // Every RBAC change reads the groups: a live view of them.
  const groups = lazyMirrorView<OperatorGroupLike>(options.mirror, 'OperatorGroup');
  const scopedNamespaces = async (change: ObjectChange): Promise<WorkKey[]> => {
    const clusterScoped = change.ref.namespace === '' || change.ref.namespace === '-';
    const listed = await groups.list(
      change.ref.cluster,
      clusterScoped ? undefined : change.ref.namespace,
    );
    return scopedNamespacesOf(listed).map((ns) => [ns]);
  };
  return {
    close: () => groups.stop(),
    name: 'install-rbac-retry',
    triggers: [
      { kind: 'Role', workKeys: scopedNamespaces },
      { kind: 'RoleBinding', workKeys: scopedNamespaces },
      namespaceTrigger('OperatorGroup'),
      { kind: 'ClusterRole', workKeys: scopedNamespaces },
      { kind: 'ClusterRoleBinding', workKeys: scopedNamespaces },
    ],
    async load(work: WorkContext): Promise<RbacRetrySnapshot> {
      const [namespace = ''] = work.key;
      const csvs = await clientOf(work.cluster).list<CsvObject>({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        namespace,
      });
      return { namespace, now: now(), csvs: csvs.items };
    },
    decide: decideRbacRetry,
    async apply(writes: RbacRetryWrites, work: WorkContext): Promise<void> {
      const client = clientOf(work.cluster);
      for (const csv of writes.csvs) {
        try {
          await client.updateStatus(csv, { fieldManager: installFieldManager });
        } catch (error) {
          if (isConflict(error))
            throw new StaleDecisionError(`CSV status: ${(error as Error).message}`, {
              cause: error,
            });
          throw error;
        }
        work.log.info({ csv: csv.metadata.name }, 'RBAC changed: retrying a CSV that failed');
      }
    },
  };
}
