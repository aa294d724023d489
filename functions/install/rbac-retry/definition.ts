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
// - OperatorGroup: its namespace (status.serviceAccountRef is written by the rbac function);
//   one naming no service account only when its spec changes.
import { listMirrored, type MirrorSource } from '../../../shared/bus/mirror-read.js';
import { lazyMirrorView } from '../../../shared/bus/mirror-view.js';
import type {
  FunctionDefinition,
  ObjectChange,
  WorkContext,
  WorkItem,
} from '../../../shared/runtime/types.js';
import type { FieldKey } from '../../../shared/runtime/work-keys.js';
import { rbacRetryKey } from '../keys.js';
import type { Csv } from '../csv-status.js';
import { installFieldManager, updateStatusOrStale } from '../kube-writes.js';
import { namespaceItems } from '../triggers.js';
import { decideRbacRetry, scopedNamespacesOf, type OperatorGroupLike } from './decide.js';
import type { RbacRetrySnapshot, RbacRetryWrites } from './types.js';

type RetryWork = WorkContext<FieldKey<'namespace'>>;

/** The retry definition, reading OperatorGroups from `mirror`. */
export function rbacRetryFunction(options: { mirror: MirrorSource }): FunctionDefinition<
  FieldKey<'namespace'>,
  RbacRetrySnapshot,
  RbacRetryWrites
> & {
  close(): void;
} {
  // Cluster-scoped RBAC concerns every scoped namespace; namespaced RBAC its own, if scoped.
  // Every RBAC change reads the groups: a live view of them.
  const groups = lazyMirrorView<OperatorGroupLike>(options.mirror, 'OperatorGroup');
  const scopedNamespaces = async (change: ObjectChange): Promise<WorkItem[]> => {
    const clusterScoped = change.ref.namespace === '' || change.ref.namespace === '-';
    const listed = await groups.list(
      change.ref.cluster,
      clusterScoped ? undefined : change.ref.namespace,
    );
    return scopedNamespacesOf(listed).map((namespace) => rbacRetryKey.of({ namespace }));
  };
  return {
    close: () => groups.stop(),
    key: rbacRetryKey,
    triggers: [
      { kind: 'Role', workKeys: scopedNamespaces },
      { kind: 'RoleBinding', workKeys: scopedNamespaces },
      {
        kind: 'OperatorGroup',
        // Only installs acting as a service account fail for good: an OperatorGroup naming none
        // matters when its spec changes (one that named one may have dropped it), not when
        // the rbac function writes its status or annotations.
        workKeys: (c) => {
          const group = c.object as OperatorGroupLike | undefined;
          const scoped = group === undefined || scopedNamespacesOf([group]).length > 0;
          return scoped || c.touches(['spec']) ? namespaceItems(rbacRetryKey)(c) : [];
        },
      },
      { kind: 'ClusterRole', workKeys: scopedNamespaces },
      { kind: 'ClusterRoleBinding', workKeys: scopedNamespaces },
    ],
    async load(work: RetryWork): Promise<RbacRetrySnapshot> {
      const { namespace } = work.key;
      // From the mirror: only their status is written (the status subresource, which keeps
      // what the watcher trims), conditionally, and a 409 decides again.
      const csvs = await listMirrored<Csv>(options.mirror, {
        cluster: work.cluster,
        kind: 'ClusterServiceVersion',
        namespace,
      });
      return { namespace, now: work.now(), csvs };
    },
    decide: decideRbacRetry,
    async apply(writes: RbacRetryWrites, work: RetryWork): Promise<void> {
      const client = work.client;
      for (const csv of writes.csvs) {
        await updateStatusOrStale(client, csv, 'CSV', { fieldManager: installFieldManager });
        work.log.info({ csv: csv.metadata.name }, 'RBAC changed: retrying a CSV that failed');
      }
    },
  };
}
