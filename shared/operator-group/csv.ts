// A ClusterServiceVersion as the OperatorGroup rules read it (from the mirror or the API), and
// what makes one a copy. Shared by the rbac and copy-csv functions, which must not import each
// other. Pure.
import type { ClusterServiceVersionSpec, ClusterServiceVersionStatus } from '../api/index.js';
import type { ClusterServiceVersionCondition } from '../api/clusterserviceversion.js';
import { CsvReason, OlmLabel } from '../api/codes.js';
import type { KubeObject } from '../kube/client.js';

/** A phase-history entry as read: any phase and reason a writer put there. */
export type CsvConditionObject = Omit<ClusterServiceVersionCondition, 'phase' | 'reason'> & {
  phase?: string;
  reason?: string;
};

/** A CSV status as read: the shared/api fields, with phases and reasons left open. */
export type CsvStatusObject = Omit<
  ClusterServiceVersionStatus,
  'phase' | 'reason' | 'conditions'
> & {
  phase?: string;
  reason?: string;
  conditions?: CsvConditionObject[];
};

/**
 * A ClusterServiceVersion as read, never parsed: the shared/api type (zod-inferred), but every
 * spec field may be missing (the mirror trims icons and descriptions, tests write partial CSVs)
 * and phases and reasons are whatever was written.
 */
export interface CsvObject extends KubeObject {
  spec?: Partial<ClusterServiceVersionSpec>;
  status?: CsvStatusObject;
}

/** Whether a CSV is a copy (label olm.copiedFrom, or reason Copied). */
export function isCopy(csv: CsvObject): boolean {
  return (
    csv.metadata.labels?.[OlmLabel.CopiedFrom] !== undefined ||
    csv.status?.reason === CsvReason.Copied
  );
}
