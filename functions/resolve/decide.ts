// The resolve function's decision: resolve one namespace (shared/resolver), bring the
// Subscriptions' resolution status up to date, and hand the resolution to the plan function as
// a record. Pure: the snapshot in, the writes out.
import type { ClusterServiceVersion, OperatorGroup, Subscription } from '../../shared/api/index.js';
import { allBundleProperties, type CatalogIndex } from '../../shared/catalog/index.js';
import { coreEvent } from '../../shared/kube/events.js';
import type { Write } from '../../shared/kube/executor.js';
import {
  ResolutionProblemCode,
  copiedCsvFacts,
  failForwardEnabled,
  installedCsvFacts,
  isCopiedCsv,
  operatorGroupFacts,
  replacedByFailure,
  replacedByUpgrade,
  resolveNamespace,
  subscriptionFacts,
  visibleCatalogs,
  withoutProvidedElsewhere,
  type CopiedCsvFacts,
  type InstalledCsvFacts,
  type Resolution,
  type ResolvedBundle,
  type ResolverCatalog,
} from '../../shared/resolver/index.js';
import { recordResolution, type ResolutionRecord } from '../../shared/resolver/record.js';
import type { Decision } from '../../shared/runtime/function-host.js';
import { deprecationNotices } from './deprecations.js';
import {
  resolvedSubscriptionStatus,
  subscriptionStatusWrite,
  type SubscriptionOutcome,
  type VisibleCatalog,
} from './subscription-status.js';

/** A catalog as the resolve function sees it. */
export interface SnapshotCatalog {
  name: string;
  namespace: string;
  priority: number;
  /** The CatalogSource object's uid and resourceVersion, when it exists. */
  uid: string | undefined;
  resourceVersion: string | undefined;
  /** Whether the catalog function reports it healthy. */
  healthy: boolean;
  digest: string | null;
  index: CatalogIndex | null;
  /** Why the index is unavailable, when it is. */
  unavailableReason?: string;
}

/** What one namespace's resolution reads. */
export interface ResolveSnapshot {
  /** Cluster id (for metrics and logs). */
  cluster: string;
  namespace: string;
  globalNamespace: string;
  /** The mirror's, or the API's when a decision on the mirror's writes their status. */
  subscriptions: readonly Subscription[];
  csvs: readonly ClusterServiceVersion[];
  operatorGroups: readonly OperatorGroup[];
  /** Catalogs of the namespace and of the global catalog namespace. */
  catalogs: readonly SnapshotCatalog[];
  /** The record currently handed to the plan function, if any. */
  previous: ResolutionRecord | undefined;
  /** RFC 3339 time of the decision. */
  now: string;
  /** The Namespace object's uid and resourceVersion (what its Events refer to), when known. */
  namespaceObject?: { uid?: string | undefined; resourceVersion?: string | undefined };
}

/** What the resolve function does: API writes, and the record for the plan function. */
export interface ResolveWrites {
  writes: Write[];
  /** The record to publish, null to remove it, undefined to leave it. */
  record: ResolutionRecord | null | undefined;
  /** The resolution, for metrics and logs (undefined when nothing was resolved). */
  resolution: Resolution | undefined;
  /** The Subscriptions synced, as subscription_sync_total labels them. */
  synced: SubscriptionSync[];
}

/** One Subscription sync, labelled as upstream's subscription_sync_total. */
export interface SubscriptionSync {
  name: string;
  installed: string;
  channel: string;
  package: string;
  approval: string;
}

function outcomeOf(resolution: Resolution, subscription: string): SubscriptionOutcome {
  const problems = resolution.problems.filter(
    (p) => p.subscription === subscription || p.subscription === null,
  );
  if (problems.length === 0) return { kind: 'resolved' };
  const prevented = problems.some(
    (p) =>
      p.code === ResolutionProblemCode.ErrorPreventedResolution ||
      p.code === ResolutionProblemCode.CatalogUnavailable,
  );
  return {
    kind: 'failed',
    reason: prevented ? 'ErrorPreventedResolution' : 'ConstraintsNotSatisfiable',
    message: problems.map((p) => p.message).join('; '),
  };
}

// Upstream's registry answers a bundle per channel, with that channel entry's replaces; a bundle
// whose channel is unknown keeps the catalog's first answer (or its CSV's).
function channelReplaces(b: ResolvedBundle, index: CatalogIndex | null): string | null {
  const entry =
    b.channel === null
      ? undefined
      : index?.getChannel(b.package, b.channel)?.entries.find((e) => e.name === b.name);
  return entry === undefined ? (b.bundle?.replaces ?? null) : entry.replaces;
}

function sameRecord(a: ResolutionRecord | undefined, b: ResolutionRecord): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

/** Decides one namespace. */
export function decideResolve(s: ResolveSnapshot): Decision<ResolveWrites> {
  if (s.subscriptions.length === 0) {
    return {
      writes: {
        writes: [],
        record: s.previous === undefined ? undefined : null,
        resolution: undefined,
        synced: [],
      },
    };
  }
  const csvNames = new Set(s.csvs.map((c) => c.metadata.name));
  const installed: InstalledCsvFacts[] = [];
  const copies: CopiedCsvFacts[] = [];
  const unreadable: string[] = [];
  const own = s.csvs.filter((csv) => !isCopiedCsv(csv));
  for (const csv of s.csvs) if (isCopiedCsv(csv)) copies.push(copiedCsvFacts(csv));
  // Failing forward, a failed upgrade's predecessors step aside: the Failed CSV is what a new
  // bundle replaces (upstream's csv source skips them).
  const steppedOver = failForwardEnabled(s.operatorGroups)
    ? replacedByFailure(own)
    : new Set<string>();
  // An upgrade in progress: the CSV being replaced is no operator of its own. A Subscription
  // names its currentCSV once that exists (below), else its installedCSV.
  const referenced = new Set(
    s.subscriptions
      .map((sub) => {
        const current = sub.status?.currentCSV;
        return current !== undefined && csvNames.has(current) ? current : sub.status?.installedCSV;
      })
      .filter((name): name is string => name !== undefined && name !== ''),
  );
  for (const name of replacedByUpgrade(own, referenced)) steppedOver.add(name);
  for (const csv of own) {
    if (steppedOver.has(csv.metadata.name ?? '')) continue;
    try {
      installed.push(installedCsvFacts(csv));
    } catch (error) {
      unreadable.push((error as Error).message);
    }
  }
  const groups = s.operatorGroups.map((og) => operatorGroupFacts(og, s.namespace));
  const excludeGlobal = groups.length === 1 && groups[0]?.excludeGlobalCatalogs === true;
  const resolverCatalogs: ResolverCatalog[] = s.catalogs.map((c) => ({
    name: c.name,
    namespace: c.namespace,
    priority: c.priority,
    index: c.index,
    ...(c.unavailableReason === undefined ? {} : { unavailableReason: c.unavailableReason }),
  }));
  const visible = visibleCatalogs(resolverCatalogs, s.namespace, s.globalNamespace, excludeGlobal);
  // A Subscription whose currentCSV exists has it installed (upstream's AtLatestKnown rule).
  const subscriptions = s.subscriptions.map((sub) => {
    const facts = subscriptionFacts(sub);
    const current = sub.status?.currentCSV;
    return current !== undefined && current !== '' && csvNames.has(current)
      ? { ...facts, installedCSV: current }
      : facts;
  });
  const resolution = withoutProvidedElsewhere(
    resolveNamespace({
      namespace: s.namespace,
      subscriptions,
      installed,
      operatorGroups: groups,
      catalogs: visible,
    }),
    s.namespace,
    copies,
  );
  const visibleKeys = new Set(visible.map((c) => `${c.namespace}/${c.name}`));
  const healthOf: VisibleCatalog[] = s.catalogs
    .filter((c) => visibleKeys.has(`${c.namespace}/${c.name}`))
    .map((c) => ({
      name: c.name,
      namespace: c.namespace,
      uid: c.uid,
      resourceVersion: c.resourceVersion,
      healthy: c.healthy && c.index !== null,
    }));
  const indexes = new Map(s.catalogs.map((c) => [`${c.namespace}/${c.name}`, c.index]));
  const writes: Write[] = [];
  for (const sub of s.subscriptions) {
    let outcome = outcomeOf(resolution, sub.metadata.name ?? '');
    if (outcome.kind === 'resolved' && unreadable.length > 0) {
      outcome = {
        kind: 'failed',
        reason: 'ErrorPreventedResolution',
        message: unreadable.join('; '),
      };
    }
    const current = sub.status?.currentCSV;
    const index = indexes.get(`${sub.spec.sourceNamespace}/${sub.spec.source}`) ?? null;
    const status = resolvedSubscriptionStatus(
      sub,
      healthOf,
      outcome,
      current !== undefined && csvNames.has(current),
      s.now,
      (installed) => deprecationNotices(sub, installed, index),
    );
    if (status !== undefined) writes.push(subscriptionStatusWrite(sub, status));
  }
  const digests = new Map(s.catalogs.map((c) => [`${c.namespace}/${c.name}`, c.digest]));
  const record = recordResolution(
    s.namespace,
    resolution,
    (c) => digests.get(`${c.namespace}/${c.name}`) ?? null,
    (b) => (b.bundle === null ? [] : allBundleProperties(b.bundle)),
    (b) => channelReplaces(b, indexes.get(`${b.catalog.namespace}/${b.catalog.name}`) ?? null),
  );
  const changed = !sameRecord(s.previous, record);
  // Upstream records a Warning Event on the namespace when resolution fails: about the Namespace,
  // a cluster-scoped object, so the Event lives in `default`, from operator-lifecycle-manager.
  // One per distinct failure (a deterministic name; a repeat counts up), not one per resync.
  if (changed && resolution.problems.length > 0) {
    const message = `constraints not satisfiable: ${resolution.problems.map((p) => p.message).join(', ')}`;
    writes.push({
      op: 'event',
      object: coreEvent(
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          name: s.namespace,
          uid: s.namespaceObject?.uid,
          resourceVersion: s.namespaceObject?.resourceVersion,
        },
        { type: 'Warning', reason: 'ResolutionFailed', message },
        new Date(s.now),
      ),
    });
  }
  return {
    writes: {
      writes,
      record: changed ? record : undefined,
      resolution,
      synced: s.subscriptions.map((sub) => ({
        name: sub.metadata.name ?? '',
        installed: sub.status?.installedCSV ?? '',
        channel: sub.spec.channel ?? '',
        package: sub.spec.name,
        approval: sub.spec.installPlanApproval ?? 'Automatic',
      })),
    },
  };
}
