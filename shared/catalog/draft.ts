// Working structures of an index build: drafts of packages, channels and bundles as objects
// are read, and the sink that collects warnings. Private to the catalog folder.
import type semver from 'semver';
import type { BundleContent } from './bundle-content.js';
import type { CsvSummary } from './csv-summary.js';
import type { DeprecationsObject } from './fbc-schema.js';
import type { CatalogChannelEntry, CatalogProperty } from './model.js';
import type { CatalogWarning } from './problems.js';

/** A bundle as read, before the index is assembled. */
export interface DraftBundle {
  readonly name: string;
  readonly pkg: string;
  readonly origin: string;
  readonly version: string;
  readonly parsed: semver.SemVer | null;
  readonly image: string;
  readonly properties: CatalogProperty[];
  readonly derived: CatalogProperty[];
  /** Every property but the manifests, in the catalog's order. */
  readonly listed: CatalogProperty[];
  readonly content: BundleContent;
  readonly csv: CsvSummary | null;
  readonly channels: string[];
  deprecation: string | null;
}

/** A channel with its usable entries, before its graph is checked. */
export interface DraftChannel {
  readonly name: string;
  readonly origin: string;
  readonly entries: CatalogChannelEntry[];
  deprecation: string | null;
}

/** A package with its bundles and channels as read. */
export interface DraftPackage {
  readonly name: string;
  readonly origin: string;
  readonly defaultChannel: string | null;
  readonly bundles: Map<string, DraftBundle>;
  readonly channels: Map<string, DraftChannel>;
  deprecations: { readonly object: DeprecationsObject; readonly origin: string } | null;
  deprecation: string | null;
}

/** Collects warnings in the order they are found. */
export class WarningSink {
  readonly list: CatalogWarning[] = [];

  add(
    code: CatalogWarning['code'],
    message: string,
    about: { package?: string; channel?: string; bundle?: string; origin?: string },
  ): void {
    this.list.push({ code, ...about, message });
  }
}

/** Orders strings by code unit, independent of locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders bundles newest first: valid semver descending, then invalid versions, then by name. */
export function compareVersionsDesc(
  a: DraftBundle | undefined,
  b: DraftBundle | undefined,
): number {
  const va = a?.parsed ?? null;
  const vb = b?.parsed ?? null;
  if (va !== null && vb !== null) {
    const byVersion = vb.compare(va);
    if (byVersion !== 0) return byVersion;
  } else if (va !== null) return -1;
  else if (vb !== null) return 1;
  return compareText(a?.name ?? '', b?.name ?? '');
}
