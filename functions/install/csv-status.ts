// A ClusterServiceVersion's status and its moves, shared by the reconcilers that move CSVs (the
// CSV lifecycle, the retry of CSVs failed for good): the phase history upstream keeps. Pure.
import type { ClusterServiceVersion, ClusterServiceVersionStatus } from '../../shared/api/index.js';
import type { CsvPhase, CsvReason } from '../../shared/api/codes.js';
import type { Served } from '../../shared/kube/served.js';
import { kubeTime } from '../../shared/kube/time.js';

/** Phase history kept in status.conditions. */
const maxConditions = 20;

/** A ClusterServiceVersion as the install reconcilers read it from the API. */
export type Csv = Served<ClusterServiceVersion>;
/** A ClusterServiceVersion's status. */
export type CsvStatus = ClusterServiceVersionStatus;

/** A move of a CSV: the phase, reason and message it records. */
export interface Transition {
  phase: CsvPhase;
  reason: CsvReason;
  message: string;
}

/** The CSV status after a move to `t` (phase history appended only when phase or reason changes). */
export function transitioned(
  csv: Pick<Csv, 'status'>,
  t: Transition,
  now: Date,
): CsvStatus | undefined {
  const status = { ...(csv.status ?? {}) };
  const at = kubeTime(now, 'millis');
  const changed = status.phase !== t.phase || status.reason !== t.reason;
  if (!changed && status.message === t.message) return csv.status;
  const next = {
    ...status,
    phase: t.phase,
    reason: t.reason,
    message: t.message,
    lastUpdateTime: at,
  };
  if (status.phase !== t.phase || status.lastTransitionTime === undefined)
    next.lastTransitionTime = at;
  if (changed) {
    const entry = {
      phase: t.phase,
      reason: t.reason,
      message: t.message,
      lastUpdateTime: at,
      lastTransitionTime: at,
    };
    next.conditions = [...(status.conditions ?? []), entry].slice(-maxConditions);
  }
  return next;
}
