// The resolve function: work key { namespace } (queue `resolve`). Re-resolves a namespace when its
// Subscriptions, CSVs, OperatorGroups or CatalogSources change, and when a catalog index it can
// see changes (a global catalog's change fans out to every namespace with Subscriptions).
// Writes the Subscriptions' resolution status and hands the resolution to the plan function
// as a `Resolution` hand-off record (shared/handoff).
import { Counter, Summary } from 'prom-client';
import type {
  CatalogSource,
  ClusterServiceVersion,
  OperatorGroup,
  Subscription,
} from '../../shared/api/index.js';
import {
  CatalogIndexCache,
  catalogIndexRecords,
  openCatalogStore,
  readCatalogIndexRecords,
  resolutionRecords,
  resolutionRef,
} from '../../shared/handoff/index.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import { getMirrored, listMirrored, namespacesWith } from '../../shared/bus/mirror-read.js';
import { isBackboneUnavailable } from '../../shared/bus/unavailable.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { executeWrites } from '../../shared/kube/executor.js';
import { OwnWrites } from '../../shared/kube/own-writes.js';
import { unlessOwnWrite } from '../../shared/runtime/own-write-triggers.js';
import { kubeTime } from '../../shared/kube/time.js';
import { failResolutionOnDeadWork } from './give-up.js';
import { resolveKey } from './keys.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import type {
  Decision,
  FunctionDefinition,
  ObjectChange,
  WorkItem,
} from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import {
  decideResolve,
  type ResolveSnapshot,
  type ResolveWrites,
  type SnapshotCatalog,
} from './decide.js';

const fieldManager = 'olmq-resolve';

const namespaceItem = (namespace: string): WorkItem => resolveKey.of({ namespace });

export const createFunction: CreateFunction = async (context) => {
  const { backbone, globalCatalogNamespace } = context;
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
  // What this replica's Subscription status writes left, so a load can tell whether the mirror
  // shows them (shared/kube/own-writes.ts).
  const ownWrites = new OwnWrites();
  // A catalog change concerns its namespace, or every namespace with Subscriptions when global.
  const catalogKeys = async (change: ObjectChange): Promise<WorkItem[]> =>
    change.ref.namespace === globalCatalogNamespace
      ? (
          await namespacesWith(backbone, {
            cluster: change.ref.cluster,
            kind: 'Subscription',
          })
        ).map(namespaceItem)
      : [namespaceItem(change.ref.namespace)];
  // Times the pure decision (the resolution) by outcome.
  const timedDecision = (snapshot: ResolveSnapshot): Decision<ResolveWrites> => {
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
  };
  // Decisions the load made already, for the snapshot it returned (decide is pure).
  const decided = new WeakMap<ResolveSnapshot, Decision<ResolveWrites>>();
  const definition: FunctionDefinition<FieldKey<'namespace'>, ResolveSnapshot, ResolveWrites> = {
    key: resolveKey,
    triggers: [
      unlessOwnWrite(
        {
          kind: 'Subscription',
          // What a Subscription asks for and where it stands; not the conditions and health
          // written by resolution itself or the InstallPlan progress written by planning, nor
          // a Subscription as this replica's own status write left it.
          parts: ['metadata', 'spec', 'status.currentCSV', 'status.installedCSV'],
          workKeys: (c) => [namespaceItem(c.ref.namespace)],
        },
        ownWrites,
      ),
      {
        kind: 'ClusterServiceVersion',
        // Resolution reads what a CSV is (metadata, spec), and of how far its install got only
        // whether it failed: failing forward, a Failed CSV's predecessors step aside. A copy
        // matters only where a Subscription could ask for the operator it stands for
        // (provided-elsewhere): copies reach every namespace, most of which have none.
        parts: ['metadata', 'spec', 'status.phase'],
        workKeys: async (c) => {
          const csv = c.object as ClusterServiceVersion | undefined;
          const relevant = csv?.status?.phase === 'Failed' || c.touches(['metadata', 'spec']);
          if (!relevant) return [];
          if (csv?.metadata.labels?.['olm.copiedFrom'] === undefined)
            return [namespaceItem(c.ref.namespace)];
          const subscriptions = await listMirrored(backbone, {
            cluster: c.ref.cluster,
            kind: 'Subscription',
            namespace: c.ref.namespace,
          });
          return subscriptions.length > 0 ? [namespaceItem(c.ref.namespace)] : [];
        },
      },
      {
        kind: 'OperatorGroup',
        // Its name, annotations, spec and targets (install mode, global catalogs, fail forward);
        // not the conditions, service account reference or lastUpdated the rbac function writes,
        // nor olm.providedAPIs (its own part, not in metadata).
        parts: ['metadata', 'spec', 'status.namespaces'],
        workKeys: (c) => [namespaceItem(c.ref.namespace)],
      },
      { kind: 'CatalogSource', workKeys: catalogKeys },
      { kind: catalogIndexRecords.kind, workKeys: catalogKeys },
    ],
    // Reads the mirror first: a decision that writes nothing to the API is final (anything newer
    // than the mirror wakes this key again through the triggers). One that writes Subscription
    // status stands on the mirror when the mirror shows this function's own earlier writes
    // there (its status writes are conditional on the mirror's resourceVersions: another
    // writer's newer change is a 409, and the decision is made again on the API's objects).
    // Else the Subscriptions are listed from the API, and when they are the mirror's (same
    // resourceVersions) the decision made stands, else it is made again on them.
    async load(work) {
      const mirrored = await loadSnapshot(
        backbone,
        'mirror',
        indexes,
        work.cluster,
        work.key.namespace,
        globalCatalogNamespace,
        work.now(),
      );
      const decision = timedDecision(mirrored);
      const { cluster } = work;
      const { namespace } = work.key;
      if (
        decision.writes.writes.length > 0 &&
        !ownWrites.shownIn(cluster, namespace, { Subscription: mirrored.subscriptions })
      ) {
        const fresh = await apiSubscriptions(work.client, namespace);
        ownWrites.readFromApi(cluster, namespace);
        if (versionsOf(fresh) !== versionsOf(mirrored.subscriptions))
          return { ...mirrored, subscriptions: fresh };
      }
      decided.set(mirrored, decision);
      return mirrored;
    },
    decide: (snapshot) => decided.get(snapshot) ?? timedDecision(snapshot),
    async apply(writes, work) {
      const { namespace } = work.key;
      if (writes.resolution !== undefined) {
        work.log.debug(
          { namespace, status: writes.resolution.status, stats: writes.resolution.stats },
          'namespace resolved',
        );
        for (const p of writes.resolution.problems) {
          work.log.info({ namespace, subscription: p.subscription, code: p.code }, p.message);
        }
      }
      await ownWrites.recording({ cluster: work.cluster, namespace }, ['Subscription'], (observe) =>
        executeWrites(work.client, writes.writes, fieldManager, observe),
      );
      for (const sync of writes.synced) syncs.inc({ cluster: work.cluster, ...sync });
      const ref = resolutionRef(work.cluster, namespace);
      if (writes.record === null) await resolutionRecords.delete(backbone, ref);
      else if (writes.record !== undefined)
        await resolutionRecords.put(backbone, ref, writes.record);
    },
    giveUp: failResolutionOnDeadWork,
  };
  return { definitions: [definition] };
};

/** The namespace's Subscriptions, fresh from the API. */
const apiSubscriptions = async (client: KubeClient, namespace: string): Promise<Subscription[]> =>
  (
    await client.list({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      namespace,
    })
  ).items as unknown as Subscription[];

/** The Subscriptions' names and resourceVersions, for "are these the same objects". */
const versionsOf = (subscriptions: readonly Subscription[]): string =>
  subscriptions
    .map((s) => `${s.metadata.name ?? ''}@${s.metadata.resourceVersion ?? ''}`)
    .sort()
    .join(',');

/**
 * Reads what one namespace's resolution needs; its Subscriptions from the mirror, or from the
 * API through `client` (then written back with their resourceVersion at once).
 */
export async function loadSnapshot(
  backbone: Backbone,
  source: KubeClient | 'mirror',
  indexes: CatalogIndexCache,
  cluster: string,
  namespace: string,
  globalNamespace: string,
  now: Date,
): Promise<ResolveSnapshot> {
  const catalogNamespaces = [...new Set([namespace, globalNamespace])];
  const [subscriptions, csvs, operatorGroups, records, sources, previous, namespaceObject] =
    await Promise.all([
      source === 'mirror'
        ? listMirrored<Subscription>(backbone, { cluster, kind: 'Subscription', namespace }).then(
            // In the API's order (by name): the decision's order of writes follows its input's.
            (subs) =>
              subs.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')),
          )
        : apiSubscriptions(source, namespace),
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
      resolutionRecords.read(backbone, resolutionRef(cluster, namespace)),
      // What a ResolutionFailed Event refers to.
      getMirrored<KubeObject>(backbone, {
        cluster,
        kind: 'Namespace',
        namespace: '',
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
        // NATS not answering says nothing of the catalog: the pass is retried, not settled as
        // unresolvable (nothing else would wake it while the catalog itself stays the same).
        if (isBackboneUnavailable(error)) throw error;
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
    now: kubeTime(now),
    ...(namespaceObject === undefined
      ? {}
      : {
          namespaceObject: {
            uid: namespaceObject.metadata.uid,
            resourceVersion: namespaceObject.metadata.resourceVersion,
          },
        }),
  };
}
