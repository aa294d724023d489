// When the host gives up on a namespace of CSVs, the CSVs it was installing say so as upstream
// says an install failed: those in InstallReady or Installing (copies aside) move to Failed,
// InstallComponentFailed, "install strategy failed: <error>", with the phase's Warning Event.
// CSVs in other phases keep theirs: dead work says nothing new about them. From Failed a CSV
// goes on as the Failed phase's step says (phases.ts), as after any failed install.
import type { KubeObject } from '../../../shared/kube/client.js';
import { executeWrites } from '../../../shared/kube/executor.js';
import type { DeadWork, WorkContext } from '../../../shared/runtime/types.js';
import type { FieldKey } from '../../../shared/runtime/work-keys.js';
import { transitioned, type Csv } from '../csv-status.js';
import { installFieldManager, updateStatusOrStale } from '../kube-writes.js';
import { csvPhaseEvent } from './events.js';

const installing = new Set(['InstallReady', 'Installing']);

/** Pure: the CSVs of a namespace that dead work fails, each with its status and Event. */
export function csvsFailedByDeadWork(
  csvs: readonly Csv[],
  message: string,
  now: Date,
): { csv: Csv; event: KubeObject | undefined }[] {
  return csvs
    .filter(
      (csv) =>
        csv.metadata.labels?.['olm.copiedFrom'] === undefined &&
        installing.has(csv.status?.phase ?? ''),
    )
    .flatMap((csv) => {
      const status = transitioned(
        csv,
        {
          phase: 'Failed',
          reason: 'InstallComponentFailed',
          message: `install strategy failed: ${message}`,
        },
        now,
      );
      if (status === undefined || status === csv.status) return [];
      return [{ csv: { ...csv, status }, event: csvPhaseEvent(csv, csv.status, status, now) }];
    });
}

/** Fails the CSVs being installed in the namespace `work` names (best effort: the host logs). */
export async function failCsvsOnDeadWork(
  work: WorkContext<FieldKey<'namespace'>>,
  dead: DeadWork,
): Promise<void> {
  const { items } = await work.client.list({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    namespace: work.key.namespace,
  });
  const now = work.now();
  for (const { csv, event } of csvsFailedByDeadWork(items as Csv[], dead.message, now)) {
    await updateStatusOrStale(work.client, csv, 'CSV');
    if (event !== undefined)
      await executeWrites(work.client, [{ op: 'event', object: event }], installFieldManager).catch(
        (error: unknown) =>
          work.log.warn({ err: error, csv: csv.metadata.name }, 'recording an Event failed'),
      );
  }
}
