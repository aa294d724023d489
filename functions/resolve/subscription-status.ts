// The Subscription status fields the resolve function owns: catalogHealth, the
// CatalogSourcesUnhealthy, ResolutionFailed and deprecation conditions, a first BundleUnpacking,
// and installedCSV/state once the CSV a Subscription progresses to exists (upstream:
// "AtLatestKnown"). The plan function owns the InstallPlan fields (installPlanRef,
// installPlanGeneration, currentCSV, UpgradePending, the InstallPlan* conditions) and the unpack
// conditions once a plan reads bundle images; each writes only its own, so neither undoes the other.
import type {
  Subscription,
  SubscriptionCatalogHealth,
  SubscriptionCondition,
  SubscriptionStatus,
} from '../../shared/api/index.js';
import { codes } from '../../shared/api/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import { withCondition, withoutCondition } from '../../shared/api/conditions.js';
import { withDeprecations, type DeprecationNotices } from './deprecations.js';

const { SubscriptionConditionType: Type, SubscriptionConditionReason: Reason } = codes;

/** A catalog the Subscription's namespace can see, with its health. */
export interface VisibleCatalog {
  name: string;
  namespace: string;
  uid: string | undefined;
  resourceVersion: string | undefined;
  healthy: boolean;
}

/** What the resolution says about one Subscription. */
export type SubscriptionOutcome =
  | { kind: 'resolved' }
  | {
      kind: 'failed';
      reason: 'ConstraintsNotSatisfiable' | 'ErrorPreventedResolution';
      message: string;
    };

function catalogHealth(
  previous: readonly SubscriptionCatalogHealth[],
  catalogs: readonly VisibleCatalog[],
  now: string,
): SubscriptionCatalogHealth[] {
  return catalogs.map((c) => {
    const old = previous.find(
      (h) => h.catalogSourceRef.name === c.name && h.catalogSourceRef.namespace === c.namespace,
    );
    // lastUpdated moves only when the health does, so an unchanged world writes nothing.
    const lastUpdated = old !== undefined && old.healthy === c.healthy ? old.lastUpdated : now;
    return {
      catalogSourceRef: {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'CatalogSource',
        name: c.name,
        namespace: c.namespace,
        ...(c.uid === undefined ? {} : { uid: c.uid }),
        ...(c.resourceVersion === undefined ? {} : { resourceVersion: c.resourceVersion }),
      },
      healthy: c.healthy,
      lastUpdated,
    };
  });
}

function catalogCondition(
  sub: Subscription,
  previous: readonly SubscriptionCatalogHealth[],
  catalogs: readonly VisibleCatalog[],
): SubscriptionCondition {
  if (catalogs.length === 0) {
    return {
      type: Type.CatalogSourcesUnhealthy,
      status: 'True',
      reason: Reason.NoCatalogSourcesFound,
      message: 'dependency resolution requires at least one catalogsource',
    };
  }
  const own = catalogs.find(
    (c) => c.name === sub.spec.source && c.namespace === sub.spec.sourceNamespace,
  );
  const ref = `${sub.spec.sourceNamespace}/${sub.spec.source}`;
  if (own === undefined || !own.healthy) {
    return {
      type: Type.CatalogSourcesUnhealthy,
      status: 'True',
      reason: Reason.UnhealthyCatalogSourceFound,
      message: `targeted catalogsource ${ref} ${own === undefined ? 'missing' : 'unhealthy'}`,
    };
  }
  // As upstream, any unhealthy catalog the namespace can see makes the condition True: resolution
  // reads them all. Upstream leaves the message as it was; olmq names the unhealthy catalogs.
  const unhealthy = catalogs.filter((c) => !c.healthy).map((c) => `${c.namespace}/${c.name}`);
  if (unhealthy.length > 0) {
    return {
      type: Type.CatalogSourcesUnhealthy,
      status: 'True',
      reason: Reason.UnhealthyCatalogSourceFound,
      message: `catalogsource ${unhealthy.join(', ')} unhealthy`,
    };
  }
  const key = (name: string | undefined, ns: string | undefined): string => `${ns}/${name}`;
  const before = new Set(
    previous.map((h) => key(h.catalogSourceRef.name, h.catalogSourceRef.namespace)),
  );
  const after = new Set(catalogs.map((c) => key(c.name, c.namespace)));
  const added = [...after].some((k) => !before.has(k));
  const deleted = [...before].some((k) => !after.has(k));
  const reason =
    previous.length === 0
      ? Reason.AllCatalogSourcesHealthy
      : added
        ? Reason.CatalogSourcesAdded
        : deleted
          ? Reason.CatalogSourcesDeleted
          : Reason.AllCatalogSourcesHealthy;
  return {
    type: Type.CatalogSourcesUnhealthy,
    status: 'False',
    reason,
    message: 'all available catalogsources are healthy',
  };
}

// Upstream marks every Subscription of a namespace that resolved `BundleUnpacking=False` (bundle
// contents come from the catalog index, so nothing is ever being unpacked), exactly so: no
// reason, message or time. A condition already there is the plan function's: it says True while
// the Subscription's plan unpacks bundle images and turns it False when they are read, so a
// resolution in between must not end an unpack the plan still waits on. A failed resolution
// leaves the condition as it was.
function notUnpacking(conditions: SubscriptionCondition[]): SubscriptionCondition[] {
  if (conditions.some((c) => c.type === Type.BundleUnpacking)) return conditions;
  return [...conditions, { type: Type.BundleUnpacking, status: 'False' }];
}

/**
 * `conditions` with ResolutionFailed True for `outcome`. Upstream sets it with no
 * lastTransitionTime, and an unsatisfiable resolution's message starts `constraints not
 * satisfiable: `; olmq's explanation follows that prefix.
 */
export function withResolutionFailed(
  conditions: readonly SubscriptionCondition[],
  outcome: Extract<SubscriptionOutcome, { kind: 'failed' }>,
): SubscriptionCondition[] {
  const message =
    outcome.reason === Reason.ConstraintsNotSatisfiable
      ? `${unsatisfiablePrefix}${outcome.message}`
      : outcome.message;
  const condition: SubscriptionCondition = {
    type: Type.ResolutionFailed,
    status: 'True',
    reason: outcome.reason,
    message,
  };
  const old = conditions.find((c) => c.type === Type.ResolutionFailed);
  const same =
    old !== undefined &&
    old.status === condition.status &&
    old.reason === condition.reason &&
    old.message === condition.message &&
    old.lastTransitionTime === undefined;
  if (same) return [...conditions];
  return [...conditions.filter((c) => c.type !== Type.ResolutionFailed), condition];
}
const unsatisfiablePrefix = 'constraints not satisfiable: ';

/**
 * The Subscription's status with the resolve function's fields brought up to date, or undefined
 * when nothing changes (no write).
 */
export function resolvedSubscriptionStatus(
  sub: Subscription,
  catalogs: readonly VisibleCatalog[],
  outcome: SubscriptionOutcome,
  currentCsvExists: boolean,
  now: string,
  /** The catalog's deprecation notices for an installed CSV (see deprecations.ts). */
  noticesFor: (installedCSV: string | undefined) => DeprecationNotices | undefined = () =>
    undefined,
): SubscriptionStatus | undefined {
  const status: SubscriptionStatus = sub.status ?? { lastUpdated: now };
  const previousHealth = status.catalogHealth ?? [];
  const health = catalogHealth(previousHealth, catalogs, now);
  let conditions = withCondition(
    status.conditions ?? [],
    catalogCondition(sub, previousHealth, catalogs),
    now,
  );
  conditions =
    outcome.kind === 'failed'
      ? withResolutionFailed(conditions, outcome)
      : withoutCondition(conditions, Type.ResolutionFailed);
  if (outcome.kind === 'resolved') conditions = notUnpacking(conditions);
  const next: SubscriptionStatus = { ...status, catalogHealth: health, conditions };
  // The CSV the Subscription progresses to exists: it is installed (even before it succeeds).
  if (currentCsvExists && status.currentCSV !== undefined && status.currentCSV !== '') {
    next.installedCSV = status.currentCSV;
    next.state = codes.SubscriptionState.AtLatestKnown;
  }
  next.conditions = withDeprecations(conditions, noticesFor(next.installedCSV), now);
  const same =
    JSON.stringify({ ...next, lastUpdated: undefined }) ===
    JSON.stringify({ ...status, lastUpdated: undefined });
  return same ? undefined : { ...next, lastUpdated: now };
}

/** The write of `status` onto `sub` (a status update of the Subscription as the API served it). */
export function subscriptionStatusWrite(
  sub: Subscription,
  status: NonNullable<Subscription['status']>,
): Write {
  return {
    op: 'updateStatus',
    // The schema types optional fields as `T | undefined`; the object is the API's own.
    object: {
      ...sub,
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      status,
    } as unknown as KubeObject,
  };
}
