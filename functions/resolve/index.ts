// The resolve function: work key ["namespace", ns]. Re-resolves a namespace when its
// Subscriptions, CSVs, OperatorGroups or CatalogSources change, and when a catalog index it can
// see changes (a global catalog's change fans out to every namespace with Subscriptions).
// Writes the Subscriptions' resolution status and hands the resolution to the plan function
// as a `Resolution` record in the object mirror.
import { Counter, Summary } from 'prom-client';
import type {
  CatalogSource,
  ClusterServiceVersion,
  OperatorGroup,
  Subscription,
} from '../../shared/api/index.js';
import {
  CatalogIndexCache,
  catalogIndexKind,
  openCatalogStore,
  readCatalogIndexRecords,
} from '../../shared/catalog/index.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import { getMirrored, listMirrored, namespacesWith } from '../../shared/bus/mirror-read.js';
import { objectKey, type WorkKey } from '../../shared/bus/subjects.js';
import type { KubeClient } from '../../shared/kube/client.js';
import { executeWrites } from '../../shared/kube/executor.js';
import { resolutionKind, type ResolutionRecord } from '../../shared/resolver/record.js';
import type { FunctionDefinition, ObjectChange } from '../../shared/runtime/function-host.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import {
  decideResolve,
  type ResolveSnapshot,
  type ResolveWrites,
  type SnapshotCatalog,
} from './decide.js';

const fieldManager = 'olmq-resolve';

/** The work key of a namespace's resolution. */
export const namespaceKey = (namespace: string): WorkKey => ['namespace', namespace];

export const createFunction: CreateFunction = async (context) => {
  const { backbone, clients, globalCatalogNamespace } = context;
  const store = await openCatalogStore(backbone);
  const indexes = new CatalogIndexCache(store);
  const duration = new Summary({
    name: 'olm_resolution_duration_seconds',
    help: 'Time to resolve a namespace, by outcome (succeeded, failed).',
    labelNames: ['cluster', 'outcome'],
    percentiles: [0.9, 0.95, 0.99],
    registers: [context.registry],
  });
  const syncs = new Counter({
    name: 'subscription_sync_total',
    help: 'Subscription syncs, by the Subscription and what it installs.',
    labelNames: ['cluster', 'name', 'installed', 'channel', 'package', 'approval'],
    registers: [context.registry],
  });
  const clientOf = (cluster: string): KubeClient => {
    const client = clients.get(cluster);
    if (client === undefined) throw new Error(`no API client for cluster ${cluster}`);
    return client;
  };
  // A catalog change concerns its namespace, or every namespace with Subscriptions when global.
  const catalogKeys = async (change: ObjectChange): Promise<WorkKey[]> =>
    change.ref.namespace === globalCatalogNamespace
      ? (
          await namespacesWith(backbone, {
            cluster: change.ref.cluster,
            kind: 'Subscription',
          })
        ).map(namespaceKey)
      : [namespaceKey(change.ref.namespace)];
  const definition: FunctionDefinition<ResolveSnapshot, ResolveWrites> = {
    name: 'resolve',
    triggers: [
      {
        kind: 'Subscription',
        // What a Subscription asks for and where it stands; not the conditions and health
        // written by resolution itself or the InstallPlan progress written by planning.
        parts: ['metadata', 'spec', 'status.currentCSV', 'status.installedCSV'],
        workKeys: (c) => [namespaceKey(c.ref.namespace)],
      },
      {
        kind: 'ClusterServiceVersion',
        // Resolution reads what a CSV is (metadata, spec), never how far its install got.
        parts: ['metadata', 'spec'],
        workKeys: (c) =>
          (c.object as ClusterServiceVersion | undefined)?.metadata.labels?.['olm.copiedFrom'] !==
          undefined
            ? []
            : [namespaceKey(c.ref.namespace)],
      },
      { kind: 'OperatorGroup', workKeys: (c) => [namespaceKey(c.ref.namespace)] },
      { kind: 'CatalogSource', workKeys: catalogKeys },
      { kind: catalogIndexKind, workKeys: catalogKeys },
    ],
    async load(work) {
      const namespace = work.key[1] ?? '';
      return loadSnapshot(
        backbone,
        clientOf(work.cluster),
        indexes,
        work.cluster,
        namespace,
        globalCatalogNamespace,
      );
    },
    // Times the pure decision (the resolution) by outcome.
    decide(snapshot) {
      const end = duration.startTimer();
      const decision = decideResolve(snapshot);
      const resolution = decision.writes.resolution;
      if (resolution !== undefined) {
        end({
          cluster: snapshot.cluster,
          outcome: resolution.status === 'resolved' ? 'succeeded' : 'failed',
        });
      }
      return decision;
    },
    async apply(writes, work) {
      const namespace = work.key[1] ?? '';
      if (writes.resolution !== undefined) {
        work.log.debug(
          { namespace, status: writes.resolution.status, stats: writes.resolution.stats },
          'namespace resolved',
        );
        for (const p of writes.resolution.problems) {
          work.log.info({ namespace, subscription: p.subscription, code: p.code }, p.message);
        }
      }
      await executeWrites(clientOf(work.cluster), writes.writes, fieldManager);
      for (const sync of writes.synced) syncs.inc({ cluster: work.cluster, ...sync });
      const key = objectKey({
        cluster: work.cluster,
        kind: resolutionKind,
        namespace,
        name: namespace,
      });
      if (writes.record === null) await backbone.objects.delete(key);
      else if (writes.record !== undefined)
        await backbone.objects.put(key, JSON.stringify(writes.record));
    },
  };
  return { definitions: [definition] };
};

/** Reads what one namespace's resolution needs. */
export async function loadSnapshot(
  backbone: Backbone,
  client: KubeClient,
  indexes: CatalogIndexCache,
  cluster: string,
  namespace: string,
  globalNamespace: string,
): Promise<ResolveSnapshot> {
  const catalogNamespaces = [...new Set([namespace, globalNamespace])];
  const [subscriptions, csvs, operatorGroups, records, sources, previous] = await Promise.all([
    // Fresh from the API: their status is written back with this resourceVersion.
    client
      .list({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', namespace })
      .then((l) => l.items as unknown as Subscription[]),
    listMirrored<ClusterServiceVersion>(backbone, {
      cluster,
      kind: 'ClusterServiceVersion',
      namespace: namespace,
    }),
    listMirrored<OperatorGroup>(backbone, {
      cluster,
      kind: 'OperatorGroup',
      namespace: namespace,
    }),
    readCatalogIndexRecords(backbone, cluster, catalogNamespaces),
    Promise.all(
      catalogNamespaces.map((ns) =>
        listMirrored<CatalogSource>(backbone, {
          cluster,
          kind: 'CatalogSource',
          namespace: ns,
        }),
      ),
    ).then((lists) => lists.flat()),
    getMirrored<ResolutionRecord>(backbone, {
      cluster,
      kind: resolutionKind,
      namespace,
      name: namespace,
    }),
  ]);
  const catalogs = await Promise.all(
    sources.map(async (source): Promise<SnapshotCatalog> => {
      const name = source.metadata.name ?? '';
      const ns = source.metadata.namespace ?? '';
      const record = records.find((r) => r.name === name && r.namespace === ns);
      const base = {
        name,
        namespace: ns,
        priority: source.spec.priority ?? 0,
        uid: source.metadata.uid,
        resourceVersion: source.metadata.resourceVersion,
        healthy: record?.healthy ?? false,
        digest: record?.digest ?? null,
      };
      if (record?.digest === null || record?.digest === undefined) {
        return { ...base, index: null, unavailableReason: 'its catalog has not been loaded yet' };
      }
      try {
        return { ...base, index: await indexes.get(record.digest) };
      } catch (error) {
        return { ...base, index: null, unavailableReason: (error as Error).message };
      }
    }),
  );
  return {
    cluster,
    namespace,
    globalNamespace,
    subscriptions,
    csvs,
    operatorGroups,
    catalogs,
    previous,
    now: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}
