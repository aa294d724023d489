// Performs a namespace pass of the CSV lifecycle: the OperatorCondition generator's writes
// (never holding up the CSVs), then per CSV its object writes (the install strategy's as the
// scoped service account, if any; their failure recorded as the CSV's Failed move), its status,
// and its Events (best effort, as upstream's recorder).
import type { Logger } from 'pino';
import type { KubeClient, KubeObject } from '../../../shared/kube/client.js';
import { KubeApiError } from '../../../shared/kube/errors.js';
import { executeWrites, type Write } from '../../../shared/kube/executor.js';
import type { OwnWrites } from '../../../shared/kube/own-writes.js';
import { StaleDecisionError } from '../../../shared/runtime/function-host.js';
import { transitioned, type Csv } from '../csv-status.js';
import { installFieldManager, updateStatusOrStale } from '../kube-writes.js';
import { rebasedOnApi } from '../mirrored.js';
import type { InstallMetrics } from '../metrics.js';
import type { ScopedClients } from '../scope.js';
import type { SettledEchoes } from './echoes.js';
import { csvPhaseEvent } from './events.js';
import type { CsvNamespaceWrites } from './types.js';

/** What applying a namespace pass uses besides its writes. */
export interface CsvApplyContext {
  client: KubeClient;
  cluster: string;
  scoped: ScopedClients;
  metrics: InstallMetrics | undefined;
  now: () => Date;
  log: Logger;
  /** Where status writes of settled passes are remembered, so their echoes start no pass. */
  echoes: SettledEchoes | undefined;
  /** Where the CSV writes are recorded, so the next pass knows whether the mirror shows them. */
  ownWrites?: OwnWrites;
}

// Events are best effort, as upstream's recorder: a failure is logged, the pass goes on.
async function recordEvents(
  client: KubeClient,
  events: readonly KubeObject[],
  log: Logger,
): Promise<void> {
  // A pass's Events are distinct objects: written side by side.
  await Promise.all(
    events.map(async (event) => {
      try {
        await executeWrites(client, [{ op: 'event', object: event }], installFieldManager);
      } catch (error) {
        log.warn({ event: event.metadata.name, err: error }, 'recording an Event failed');
      }
    }),
  );
}

// Kinds the pass reads from the mirror (load.ts): their updates are rebased on the API object.
const mirroredKinds = new Set(['Deployment', 'OperatorCondition']);

// `reader` reads the API object (a scoped writer may not be allowed to), `writer` writes; the
// CSV writes are recorded in `c.ownWrites`.
async function writeObjects(
  reader: KubeClient,
  writer: KubeClient,
  writes: readonly Write[],
  c: Pick<CsvApplyContext, 'cluster' | 'ownWrites'>,
): Promise<void> {
  const observe = c.ownWrites?.observer(c.cluster, ['ClusterServiceVersion']);
  for (const w of writes) {
    const write =
      w.op === 'update' && mirroredKinds.has(w.object.kind) ? await rebasedOnApi(reader, w) : w;
    await executeWrites(writer, [write], installFieldManager, observe);
  }
}

/** Writes a namespace pass: OperatorConditions, then each CSV's objects, status and Events. */
export async function applyNamespace(
  writes: CsvNamespaceWrites,
  c: CsvApplyContext,
): Promise<void> {
  const { client, now } = c;
  const final: Csv[] = [];
  // OperatorConditions never hold up the CSVs: a failed write is retried on the next pass.
  for (const w of writes.operatorConditions ?? []) {
    try {
      await writeObjects(client, client, [w], c);
    } catch (error) {
      if (error instanceof StaleDecisionError) throw error;
      c.log.warn({ err: error }, 'could not write an OperatorCondition');
    }
  }
  const scope = writes.scope;
  for (const w of writes.csvs) {
    let status = w.status;
    const events = [...(w.events ?? [])];
    // The install strategy's objects are written as the scoped service account, if any.
    const writer =
      w.onFailure === 'installStrategy' && scope !== undefined
        ? c.scoped.clientFor(client, writes.namespace, scope.serviceAccount)
        : client;
    try {
      await writeObjects(client, writer, w.writes, c);
    } catch (error) {
      if (error instanceof StaleDecisionError || w.onFailure === undefined) throw error;
      const forbidden = error instanceof KubeApiError && error.reason === 'Forbidden';
      status = transitioned(
        w.chained ?? w.csv,
        {
          phase: 'Failed',
          reason: forbidden ? 'InstallComponentFailedNoRetry' : 'InstallComponentFailed',
          message: `install strategy failed: ${error instanceof Error ? error.message : String(error)}`,
        },
        now(),
      );
      c.log.info({ csv: w.csv.metadata.name, err: error }, 'install strategy failed');
    }
    if (status !== undefined && status !== w.csv.status) {
      const written = await updateStatusOrStale(client, { ...w.csv, status }, 'CSV');
      c.ownWrites?.wrote(c.cluster, { op: 'updateStatus', object: w.csv }, written);
      if (w.settled === true && status === w.status && written !== undefined)
        c.echoes?.remember(c.cluster, writes.namespace, w.csv.metadata.name ?? '', written);
      if (w.upgrade === true) c.metrics?.csvUpgradeCount.inc({ cluster: c.cluster });
      if (w.onFailure !== undefined) {
        const from = w.chained ?? w.csv;
        const event = csvPhaseEvent(w.csv, from.status, status, now());
        if (event !== undefined) events.push(event);
      }
    }
    await recordEvents(client, events, c.log);
    const deleted = w.writes.some(
      (x) => x.op === 'delete' && x.ref.kind === 'ClusterServiceVersion',
    );
    if (!deleted) final.push({ ...w.csv, ...(status === undefined ? {} : { status }) });
  }
  c.metrics?.observeNamespace(c.cluster, writes.namespace, final);
}
