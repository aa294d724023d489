// The CSV lifecycle reconciler of the install function: one work item per namespace (a CSV's
// phase depends on the namespace's OperatorGroups, the CSV it replaces and the one replacing
// it). load reads the namespace from the API (load.ts), decide is decide.ts, apply writes
// objects then statuses (apply.ts).
import type { MirrorSource } from '../../../shared/bus/mirror-read.js';
import type { FunctionDefinition, Trigger, WorkContext } from '../../../shared/runtime/types.js';
import type { FieldKey } from '../../../shared/runtime/work-keys.js';
import { defaultCertificateLifetimeMs } from '../certificates.js';
import type { InstallMetrics } from '../metrics.js';
import { mentionsUpgradeable, type ServedOperatorCondition } from '../operator-conditions/index.js';
import type { ScopedClients } from '../scope.js';
import { csvNamespaceKey } from '../keys.js';
import { namespaceItems, namespaceTrigger } from '../triggers.js';

const namespaceKeys = namespaceItems(csvNamespaceKey);
type CsvWork = WorkContext<FieldKey<'namespace'>>;
import { applyNamespace } from './apply.js';
import { decideNamespace } from './decide.js';
import { failCsvsOnDeadWork } from './give-up.js';
import { loadNamespace } from './load.js';
import type { CsvNamespaceSnapshot, CsvNamespaceWrites } from './types.js';

// A Subscription matters to the CSV it installed (status.installedCSV): its spec.config shapes
// the CSV's deployments. The rest of its status (resolution, planning) starts no work.
const subscriptionTrigger: Trigger = {
  kind: 'Subscription',
  parts: ['metadata', 'spec', 'status.installedCSV'],
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
   * Where the CRDs a CSV requires are read when it serves no webhooks (whose conversion
   * settings are written back to the whole CRD): the mirror, as upstream reads its informers.
   * Without it, from the API.
   */
  mirror?: MirrorSource;
}): FunctionDefinition<FieldKey<'namespace'>, CsvNamespaceSnapshot, CsvNamespaceWrites> {
  const certificateLifetimeMs = options.certificateLifetimeMs ?? defaultCertificateLifetimeMs;
  return {
    key: csvNamespaceKey,
    triggers: [
      ...[
        'ClusterServiceVersion',
        'OperatorGroup',
        'Deployment',
        'ServiceAccount',
        'InstallPlan',
      ].map(namespaceTrigger(csvNamespaceKey)),
      subscriptionTrigger,
      operatorConditionTrigger,
    ],
    async load(work: CsvWork): Promise<CsvNamespaceSnapshot> {
      return loadNamespace(work.key.namespace, {
        client: work.client,
        cluster: work.cluster,
        mirror: options.mirror,
        now: work.now,
        certificateLifetimeMs,
      });
    },
    decide: decideNamespace,
    giveUp: failCsvsOnDeadWork,
    async apply(writes: CsvNamespaceWrites, work: CsvWork): Promise<void> {
      await applyNamespace(writes, {
        client: work.client,
        cluster: work.cluster,
        scoped: options.scoped,
        metrics: options.metrics,
        now: work.now,
        log: work.log,
      });
    },
  };
}
