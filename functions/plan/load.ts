// The plan function's load: the namespace's Subscriptions, InstallPlans and CSVs from the
// watcher's mirror first, and from the API only when the mirror's decision cannot stand.
//
// Most plan reconciles change nothing (a Subscription or plan moved on in a way that leaves the
// links as they are), and a decision that writes nothing needs no fresh read: anything newer than
// the mirror reaches it, and wakes this key again, through the triggers. A decision that only
// writes statuses stands on the mirror when the mirror shows every write this function made in
// the namespace (the ledger of own writes, shared/kube/own-writes.ts) and every plan that is
// Complete or Failed has its CSVs beside it there (the mirror of CSVs may lag the mirror of
// plans); its writes are conditional on the versions it saw, so another writer's newer change
// is a conflict, and the load after a conflict reads the API. While only a plan this function
// wrote is missing from the mirror (the pass after creating it), the plans alone are listed from
// the API for a decision that writes statuses. Any other decision (one that creates or deletes
// a plan, or writes a plan's first steps otherwise) is made again on all the API's objects, so a
// plan read Complete has its CSVs in the list beside it and no second plan is made; when the
// API's objects are the mirror's (same resourceVersions, same CSVs), the mirror's snapshot
// stands.
import type {
  ClusterServiceVersion,
  InstallPlan,
  OperatorGroup,
  Subscription,
} from '../../shared/api/index.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import { getMirrored, listMirrored } from '../../shared/bus/mirror-read.js';
import { resolutionRecords, resolutionRef } from '../../shared/handoff/index.js';
import type { PlannedBundle } from '../../shared/install-plan/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import type { OwnWrites } from '../../shared/kube/own-writes.js';
import { kubeTime } from '../../shared/kube/time.js';
import { failForwardEnabled } from '../../shared/resolver/index.js';
import type { ResolutionRecord } from '../../shared/resolver/record.js';
import type { WorkContext } from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { unpackTimingOf, type BundleImageRead } from './bundle-lookups.js';
import type { BundleSources, CatalogReader } from './bundle-sources.js';
import { decidePlan, planGroups, type PlanSnapshot } from './decide.js';

const apiVersion = 'operators.coreos.com/v1alpha1';

/** The objects of the namespace a plan decision reads, from the mirror or the API. */
interface PlanInputs {
  subscriptions: readonly Subscription[];
  installPlans: readonly InstallPlan[];
  csvs: ReadonlySet<string>;
}

/** What is read once per load whichever the source: hand-off record and OperatorGroups. */
interface SharedInputs {
  record: ResolutionRecord | undefined;
  operatorGroups: readonly OperatorGroup[];
}

async function mirrorInputs(
  backbone: Backbone,
  cluster: string,
  namespace: string,
): Promise<PlanInputs> {
  const query = { cluster, namespace };
  const [subscriptions, installPlans, csvs] = await Promise.all([
    listMirrored<Subscription>(backbone, { ...query, kind: 'Subscription' }),
    listMirrored<InstallPlan>(backbone, { ...query, kind: 'InstallPlan' }),
    listMirrored<ClusterServiceVersion>(backbone, { ...query, kind: 'ClusterServiceVersion' }),
  ]);
  // In the API's order (by name): the decision's order of writes follows its input's.
  return {
    subscriptions: byName(subscriptions),
    installPlans: byName(installPlans),
    csvs: new Set(csvs.map((c) => c.metadata.name ?? '')),
  };
}

async function apiInputs(client: KubeClient, namespace: string): Promise<PlanInputs> {
  const list = async <T>(kind: string): Promise<T[]> =>
    (await client.list({ apiVersion, kind, namespace })).items as unknown as T[];
  const [subscriptions, installPlans, csvs] = await Promise.all([
    list<Subscription>('Subscription'),
    list<InstallPlan>('InstallPlan'),
    list<ClusterServiceVersion>('ClusterServiceVersion'),
  ]);
  return { subscriptions, installPlans, csvs: new Set(csvs.map((c) => c.metadata.name ?? '')) };
}

const byName = <T extends { metadata: { name?: string | undefined } }>(objects: T[]): T[] =>
  objects.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));

const versions = (
  objects: readonly {
    metadata: { name?: string | undefined; resourceVersion?: string | undefined };
  }[],
): string =>
  objects
    .map((o) => `${o.metadata.name ?? ''}@${o.metadata.resourceVersion ?? ''}`)
    .sort()
    .join(',');

/** Whether the API's objects are exactly those the mirror holds. */
export function sameInputs(mirror: PlanInputs, api: PlanInputs): boolean {
  return (
    versions(mirror.subscriptions) === versions(api.subscriptions) &&
    versions(mirror.installPlans) === versions(api.installPlans) &&
    mirror.csvs.size === api.csvs.size &&
    [...api.csvs].every((name) => mirror.csvs.has(name))
  );
}

const settled = new Set(['Complete', 'Failed']);

/**
 * Whether the mirror's CSVs can be trusted beside its plans: every CSV a Complete or Failed plan
 * names, and the current CSV of each Subscription following one, is there (a plan is settled
 * only after its CSVs are written, and a mirror that lags on CSVs would show them missing).
 */
export function csvsBesidePlans(inputs: PlanInputs): boolean {
  const done = new Map(
    inputs.installPlans
      .filter((ip) => settled.has(ip.status?.phase ?? ''))
      .map((ip) => [ip.metadata.name ?? '', ip] as const),
  );
  for (const ip of done.values())
    if (!ip.spec.clusterServiceVersionNames.every((name) => inputs.csvs.has(name))) return false;
  return inputs.subscriptions.every((sub) => {
    const current = sub.status?.currentCSV;
    return (
      current === undefined ||
      !done.has(sub.status?.installPlanRef?.name ?? '') ||
      inputs.csvs.has(current)
    );
  });
}

/**
 * Whether a decision made on the mirror stands without an API read: it only writes statuses and
 * creates plans, the mirror shows this function's own writes, and its CSVs are beside its
 * settled plans. A plan's name is derived from its bundles, so a plan the mirror does not show
 * yet is not made twice: its create finds it (executor.ts); a status written on a version the
 * API has moved past is refused (409), and the next load reads the API.
 */
export function mirrorDecisionStands(
  ownWrites: OwnWrites,
  where: { cluster: string; namespace: string },
  inputs: PlanInputs,
  writes: readonly Write[],
): boolean {
  return (
    writes.every(
      (w) => w.op === 'updateStatus' || (w.op === 'create' && w.object.kind === 'InstallPlan'),
    ) &&
    csvsBesidePlans(inputs) &&
    ownWrites.shownIn(where.cluster, where.namespace, {
      Subscription: inputs.subscriptions,
      InstallPlan: inputs.installPlans,
    })
  );
}

/** The groups whose plans' steps are still to be written (their bundles' manifests are read). */
function unplannedGroups(namespace: string, shared: SharedInputs, inputs: PlanInputs) {
  // Plans with steps, and plans a failed bundle lookup ended, need no manifests.
  const planned = new Set(
    inputs.installPlans
      .filter((ip) => ip.status?.plan !== undefined || ip.status?.phase === 'Failed')
      .map((ip) => ip.metadata.name),
  );
  const groups = shared.record === undefined ? [] : planGroups(namespace, shared.record.bundles);
  // A group whose CSVs all exist is done: the decision passes it by.
  return groups.filter(
    (group) => !planned.has(group.name) && !group.bundles.every((b) => inputs.csvs.has(b.name)),
  );
}

/** How long a load waits for the live copy of the mirror to show this function's own writes. */
const ownWritesWaitMs = 250;

/**
 * The mirror's inputs once they show this function's own writes, waiting up to ownWritesWaitMs
 * for the process's live copy of the mirror to apply them (the watcher mirrors each kind
 * through its own watch, so a plan's status can come back before its Subscription's): a
 * moment's wait instead of listing the API. As they are when the wait runs out, there is no
 * copy, or a conflict makes the API's inputs needed anyway.
 */
async function showingOwnWrites(
  backbone: Backbone,
  ownWrites: OwnWrites,
  where: { cluster: string; namespace: string },
  first: PlanInputs,
): Promise<PlanInputs> {
  const { cluster, namespace } = where;
  const deadline = Date.now() + ownWritesWaitMs;
  let inputs = first;
  while (
    backbone.copy !== undefined &&
    !ownWrites.distrusts(cluster, namespace) &&
    !ownWrites.shownIn(cluster, namespace, {
      Subscription: inputs.subscriptions,
      InstallPlan: inputs.installPlans,
    })
  ) {
    const left = deadline - Date.now();
    if (left <= 0 || !(await backbone.copy.changed(cluster, left))) break;
    inputs = await mirrorInputs(backbone, cluster, namespace);
  }
  return inputs;
}

/** Loads one namespace's plan snapshot: the mirror's when it decides no writes, else the API's. */
export async function loadPlanSnapshot(
  backbone: Backbone,
  sources: BundleSources,
  ownWrites: OwnWrites,
  work: WorkContext<FieldKey<'namespace'>>,
): Promise<PlanSnapshot> {
  const { namespace } = work.key;
  const where = { cluster: work.cluster, namespace };
  const [record, operatorGroups, firstRead] = await Promise.all([
    resolutionRecords.read(backbone, resolutionRef(work.cluster, namespace)),
    listMirrored<OperatorGroup>(backbone, {
      cluster: work.cluster,
      kind: 'OperatorGroup',
      namespace,
    }),
    mirrorInputs(backbone, work.cluster, namespace),
  ]);
  const mirrored = await showingOwnWrites(backbone, ownWrites, where, firstRead);
  const shared: SharedInputs = { record, operatorGroups };
  const now = kubeTime(work.now());
  const snapshotOf = (
    inputs: PlanInputs,
    manifests: PlanSnapshot['manifests'],
    bundleImages: ReadonlyMap<string, BundleImageRead>,
  ): PlanSnapshot => ({
    namespace,
    record,
    ...inputs,
    manifests,
    now,
    failForward: failForwardEnabled(operatorGroups),
    bundleImages,
    unpackTiming: unpackTimingOf(operatorGroups),
  });
  // A CatalogSource's pull secrets from the mirror, as it names them.
  const catalogs: CatalogReader = {
    client: work.client,
    catalogSource: ({ namespace: ns, name }) =>
      getMirrored<KubeObject>(backbone, {
        cluster: work.cluster,
        kind: 'CatalogSource',
        namespace: ns,
        name,
      }),
  };
  const withManifests = async (inputs: PlanInputs): Promise<PlanSnapshot> => {
    const manifests = new Map<string, PlannedBundle['manifests'] | Error>();
    const bundleImages = new Map<string, BundleImageRead>();
    // Manifests are read only for plans whose steps are still to be written.
    for (const group of unplannedGroups(namespace, shared, inputs)) {
      await Promise.all(
        group.bundles.map(async (b) => {
          const read = await sources.manifestsOf(catalogs, b);
          manifests.set(b.name, read.manifests);
          if (read.image !== undefined) bundleImages.set(b.name, read.image);
        }),
      );
    }
    return snapshotOf(inputs, manifests, bundleImages);
  };
  // Manifests are read only for a plan whose steps are still to be written.
  const onMirror =
    unplannedGroups(namespace, shared, mirrored).length === 0
      ? snapshotOf(mirrored, new Map(), new Map())
      : await withManifests(mirrored);
  const { writes } = decidePlan(onMirror);
  if (writes.length === 0 || mirrorDecisionStands(ownWrites, where, mirrored, writes))
    return onMirror;
  // A plan this function wrote (just created, typically) is not mirrored yet while its own
  // Subscription writes are: the plans alone from the API, for a decision that writes statuses
  // (the new plan's steps, the links to it). One that would create or delete reads it all.
  if (
    !ownWrites.shownIn(work.cluster, namespace, { InstallPlan: mirrored.installPlans }) &&
    ownWrites.shownIn(work.cluster, namespace, { Subscription: mirrored.subscriptions })
  ) {
    const installPlans = (await work.client.list({ apiVersion, kind: 'InstallPlan', namespace }))
      .items as unknown as InstallPlan[];
    const inputs: PlanInputs = { ...mirrored, installPlans };
    if (csvsBesidePlans(inputs)) {
      const snapshot = await withManifests(inputs);
      if (decidePlan(snapshot).writes.every((w) => w.op === 'updateStatus')) return snapshot;
    }
  }
  ownWrites.readFromApi(work.cluster, namespace);
  const fresh = await apiInputs(work.client, namespace);
  return withManifests(sameInputs(mirrored, fresh) ? mirrored : fresh);
}
