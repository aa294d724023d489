// Which CSVs an RBAC change gives another chance: those that failed for good
// (InstallComponentFailedNoRetry) go Pending/DetectedClusterChange; and which namespaces an RBAC
// change concerns (those whose OperatorGroup names a service account). Pure.
import type { OperatorGroup } from '../../../shared/api/index.js';
import { transitioned, type Csv } from '../csv-status.js';
import type { RbacRetrySnapshot, RbacRetryWrites } from './types.js';

export function decideRbacRetry(s: RbacRetrySnapshot): { writes: RbacRetryWrites } {
  const csvs: Csv[] = [];
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

/** An OperatorGroup, as far as the retry reads one: its namespace and service account. */
export interface OperatorGroupLike {
  metadata: Pick<OperatorGroup['metadata'], 'namespace'>;
  spec?: Pick<NonNullable<OperatorGroup['spec']>, 'serviceAccountName'> | undefined;
}

/** Namespaces (sorted) of the OperatorGroups that name a service account. */
export function scopedNamespacesOf(groups: readonly OperatorGroupLike[]): string[] {
  const namespaces = new Set<string>();
  for (const og of groups) {
    if (og.spec?.serviceAccountName && og.metadata.namespace) namespaces.add(og.metadata.namespace);
  }
  return [...namespaces].sort();
}
