// The rbac-retry room's contract: what one pass over a namespace reads and writes.
import type { Csv } from '../csv-status.js';

/** The CSVs of one namespace, read after an RBAC change there. */
export interface RbacRetrySnapshot {
  namespace: string;
  now: Date;
  csvs: Csv[];
}

/** Status writes: CSVs moved back to Pending. */
export interface RbacRetryWrites {
  csvs: Csv[];
}
