// What the resolver takes and gives: a namespace snapshot reduced to the facts resolution
// reads, and per Subscription the bundle to install, upgrade or keep (or why not).
import type { CatalogBundle, CatalogIndex } from '../catalog/index.js';

/** A CatalogSource by name and namespace. */
export interface CatalogSourceKey {
  /** CatalogSource name (what Subscriptions put in spec.source). */
  readonly name: string;
  /** CatalogSource namespace (spec.sourceNamespace). */
  readonly namespace: string;
}

/** A catalog visible to the namespace being resolved. */
export interface ResolverCatalog extends CatalogSourceKey {
  /** spec.priority (higher is preferred for dependencies; default 0). */
  readonly priority: number;
  /** The catalog's index, or null when it is unavailable (unhealthy, not loaded yet). */
  readonly index: CatalogIndex | null;
  /** Why the index is unavailable, for explanations. */
  readonly unavailableReason?: string;
}

/** The part of a Subscription resolution reads. */
export interface SubscriptionFacts {
  /** metadata.name. */
  readonly name: string;
  /** spec.name: the package. */
  readonly package: string;
  /** spec.channel, or null for "any channel, default first". */
  readonly channel: string | null;
  /** spec.source / spec.sourceNamespace. */
  readonly source: CatalogSourceKey;
  /** spec.startingCSV, or null. */
  readonly startingCSV: string | null;
  /** status.installedCSV, or null. */
  readonly installedCSV: string | null;
}

/** A property as OLM records it (operatorframework.io/properties, catalog bundles). */
export interface PropertyFact {
  readonly type: string;
  readonly value: unknown;
}

/** A group/version/kind. */
export interface ApiFact {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** An installed (non-copied) ClusterServiceVersion in the namespace. */
export interface InstalledCsvFacts {
  /** metadata.name. */
  readonly name: string;
  /** spec.version, or null. */
  readonly version: string | null;
  /**
   * The operatorframework.io/properties annotation's list (olm.package, olm.gvk, olm.gvk.required,
   * olm.package.required, olm.constraint, ...), or null when the CSV has no such annotation.
   */
  readonly properties: readonly PropertyFact[] | null;
  /** Owned CRDs and API services (used when there is no properties annotation). */
  readonly ownedApis: readonly ApiFact[];
  /** Required CRDs and API services (used when there is no properties annotation). */
  readonly requiredApis: readonly ApiFact[];
}

/** The OperatorGroup facts resolution depends on. */
export interface OperatorGroupFacts {
  /** metadata.name. */
  readonly name: string;
  /** Annotation olm.operatorframework.io/exclude-global-namespace-resolution is "true". */
  readonly excludeGlobalCatalogs: boolean;
  /**
   * The install mode the group asks of its operators: OwnNamespace, SingleNamespace,
   * MultiNamespace or AllNamespaces (from status.namespaces / spec).
   */
  readonly installMode: string;
}

/** Everything one namespace's resolution reads. */
export interface ResolverInput {
  /** The namespace being resolved. */
  readonly namespace: string;
  /** Its Subscriptions. */
  readonly subscriptions: readonly SubscriptionFacts[];
  /** Its ClusterServiceVersions (copied CSVs left out). */
  readonly installed: readonly InstalledCsvFacts[];
  /** Its OperatorGroups, or null when unknown (offline resolution skips the OperatorGroup checks). */
  readonly operatorGroups: readonly OperatorGroupFacts[] | null;
  /** The catalogs it can see: its own namespace's and (unless excluded) the global namespace's. */
  readonly catalogs: readonly ResolverCatalog[];
}

/** What happens to a bundle. */
export type BundleAction = 'install' | 'upgrade' | 'keep';

/** One bundle of the resolution. */
export interface ResolvedBundle {
  /** Package name. */
  readonly package: string;
  /** CSV name. */
  readonly name: string;
  /** Bundle version. */
  readonly version: string;
  /** Catalog it comes from (for `keep`: the Subscription's catalog). */
  readonly catalog: CatalogSourceKey;
  /** Channel it was found in (null for `keep` of a CSV the catalog does not list). */
  readonly channel: string | null;
  /** The Subscription it serves, or null for a dependency without one. */
  readonly subscription: string | null;
  /** install (new), upgrade (replaces an installed CSV) or keep (already installed, nothing to do). */
  readonly action: BundleAction;
  /** The installed CSV it replaces, or null. */
  readonly replaces: string | null;
  /** Whether it is the Subscription's spec.startingCSV. */
  readonly startingCSV: boolean;
  /** The catalog bundle (image, properties, APIs), or null for `keep` of a CSV not in the catalog. */
  readonly bundle: CatalogBundle | null;
}

/** Stable codes of resolution problems. */
export const ResolutionProblemCode = {
  /** The Subscription's catalog, package, channel or startingCSV was not found. */
  NoCandidates: 'NoCandidates',
  /** The Subscription's catalog is unavailable. */
  CatalogUnavailable: 'CatalogUnavailable',
  /** The Subscription's constraints conflict with others (minimal conflict explained). */
  ConstraintsNotSatisfiable: 'ConstraintsNotSatisfiable',
  /** The installed CSVs alone break a rule (reported without a Subscription). */
  InstalledStateConflict: 'InstalledStateConflict',
  /** The namespace cannot be resolved at all (e.g. not exactly one OperatorGroup). */
  ErrorPreventedResolution: 'ErrorPreventedResolution',
} as const;
/** A resolution problem code. */
export type ResolutionProblemCode =
  (typeof ResolutionProblemCode)[keyof typeof ResolutionProblemCode];

/** Why (part of) a namespace did not resolve. */
export interface ResolutionProblem {
  /** The Subscription affected, or null for the namespace as a whole. */
  readonly subscription: string | null;
  /** Stable code. */
  readonly code: ResolutionProblemCode;
  /** What conflicts and what would fix it, in OLM's words. */
  readonly message: string;
  /** The minimal set of conflicting facts, one sentence each (upstream's constraint wording). */
  readonly facts: readonly string[];
}

/** A non-fatal observation about the resolution. */
export interface ResolutionWarning {
  readonly subscription: string | null;
  readonly message: string;
}

/** The outcome of resolving one namespace. */
export interface Resolution {
  /** resolved when every Subscription resolved, unsatisfiable otherwise. */
  readonly status: 'resolved' | 'unsatisfiable';
  /** Bundles per Subscription (install/upgrade/keep) and dependencies to install. */
  readonly bundles: readonly ResolvedBundle[];
  /** Problems, per Subscription where one is concerned. */
  readonly problems: readonly ResolutionProblem[];
  /** Observations that do not block resolution (e.g. unsupported install modes). */
  readonly warnings: readonly ResolutionWarning[];
  /** Work done, for benchmarks and metrics. */
  readonly stats: { readonly variables: number; readonly solves: number };
}
