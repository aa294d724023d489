// The CSV lifecycle reconciler of the install function: one work item per namespace (a CSV's
// phase depends on the namespace's OperatorGroups, the CSV it replaces and the one replacing
// it). load reads the namespace from the API (load.ts), decide is decide.ts, apply writes
// objects then statuses (apply.ts). Its clients and clock are chosen here.
import type { MirrorSource } from '../../../shared/bus/mirror-read.js';
import type { KubeClient } from '../../../shared/kube/client.js';
import type {
  FunctionDefinition,
  Trigger,
  WorkContext,
} from '../../../shared/runtime/function-host.js';
import { defaultCertificateLifetimeMs } from '../certificates.js';
import type { InstallMetrics } from '../metrics.js';
import { mentionsUpgradeable, type ServedOperatorCondition } from '../operator-conditions/index.js';
import type { ScopedClients } from '../scope.js';
import { namespaceKeys, namespaceTrigger } from '../triggers.js';
import { applyNamespace } from './apply.js';
import { decideNamespace } from './decide.js';
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

/** The CSV function over `clients` (by cluster id). */
export function csvFunction(options: {
  clients: ReadonlyMap<string, KubeClient>;
  scoped: ScopedClients;
  metrics?: InstallMetrics;
  now?: () => Date;
  /** Lifetime of issued serving certificates (default: upstream's 730 days). */
  certificateLifetimeMs?: number;
  /**
   * Where the CRDs a CSV requires are read when it serves no webhooks (whose conversion
   * settings are written back to the whole CRD): the mirror, as upstream reads its informers.
   * Without it, from the API.
   */
  mirror?: MirrorSource;
}): FunctionDefinition<CsvNamespaceSnapshot, CsvNamespaceWrites> {
  const now = options.now ?? (() => new Date());
  const certificateLifetimeMs = options.certificateLifetimeMs ?? defaultCertificateLifetimeMs;
  const clientOf = (cluster: string): KubeClient => {
    const client = options.clients.get(cluster);
    if (client === undefined) throw new Error(`no client for cluster ${cluster}`);
    return client;
  };
  return {
    name: 'install-csv',
    triggers: [
      ...[
        'ClusterServiceVersion',
        'OperatorGroup',
        'Deployment',
        'ServiceAccount',
        'InstallPlan',
      ].map(namespaceTrigger),
      subscriptionTrigger,
      operatorConditionTrigger,
    ],
    async load(work: WorkContext): Promise<CsvNamespaceSnapshot> {
      const [namespace = ''] = work.key;
      return loadNamespace(namespace, {
        client: clientOf(work.cluster),
        cluster: work.cluster,
        mirror: options.mirror,
        now,
        certificateLifetimeMs,
      });
    },
    decide: decideNamespace,
    async apply(writes: CsvNamespaceWrites, work: WorkContext): Promise<void> {
      await applyNamespace(writes, {
        client: clientOf(work.cluster),
        cluster: work.cluster,
        scoped: options.scoped,
        metrics: options.metrics,
        now,
        log: work.log,
      });
    },
  };
}
