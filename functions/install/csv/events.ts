// The Event upstream records on every CSV phase write (operator-framework/api's
// SetPhaseWithEvent[IfChanged]): on the CSV, reason = the status reason, message = the status
// message, Warning iff the phase is Failed. Pure.
import type { KubeObject } from '../../../shared/kube/client.js';
import { coreEvent } from '../../../shared/kube/events.js';
import type { CsvObject } from '../csv-status.js';

/** Reasons whose moves upstream writes without an Event (olm-operator's syncObject uses SetPhase). */
const silentReasons = new Set(['DetectedClusterChange']);

/** The Event for `csv` moving from `before` to `after`; undefined when phase, reason and message stay. */
export function csvPhaseEvent(
  csv: CsvObject,
  before: CsvObject['status'],
  after: CsvObject['status'],
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
