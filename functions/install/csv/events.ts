// The Event upstream records on every CSV phase write (operator-framework/api's
// SetPhaseWithEvent[IfChanged]): on the CSV, reason = the status reason, message = the status
// message, Warning iff the phase is Failed. Pure.
import type { KubeObject } from '../../../shared/kube/client.js';
import { coreEvent } from '../../../shared/kube/events.js';
import type { Csv } from '../csv-status.js';

/** What the Event of a phase write reads of a status (a CsvStatus has it). */
export interface PhaseOfStatus {
  phase?: string | undefined;
  reason?: string | undefined;
  message?: string | undefined;
  /** Other status fields, not read. */
  [field: string]: unknown;
}

/** Reasons whose moves upstream writes without an Event (olm-operator's syncObject uses SetPhase). */
const silentReasons = new Set(['DetectedClusterChange']);

/** The Event for `csv` moving from `before` to `after`; undefined when phase, reason and message stay. */
export function csvPhaseEvent(
  csv: Csv,
  before: PhaseOfStatus | undefined,
  after: PhaseOfStatus | undefined,
  at: Date,
): KubeObject | undefined {
  if (after?.phase === undefined || after.reason === undefined) return undefined;
  if (
    after.phase === before?.phase &&
    after.reason === before.reason &&
    after.message === before.message
  ) {
    return undefined;
  }
  if (silentReasons.has(after.reason)) return undefined;
  return coreEvent(
    {
      apiVersion: csv.apiVersion || 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: csv.metadata.namespace,
      name: csv.metadata.name ?? '',
      uid: csv.metadata.uid,
      resourceVersion: csv.metadata.resourceVersion,
    },
    {
      type: after.phase === 'Failed' ? 'Warning' : 'Normal',
      reason: after.reason,
      message: after.message ?? '',
    },
    at,
  );
}
