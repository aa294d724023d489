// The solver's variables: one per candidate bundle, shared by the resolver (./resolve.ts) and
// the explanations of its conflicts (./explain.ts).
import type semver from 'semver';
import type { CatalogBundle, CatalogChannelEntry } from '../catalog/index.js';
import type { ApiFact, InstalledCsvFacts, PropertyFact, ResolverCatalog } from './model.js';

/** A candidate: a catalog channel entry or an installed CSV. */
export type Candidate =
  | {
      readonly kind: 'catalog';
      readonly catalog: ResolverCatalog;
      readonly channel: string;
      readonly entry: CatalogChannelEntry;
      readonly bundle: CatalogBundle;
    }
  | { readonly kind: 'existing'; readonly csv: InstalledCsvFacts };

/** A solver variable standing for one candidate. */
export interface BundleVariable {
  readonly id: string;
  readonly v: number;
  readonly candidate: Candidate;
  readonly name: string;
  readonly package: string | null;
  readonly version: semver.SemVer | null;
  readonly versionText: string;
  readonly provided: readonly ApiFact[];
  readonly labels: readonly string[];
  allProperties(): readonly PropertyFact[];
}
