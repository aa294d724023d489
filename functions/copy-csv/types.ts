// What the copy-csv function's definitions share: options, the mirror, the live view of
// OperatorGroups and the metrics. Built once per function (function.ts).
import type { Counter } from 'prom-client';
import type { MirrorSource } from '../../shared/bus/mirror-read.js';
import type { LazyMirrorView } from '../../shared/bus/mirror-view.js';
import type { OperatorGroupLike } from '../../shared/operator-group/index.js';

/** Field manager of the copy-csv function's writes. */
export const fieldManager = 'olmq-copy-csv';

/** Options of the copy-csv function. */
export interface CopyCsvOptions {
  /** Namespaces keeping copies of AllNamespaces operators when copies are disabled (upstream --protectedCopiedCSVNamespaces). */
  protectedNamespaces: readonly string[];
}

/** What every copy-csv definition is built with. */
export interface CopyCsvContext {
  /** The object mirror, which every load reads. */
  mirror: MirrorSource;
  /** Every OperatorGroup of each cluster, live (each namespace's load reads them all). */
  groups: LazyMirrorView<OperatorGroupLike>;
  options: CopyCsvOptions;
  /** `olmq_copied_csv_writes_total`: copies created, updated and deleted. */
  copiesWritten: Counter<'cluster' | 'operation'>;
}
