// The ClusterServiceVersion state machine (upstream's olm-operator syncClusterServiceVersion),
// as a pure decision per CSV: the gates (gates.ts: copies, deletion, the cleanup finalizer,
// OperatorGroup membership, install modes), then the step of its phase (phases.ts, spec §2.2)
// with requirement checks (§2.4), the deployment install strategy (§3.1) and its health check
// (§2.3). A namespace pass chains the moves that only change status.
import type { KubeObject } from '../../../shared/kube/client.js';
import { rotationWakeMs } from '../certificates.js';
import { generatorWrites } from '../operator-conditions/index.js';
import { csvPhaseEvent } from './events.js';
import { gates, membership } from './gates.js';
import type { CsvInPass } from './move.js';
import { stay } from './move.js';
import { phaseSteps, type PhaseStep } from './phases.js';
import { strategyOf } from './strategy.js';
import type { CsvNamespaceSnapshot, CsvNamespaceWrites, CsvWrites } from './types.js';
import type { Csv } from '../csv-status.js';

/** How soon a CSV waiting on something it cannot watch is looked at again. */
export const csvRequeueMs = 2_000;

/** Pure: one CSV's move in this pass. */
export function decideCsv(csv: Csv, s: CsvNamespaceSnapshot): CsvWrites {
  const c: CsvInPass = { csv, s, name: csv.metadata.name ?? '' };
  for (const gate of gates) {
    const decided = gate(c);
    if (decided !== undefined) return decided;
  }
  const member = membership(c);
  if ('writes' in member) return member;
  const phase = csv.status?.phase ?? '';
  // A phase the API does not admit (the object was narrowed, not parsed) is left alone.
  const step: PhaseStep | undefined = phaseSteps[phase];
  return (step ?? stay)({
    ...c,
    ...member,
    phase,
    reason: csv.status?.reason ?? '',
    strategy: strategyOf(csv),
    replacement: s.csvs.find(
      (x) => x !== csv && x.spec?.replaces === c.name && x.metadata.deletionTimestamp === undefined,
    ),
  });
}

/**
 * Whether a pass writing `csvs` leaves the namespace settled: with every CSV at the status it
 * writes, no CSV would move or write again. Only status moves are judged: a pass that writes
 * anything else (objects, deletions, upgrades) or fails a CSV is not settled.
 */
function settled(s: CsvNamespaceSnapshot, csvs: readonly CsvWrites[]): boolean {
  if (csvs.some((w) => w.writes.length > 0 || w.onFailure !== undefined || w.upgrade === true))
    return false;
  const after = {
    ...s,
    csvs: csvs.map((w) => (w.status === undefined ? w.csv : { ...w.csv, status: w.status })),
  };
  return after.csvs.every((csv) => {
    const again = decideCsv(csv, after);
    return (
      again.writes.length === 0 &&
      again.upgrade !== true &&
      (again.status === undefined || JSON.stringify(again.status) === JSON.stringify(csv.status))
    );
  });
}

// Phases that wait on something no trigger reports.
const waitingPhases = new Set(['Pending', 'Installing', 'InstallReady', 'Replacing']);

/** Pure: every CSV's move in the namespace. */
export function decideNamespace(s: CsvNamespaceSnapshot): {
  writes: CsvNamespaceWrites;
  requeueAfterMs?: number;
} {
  // Moves that only change status are chained within one pass (each still recorded in the
  // phase history): a pass per hop would cost a round trip through the mirror each.
  const csvs = s.csvs.map((csv): CsvWrites => {
    let current = csv;
    const events: KubeObject[] = [];
    for (let hop = 0; ; hop++) {
      const d = decideCsv(current, s);
      const event = csvPhaseEvent(csv, current.status, d.status ?? current.status, s.now);
      // Deleting is written (with upstream's Replaced Event) before a later pass deletes the
      // CSV: deleting it in the same pass would leave no object to write them on.
      const statusOnly =
        d.writes.length === 0 &&
        d.status !== undefined &&
        d.upgrade !== true &&
        d.status.phase !== 'Deleting';
      if (!statusOnly || hop >= 4 || d.status?.phase === current.status?.phase) {
        if (event !== undefined && d.onFailure === undefined) events.push(event);
        const withEvents = events.length === 0 ? {} : { events };
        if (current === csv) return { ...d, ...withEvents };
        // Written against the CSV as loaded; failures build on the chained status.
        const status = d.status ?? current.status;
        return {
          ...d,
          csv,
          ...(status === undefined ? {} : { status }),
          chained: current,
          ...withEvents,
        };
      }
      if (event !== undefined) events.push(event);
      if (d.status !== undefined) current = { ...current, status: d.status };
    }
  });
  const settledCsvs = settled(s, csvs) ? csvs.map((w) => ({ ...w, settled: true })) : csvs;
  // Look again while something waits on what no trigger reports (deployment rollout, CRDs):
  // as loaded, or as this pass leaves it. A new CSV this pass moves to Pending waits too, and
  // its echo may start no pass (echoes.ts): without this wake, CRDs the mirror shows after the
  // pass read them would leave it Pending.
  const waiting = [...s.csvs.map((c) => c.status), ...csvs.map((w) => w.status)].some(
    (status) => status !== undefined && waitingPhases.has(status.phase ?? ''),
  );
  // Installed serving certificates are looked at again when they are due for rotation.
  const wakes = s.csvs.flatMap((c) => {
    const phase = c.status?.phase;
    if (phase !== 'Succeeded' && phase !== 'Failed') return [];
    const ms = rotationWakeMs(s.certificates.get(c.metadata.name ?? ''), s.now);
    return ms === undefined ? [] : [ms];
  });
  const requeueAfterMs = Math.min(...(waiting ? [csvRequeueMs] : []), ...wakes);
  return {
    writes: {
      namespace: s.namespace,
      csvs: settledCsvs,
      ...(s.scope === undefined ? {} : { scope: { serviceAccount: s.scope.serviceAccount } }),
      ...(s.operatorConditions === undefined
        ? {}
        : { operatorConditions: generatorWrites(s.csvs, s.operatorConditions) }),
    },
    ...(Number.isFinite(requeueAfterMs) ? { requeueAfterMs } : {}),
  };
}
