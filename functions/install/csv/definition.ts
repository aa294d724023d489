// The CSV lifecycle reconciler of the install function: one work item per namespace (a CSV's
// phase depends on the namespace's OperatorGroups, the CSV it replaces and the one replacing
// it). load reads the namespace's CSVs from the mirror when it shows this replica's CSV writes
// (else from the API) and the rest from the mirror (load.ts),
// decide is decide.ts, apply writes objects then statuses (apply.ts).
import type { MirrorSource } from '../../../shared/bus/mirror-read.js';
import { OwnWrites } from '../../../shared/kube/own-writes.js';
import type { FunctionDefinition, Trigger, WorkContext } from '../../../shared/runtime/types.js';
import type { FieldKey } from '../../../shared/runtime/work-keys.js';
import { defaultCertificateLifetimeMs } from '../certificates.js';
import type { Csv } from '../csv-status.js';
import type { InstallMetrics } from '../metrics.js';
import { KnownAbsent } from '../mirrored.js';
import { mentionsUpgradeable, type ServedOperatorCondition } from '../operator-conditions/index.js';
import type { ScopedClients } from '../scope.js';
import { csvNamespaceKey } from '../keys.js';
import { namespaceItems } from '../triggers.js';

const namespaceKeys = namespaceItems(csvNamespaceKey);
type CsvWork = WorkContext<FieldKey<'namespace'>>;
import { applyNamespace } from './apply.js';
import { SettledEchoes } from './echoes.js';
import { decideNamespace } from './decide.js';
import { failCsvsOnDeadWork } from './give-up.js';
import { loadNamespace } from './load.js';
import { clusterRbacViews } from './load-requirements.js';
import type { CsvNamespaceSnapshot, CsvNamespaceWrites } from './types.js';

// A Subscription matters to the CSV it installed (status.installedCSV): its spec.config shapes
// the CSV's deployments. The rest of its status (resolution, planning) starts no work.
const subscriptionTrigger: Trigger = {
  kind: 'Subscription',
  parts: ['metadata', 'spec', 'status.installedCSV'],
  workKeys: namespaceKeys,
};

// Copies are copy-csv's: no decision here reads them (gates.ts, ownership.ts), and copy-csv
// writes one into every target namespace each time the original changes. A deleted copy is
// not told from a deleted CSV: every deletion wakes the namespace.
// Nor does the echo of a status this replica wrote in a settled pass (echoes.ts).
const csvTrigger = (echoes: SettledEchoes): Trigger => ({
  kind: 'ClusterServiceVersion',
  workKeys: (c) => {
    const csv = c.object as Csv | undefined;
    if (csv?.metadata.labels?.['olm.copiedFrom'] !== undefined) return [];
    const version = csv?.metadata.resourceVersion;
    if (version !== undefined && echoes.take(c.ref.cluster, c.ref.namespace, c.ref.name, version))
      return [];
    return namespaceKeys(c);
  },
});

// What a CSV's pass reads of its OperatorGroup (gates.ts membership, scope.ts, webhooks.ts,
// fail forward): its name and uid, spec and targets; not the conditions, service account
// reference and lastUpdated the rbac function writes, nor its olm.providedAPIs.
const operatorGroupTrigger: Trigger = {
  kind: 'OperatorGroup',
  parts: ['metadata', 'spec', 'status.namespaces'],
  workKeys: namespaceKeys,
};

// A strategy deployment's health reads its metadata (spec hash label, generation), spec and
// these status fields (deployments.ts deploymentHealth); its replica counts as pods come and
// go start no pass.
const deploymentTrigger: Trigger = {
  kind: 'Deployment',
  parts: [
    'metadata',
    'spec',
    'status.conditions',
    'status.observedGeneration',
    'status.updatedReplicas',
  ],
  workKeys: namespaceKeys,
};

// A service account matters by its existence and owner (requirements.ts); token secrets do not.
const serviceAccountTrigger: Trigger = {
  kind: 'ServiceAccount',
  parts: ['metadata'],
  workKeys: namespaceKeys,
};

// OperatorConditions move CSVs when they may gate an upgrade (an Upgradeable entry) or are
// gone (the generator makes them again). Dropping an entry is seen by the Pending requeue.
const operatorConditionTrigger: Trigger = {
  kind: 'OperatorCondition',
  workKeys: (c) => {
    const condition = c.object as ServedOperatorCondition | undefined;
    return condition === undefined || mentionsUpgradeable(condition) ? namespaceKeys(c) : [];
  },
};

/** The CSV definition; each reconcile uses the host's client and clock. */
export function csvFunction(options: {
  scoped: ScopedClients;
  metrics?: InstallMetrics;
  /** Lifetime of issued serving certificates (default: upstream's 730 days). */
  certificateLifetimeMs?: number;
  /**
   * The watcher's mirror, read as upstream reads its informers: the CSVs when it shows this
   * replica's writes of them (load.ts mirroredCsvsServe), everything else, and
   * the CRDs a CSV requires unless it serves webhooks (whose conversion settings are written
   * back to the whole CRD).
   */
  mirror: MirrorSource;
}): FunctionDefinition<FieldKey<'namespace'>, CsvNamespaceSnapshot, CsvNamespaceWrites> & {
  close(): void;
} {
  const certificateLifetimeMs = options.certificateLifetimeMs ?? defaultCertificateLifetimeMs;
  const clusterRbac = clusterRbacViews(options.mirror);
  const echoes = new SettledEchoes();
  // The CSV writes of this replica's passes, so a load can tell whether the mirror shows them.
  const ownWrites = new OwnWrites();
  const absent = new KnownAbsent();
  return {
    close: () => clusterRbac.stop(),
    key: csvNamespaceKey,
    triggers: [
      csvTrigger(echoes),
      operatorGroupTrigger,
      deploymentTrigger,
      serviceAccountTrigger,
      subscriptionTrigger,
      operatorConditionTrigger,
    ],
    async load(work: CsvWork): Promise<CsvNamespaceSnapshot> {
      return loadNamespace(work.key.namespace, {
        client: work.client,
        cluster: work.cluster,
        mirror: options.mirror,
        clusterRbac,
        now: work.now,
        certificateLifetimeMs,
        ownWrites,
        absent,
      });
    },
    decide: decideNamespace,
    giveUp: failCsvsOnDeadWork,
    async apply(writes: CsvNamespaceWrites, work: CsvWork): Promise<void> {
      // What this pass creates is not absent any more, though the mirror may not show it yet.
      for (const { writes: objectWrites } of writes.csvs)
        for (const w of objectWrites)
          if (w.op === 'create')
            absent.forget(
              KnownAbsent.key(
                {
                  cluster: work.cluster,
                  namespace: w.object.metadata.namespace ?? writes.namespace,
                },
                w.object.kind,
                w.object.metadata.name ?? '',
              ),
            );
      // applyNamespace records its CSV status writes in the ledger itself.
      await ownWrites.recording({ cluster: work.cluster, namespace: work.key.namespace }, [], () =>
        applyNamespace(writes, {
          client: work.client,
          cluster: work.cluster,
          scoped: options.scoped,
          metrics: options.metrics,
          now: work.now,
          log: work.log,
          echoes,
          ownWrites,
        }),
      );
    },
  };
}
