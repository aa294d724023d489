// The plan function's decision: turn a namespace's recorded resolution into InstallPlans and
// link the Subscriptions to them. Pure.
//
// - Independent work gets separate plans (beyond upstream, which makes one plan per
//   namespace): bundles are grouped by dependency (a bundle and what it requires share a plan),
//   so one Manual Subscription does not hold back the others.
// - Plan names are derived from the namespace and the plan's CSV names, so the same resolution
//   never yields two plans, whichever replica decides and however often.
// - A plan is created first (spec), then its status (phase, steps) is written once it exists
//   (the status subresource ignores status on create), in the same reconcile's next pass.
// - At most `keepPlans` plans per namespace: older generations are removed (upstream keeps 5).
import type {
  InstallPlan,
  InstallPlanStatus,
  Subscription,
  SubscriptionStatus,
} from '../../shared/api/index.js';
import { codes } from '../../shared/api/index.js';
import { componentLabels, subscriptionLabelKey } from '../../shared/api/component-labels.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import {
  shortHash,
  type RecordedBundle,
  type ResolutionRecord,
} from '../../shared/resolver/record.js';
import type { Decision } from '../../shared/runtime/types.js';
import { withCondition, withoutCondition } from '../../shared/api/conditions.js';
import { planSteps, type PlannedBundle } from '../../shared/install-plan/index.js';
import {
  defaultUnpackTimeoutMs,
  judgeLookups,
  unpackConditions,
  type BundleImageRead,
  type UnpackTiming,
} from './bundle-lookups.js';

const { SubscriptionConditionType: Type, SubscriptionConditionReason: Reason } = codes;
const apiVersion = 'operators.coreos.com/v1alpha1';

/** Plans kept per namespace. */
export const keepPlans = 5;

/** What the plan function reads for one namespace. */
export interface PlanSnapshot {
  namespace: string;
  record: ResolutionRecord | undefined;
  /** From the mirror, or fresh from the API when the decision writes (load.ts). */
  subscriptions: readonly Subscription[];
  /** From the mirror, or fresh from the API when the decision writes (load.ts). */
  installPlans: readonly InstallPlan[];
  /** CSV names present in the namespace. */
  csvs: ReadonlySet<string>;
  /** Manifests of the bundles to install, by CSV name; an Error when they could not be read. */
  manifests: ReadonlyMap<string, PlannedBundle['manifests'] | Error>;
  now: string;
  /** The namespace's OperatorGroup fails forward (TechPreviewUnsafeFailForward); default false. */
  failForward?: boolean;
  /** Bundles to install that come from their image (no manifests in the catalog), by CSV name. */
  bundleImages?: ReadonlyMap<string, BundleImageRead>;
  /** The OperatorGroup's unpack timing (default: upstream's 10 minutes, no retry of failures). */
  unpackTiming?: UnpackTiming;
}

/**
 * The Failed plan a Subscription is held on: it follows a Failed plan and the CSV that plan was
 * to install does not exist (upstream: state UpgradePending with a plan reference, so no new
 * resolution until someone intervenes — unless the group fails forward).
 */
function failedPlanOf(
  sub: Subscription,
  plans: ReadonlyMap<string, InstallPlan>,
  csvs: ReadonlySet<string>,
): InstallPlan | undefined {
  const ref = sub.status?.installPlanRef?.name;
  const plan = ref === undefined ? undefined : plans.get(ref);
  const current = sub.status?.currentCSV;
  return plan?.status?.phase === codes.InstallPlanPhase.Failed &&
    current !== undefined &&
    !csvs.has(current)
    ? plan
    : undefined;
}

/** A group of bundles that go into one plan. */
export interface PlanGroup {
  name: string;
  bundles: RecordedBundle[];
}

/** Groups the bundles to install into independent plans (connected by `requires`). */
export function planGroups(namespace: string, bundles: readonly RecordedBundle[]): PlanGroup[] {
  const pending = bundles.filter((b) => b.action !== 'keep');
  const parent = new Map(pending.map((b) => [b.name, b.name]));
  const find = (n: string): string => {
    let root = n;
    while (parent.get(root) !== root) root = parent.get(root) ?? root;
    parent.set(n, root);
    return root;
  };
  for (const b of pending) {
    for (const r of b.requires) if (parent.has(r)) parent.set(find(r), find(b.name));
  }
  const groups = new Map<string, RecordedBundle[]>();
  for (const b of pending) {
    const root = find(b.name);
    groups.set(root, [...(groups.get(root) ?? []), b]);
  }
  return [...groups.values()]
    .map((members) => {
      const sorted = [...members].sort((a, b) => a.name.localeCompare(b.name));
      return {
        name: `install-${shortHash(`${namespace}/${sorted.map((b) => b.name).join(',')}`)}`,
        bundles: sorted,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

function asObject(value: object): KubeObject {
  // The API schemas type optional fields as `T | undefined`; these objects are the API's own.
  return value as unknown as KubeObject;
}

function planRef(ip: InstallPlan): NonNullable<SubscriptionStatus['installPlanRef']> {
  return {
    apiVersion,
    kind: 'InstallPlan',
    name: ip.metadata.name ?? '',
    namespace: ip.metadata.namespace ?? '',
    ...(ip.metadata.uid === undefined ? {} : { uid: ip.metadata.uid }),
    ...(ip.metadata.resourceVersion === undefined
      ? {}
      : { resourceVersion: ip.metadata.resourceVersion }),
  };
}

/**
 * The plan a Subscription should follow and the CSV it brings. `adopted`: the plan created the
 * Subscription (a dependency), which upstream links without an installPlanGeneration.
 */
interface PlanTarget {
  plan: InstallPlan;
  csv: string;
  adopted?: true;
}

/** The Subscription's plan-related status given the plan it should follow (if any). */
function linkedStatus(
  sub: Subscription,
  plans: ReadonlyMap<string, InstallPlan>,
  target: PlanTarget | undefined,
  csvs: ReadonlySet<string>,
  now: string,
): SubscriptionStatus {
  const status: SubscriptionStatus = { ...(sub.status ?? { lastUpdated: now }) };
  if (target !== undefined && status.installPlanRef?.name !== target.plan.metadata.name) {
    status.installPlanRef = planRef(target.plan);
    status.installplan = {
      apiVersion,
      kind: 'InstallPlan',
      name: target.plan.metadata.name ?? '',
      uuid: target.plan.metadata.uid ?? '',
    };
    if (target.adopted !== true) status.installPlanGeneration = target.plan.spec.generation ?? 1;
    status.currentCSV = target.csv;
    if (!csvs.has(target.csv)) status.state = codes.SubscriptionState.UpgradePending;
  }
  let conditions = status.conditions ?? [];
  const refName = status.installPlanRef?.name;
  const plan = refName === undefined ? undefined : plans.get(refName);
  if (refName !== undefined && plan === undefined) {
    if (status.state === codes.SubscriptionState.UpgradePending) {
      // Upstream: a pending upgrade whose plan vanished starts over.
      delete status.installPlanRef;
      delete status.installplan;
      delete status.currentCSV;
      status.state = codes.SubscriptionState.None;
      conditions = withoutCondition(conditions, Type.InstallPlanMissing);
    } else {
      conditions = withCondition(
        conditions,
        {
          type: Type.InstallPlanMissing,
          status: 'True',
          reason: Reason.ReferencedInstallPlanNotFound,
        },
        now,
      );
    }
    conditions = withoutCondition(conditions, Type.InstallPlanPending);
  } else if (plan !== undefined) {
    conditions = withoutCondition(conditions, Type.InstallPlanMissing);
    const phase = plan.status?.phase ?? '';
    if (phase === codes.InstallPlanPhase.Complete) {
      conditions = withoutCondition(conditions, Type.InstallPlanPending);
      conditions = withoutCondition(conditions, Type.InstallPlanFailed);
    } else if (phase === codes.InstallPlanPhase.Failed) {
      conditions = withoutCondition(conditions, Type.InstallPlanPending);
      const installed = plan.status?.conditions?.find((c) => c.type === 'Installed');
      conditions = withCondition(
        conditions,
        {
          type: Type.InstallPlanFailed,
          status: 'True',
          reason: installed?.reason ?? Reason.InstallPlanFailed,
          ...(installed?.message === undefined ? {} : { message: installed.message }),
        },
        now,
      );
    } else {
      conditions = withoutCondition(conditions, Type.InstallPlanFailed);
      conditions = withCondition(
        conditions,
        {
          type: Type.InstallPlanPending,
          status: 'True',
          reason: phase === '' ? Reason.InstallPlanNotYetReconciled : phase,
          ...(plan.status?.message === undefined ? {} : { message: plan.status.message }),
        },
        now,
      );
    }
  }
  return { ...status, conditions };
}

// An approved plan still executing that installs every CSV of `group` not yet present. While a
// plan runs, its CSVs appear one by one and each re-resolves the namespace: the rest of that plan
// forms a new group (another name), which must not get a second plan for what is on its way.
function coveringPlan(s: PlanSnapshot, group: PlanGroup): InstallPlan | undefined {
  const missing = group.bundles.filter((b) => !s.csvs.has(b.name)).map((b) => b.name);
  const done: readonly string[] = [codes.InstallPlanPhase.Complete, codes.InstallPlanPhase.Failed];
  return s.installPlans.find(
    (ip) =>
      ip.spec.approved &&
      !done.includes(ip.status?.phase ?? '') &&
      missing.every((name) => ip.spec.clusterServiceVersionNames.includes(name)),
  );
}

// A status as far as this function tells them apart: no conditions are none, and the time it
// was written is no change (a new Subscription's status is the resolve function's to start).
const comparable = (status: SubscriptionStatus | undefined): string =>
  JSON.stringify({
    ...status,
    lastUpdated: undefined,
    conditions: status?.conditions?.length === 0 ? undefined : status?.conditions,
  });

function generationOf(ip: InstallPlan): number {
  return ip.spec.generation ?? 0;
}

/** Decides one namespace's InstallPlans and Subscription links. */
export function decidePlan(s: PlanSnapshot): Decision<Write[]> {
  const writes: Write[] = [];
  const planStatuses: Write[] = [];
  const plans = new Map(s.installPlans.map((ip) => [ip.metadata.name ?? '', ip]));
  // Plans with the status written by this decision, for the Subscriptions that follow them.
  const effective = new Map(plans);
  let requeueAfterMs: number | undefined;
  const groups = s.record === undefined ? [] : planGroups(s.namespace, s.record.bundles);
  const targets = new Map<string, PlanTarget>();
  let generation = Math.max(
    0,
    ...s.installPlans.map(generationOf),
    ...s.subscriptions.map((sub) => sub.status?.installPlanGeneration ?? 0),
  );
  for (const group of groups) {
    // Done once every CSV of the group exists; the resolve function takes it from there.
    if (group.bundles.every((b) => s.csvs.has(b.name))) continue;
    const subs = s.subscriptions.filter((sub) =>
      group.bundles.some((b) => b.subscription === sub.metadata.name),
    );
    // With Default, a Subscription whose plan failed is held there: no new plan for it.
    if (
      s.failForward !== true &&
      subs.some((sub) => {
        const failed = failedPlanOf(sub, plans, s.csvs);
        return failed !== undefined && failed.metadata.name !== group.name;
      })
    ) {
      continue;
    }
    const manual = subs.some((sub) => sub.spec.installPlanApproval === codes.Approval.Manual);
    const existing = plans.get(group.name);
    const inFlight = existing === undefined ? coveringPlan(s, group) : undefined;
    if (inFlight !== undefined) {
      for (const b of group.bundles) {
        if (b.subscription !== null) targets.set(b.subscription, { plan: inFlight, csv: b.name });
      }
      continue;
    }
    if (existing === undefined) {
      generation += 1;
      writes.push({
        op: 'create',
        object: asObject({
          apiVersion,
          kind: 'InstallPlan',
          metadata: {
            name: group.name,
            // Upstream's generateName, kept for parity; the deterministic name wins.
            generateName: 'install-',
            namespace: s.namespace,
            // The component label adoption gives the plan its Subscriptions follow, at once.
            labels: componentLabels(
              subs.map((sub) => subscriptionLabelKey(sub.spec.name, s.namespace)),
            ),
            ownerReferences: subs.map((sub) => ({
              apiVersion,
              kind: 'Subscription',
              name: sub.metadata.name ?? '',
              uid: sub.metadata.uid ?? '',
              blockOwnerDeletion: false,
              controller: false,
            })),
          },
          spec: {
            clusterServiceVersionNames: group.bundles.map((b) => b.name),
            approval: manual ? codes.Approval.Manual : codes.Approval.Automatic,
            approved: !manual,
            generation,
          },
        }),
      });
      continue;
    }
    // A plan failed by its bundle lookups has no steps, and stays as it is.
    if (
      existing.status?.plan === undefined &&
      existing.status?.phase !== codes.InstallPlanPhase.Failed
    ) {
      const status = stepsStatus(s, group, existing);
      if (status.requeueAfterMs !== undefined) {
        requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, status.requeueAfterMs);
      }
      if (status.status !== undefined) {
        effective.set(group.name, { ...existing, status: status.status });
        planStatuses.push({
          op: 'updateStatus',
          object: asObject({ ...existing, apiVersion, kind: 'InstallPlan', status: status.status }),
        });
      }
    }
    for (const b of group.bundles) {
      if (b.subscription !== null) targets.set(b.subscription, { plan: existing, csv: b.name });
    }
  }
  // Subscriptions a plan created for a dependency adopt that plan (upstream: currentCSV = startingCSV).
  for (const sub of s.subscriptions) {
    const creator = sub.metadata.annotations?.[codes.OlmAnnotation.GeneratedBy];
    const plan = creator === undefined ? undefined : plans.get(creator);
    const name = sub.metadata.name ?? '';
    if (plan !== undefined && sub.status?.installPlanRef === undefined && !targets.has(name)) {
      targets.set(name, { plan, csv: sub.spec.startingCSV ?? '', adopted: true });
    }
  }
  for (const sub of s.subscriptions) {
    // Linked to the plans as this decision leaves them: a plan getting its steps here is
    // already Installing (or RequiresApproval) in the same write, as upstream creates it.
    let status = linkedStatus(sub, effective, targets.get(sub.metadata.name ?? ''), s.csvs, s.now);
    const followed = effective.get(status.installPlanRef?.name ?? '');
    status = { ...status, conditions: unpackConditions(status.conditions ?? [], followed, s.now) };
    // Upstream's fail-forward state for a Subscription whose plan failed before its CSV existed.
    const held = { ...sub, status };
    if (s.failForward === true && failedPlanOf(held, plans, s.csvs) !== undefined) {
      status = { ...status, state: codes.SubscriptionState.UpgradeFailed };
    }
    if (comparable(status) === comparable(sub.status)) continue;
    writes.push({
      op: 'updateStatus',
      object: asObject({
        ...sub,
        apiVersion,
        kind: 'Subscription',
        status: { ...status, lastUpdated: s.now },
      }),
    });
  }
  // A plan's steps let the install-plan function create its CSVs: they are written after the
  // Subscriptions are linked to it, so that no CSV exists that its Subscription does not name
  // (the resolver would take it for one installed by hand). A link refused (409) holds them back.
  writes.push(...planStatuses, ...collectOldPlans(s));
  // A plan just created gets its status (the steps) in the next pass of this reconcile: the
  // load reads plans from the API, so it sees the new plan at once.
  const created = writes.some((w) => w.op === 'create');
  return {
    writes,
    ...(created ? { again: true } : {}),
    ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }),
  };
}

/**
 * The status a plan without steps gets: its steps (and the lookups of bundles from images),
 * the pending lookups while an image is being retried, or Failed with upstream's reason when a
 * lookup failed. Undefined status: nothing to write (a pending lookup unchanged).
 */
function stepsStatus(
  s: PlanSnapshot,
  group: PlanGroup,
  existing: InstallPlan,
): { status?: InstallPlanStatus; requeueAfterMs?: number } {
  const phase = existing.spec.approved
    ? codes.InstallPlanPhase.Installing
    : codes.InstallPlanPhase.RequiresApproval;
  const catalogSources = [...new Set(group.bundles.map((b) => b.catalog.name))].sort();
  const verdict = judgeLookups({
    plan: existing,
    bundles: group.bundles,
    reads: s.bundleImages ?? new Map(),
    timing: s.unpackTiming ?? { timeoutMs: defaultUnpackTimeoutMs },
    now: s.now,
  });
  const bundleLookups = verdict.lookups.length === 0 ? {} : { bundleLookups: verdict.lookups };
  if (verdict.kind === 'failed') {
    const condition = {
      type: codes.InstallPlanConditionType.Installed,
      status: 'False' as const,
      reason: codes.InstallPlanConditionReason.InstallComponentFailed,
      message: verdict.message,
      lastUpdateTime: s.now,
      lastTransitionTime: s.now,
    };
    return {
      status: {
        phase: codes.InstallPlanPhase.Failed,
        catalogSources,
        ...bundleLookups,
        message: verdict.message,
        conditions: [condition],
      },
    };
  }
  if (verdict.kind === 'pending') {
    const status: InstallPlanStatus = { phase, catalogSources, ...bundleLookups };
    const withoutTimes = (v: unknown): string =>
      JSON.stringify(v, (k, x: unknown) => (k === 'lastUpdateTime' ? undefined : x));
    const same = withoutTimes(existing.status?.bundleLookups) === withoutTimes(verdict.lookups);
    return { ...(same ? {} : { status }), requeueAfterMs: verdict.retryAfterMs };
  }
  const planned: PlannedBundle[] = [];
  for (const bundle of group.bundles) {
    const manifests = s.manifests.get(bundle.name);
    if (manifests === undefined || manifests instanceof Error) {
      throw manifests ?? new Error(`no manifests were loaded for bundle ${bundle.name}`);
    }
    planned.push({ bundle, manifests });
  }
  return {
    status: { phase, catalogSources, ...bundleLookups, plan: planSteps(s.namespace, planned) },
  };
}

/** Deletes the oldest plans beyond `keepPlans`, never one a Subscription still follows. */
function collectOldPlans(s: PlanSnapshot): Write[] {
  if (s.installPlans.length <= keepPlans) return [];
  const followed = new Set(s.subscriptions.map((sub) => sub.status?.installPlanRef?.name));
  const oldestFirst = [...s.installPlans].sort(
    (a, b) =>
      generationOf(a) - generationOf(b) ||
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
  const out: Write[] = [];
  let remaining = s.installPlans.length;
  for (const ip of oldestFirst) {
    if (remaining <= keepPlans) break;
    if (followed.has(ip.metadata.name)) continue;
    out.push({
      op: 'delete',
      ref: {
        apiVersion,
        kind: 'InstallPlan',
        namespace: s.namespace,
        name: ip.metadata.name ?? '',
      },
      preconditions: { uid: ip.metadata.uid ?? '' },
    });
    remaining -= 1;
  }
  return out;
}
