// A ClusterServiceVersion's status and its moves, shared by the reconcilers that move CSVs (the
// CSV lifecycle, the retry of CSVs failed for good): the phase history upstream keeps. Pure.
import type { RequirementStatus } from '../../shared/api/clusterserviceversion.js';
import type { CsvPhase, CsvReason } from '../../shared/api/codes.js';
import type { KubeObject } from '../../shared/kube/client.js';

/** Phase history kept in status.conditions. */
const maxConditions = 20;

/** A CSV as the decision reads it. */
export interface CsvObject extends KubeObject {
  spec?: Record<string, unknown>;
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    lastUpdateTime?: string;
    lastTransitionTime?: string;
    conditions?: Record<string, unknown>[];
    requirementStatus?: RequirementStatus[];
    [key: string]: unknown;
  };
}

/** A move of a CSV: the phase, reason and message it records. */
export interface Transition {
  phase: CsvPhase;
  reason: CsvReason;
  message: string;
}

/** The CSV status after a move to `t` (phase history appended only when phase or reason changes). */
export function transitioned(csv: CsvObject, t: Transition, now: Date): CsvObject['status'] {
  const status = { ...(csv.status ?? {}) };
  const at = now.toISOString();
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
