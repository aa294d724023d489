// A bundle's dependencies (its stated ones, or its CSV's required APIs on upstream's legacy
// path) and each one's providers in upstream's preference order.
import type { CatalogBundle, CatalogIndex } from '../catalog/index.js';
import { allBundleProperties } from '../catalog/index.js';
import { catalogKeyText, sameCatalog } from './catalog-order.js';
import { channelChain } from './channel-chain.js';
import type { ResolverCatalog } from './model.js';
import {
  dependencyOfProperty,
  labelsOf,
  predicateKey,
  testPredicate,
  DependencyParseError,
  type Dependency,
  type Predicate,
  type PredicateSubject,
} from './predicates.js';
import { existingCatalogName, parseVersion, type VariableTable } from './variable-table.js';
import type { BundleVariable } from './variables.js';

/** A bundle's dependencies, or the error that makes it unusable, and whether it is deprecated. */
export interface BundleDependencies {
  readonly dependencies: Dependency[];
  readonly error: string | null;
  readonly deprecated: boolean;
}

/** The dependencies of `v`, each predicate once. */
export function dependenciesOf(v: BundleVariable): BundleDependencies {
  const dependencies: Dependency[] = [];
  const seen = new Set<string>();
  const add = (d: Dependency | null): void => {
    if (d === null) return;
    const key = predicateKey(d.predicate);
    if (seen.has(key)) return;
    seen.add(key);
    dependencies.push(d);
  };
  try {
    if (v.candidate.kind === 'catalog') {
      const b = v.candidate.bundle;
      for (const d of b.dependencies) {
        if (d.type === 'olm.gvk') {
          add(
            dependencyOfProperty({
              type: 'olm.gvk.required',
              value: { group: d.group, version: d.version, kind: d.kind },
            }),
          );
        } else if (d.type === 'olm.package') {
          add(
            dependencyOfProperty({
              type: 'olm.package.required',
              value: { packageName: d.packageName, versionRange: d.versionRange },
            }),
          );
        } else {
          add(dependencyOfProperty({ type: 'olm.constraint', value: d.value }));
        }
      }
      for (const p of b.properties)
        if (p.type === 'olm.label.required') add(dependencyOfProperty(p));
      // Upstream's legacy path: required APIs count when no gvk/package dependency is stated.
      if (!b.dependencies.some((d) => d.type !== 'olm.constraint')) {
        for (const api of b.requiredApis) {
          add(
            dependencyOfProperty({
              type: 'olm.gvk.required',
              value: { group: api.group, version: api.version, kind: api.kind },
            }),
          );
        }
      }
      const deprecated = b.properties.some((p) => p.type === 'olm.deprecated');
      return { dependencies, error: null, deprecated };
    }
    const csv = v.candidate.csv;
    if (csv.properties !== null) {
      for (const p of csv.properties) add(dependencyOfProperty(p));
    } else {
      for (const api of csv.requiredApis) {
        add(
          dependencyOfProperty({
            type: 'olm.gvk.required',
            value: { group: api.group, version: api.version, kind: api.kind },
          }),
        );
      }
    }
    return { dependencies, error: null, deprecated: false };
  } catch (error) {
    if (error instanceof DependencyParseError)
      return { dependencies: [], error: error.message, deprecated: false };
    throw error;
  }
}

/** The providers of each dependency predicate, cached per predicate and preferred catalog. */
export class DependencyProviders {
  readonly #variables: VariableTable;
  readonly #catalogOrder: readonly ResolverCatalog[];
  readonly #cache = new Map<string, BundleVariable[]>();

  constructor(variables: VariableTable, catalogOrder: readonly ResolverCatalog[]) {
    this.#variables = variables;
    this.#catalogOrder = catalogOrder;
  }

  /** Providers of a dependency of `from`, in upstream's preference order. */
  of(predicate: Predicate, from: BundleVariable): BundleVariable[] {
    const preferred = from.candidate.kind === 'catalog' ? from.candidate.catalog : null;
    const cacheKey = `${predicateKey(predicate)}|${preferred === null ? existingCatalogName : catalogKeyText(preferred)}`;
    const known = this.#cache.get(cacheKey);
    if (known !== undefined) return known;
    const out: BundleVariable[] = [];
    // Installed CSVs first, by package then name (each is its own one-entry channel).
    const existing = this.#variables.existing
      .filter((e) => testPredicate(predicate, e))
      .sort((a, b) =>
        (a.package ?? '') < (b.package ?? '')
          ? -1
          : (a.package ?? '') > (b.package ?? '')
            ? 1
            : a.name < b.name
              ? -1
              : 1,
      );
    out.push(...existing);
    const order =
      preferred === null
        ? this.#catalogOrder
        : [preferred, ...this.#catalogOrder.filter((c) => !sameCatalog(c, preferred))];
    for (const catalog of order) {
      const index = catalog.index;
      if (index === null) continue;
      const groups = new Map<string, { pkg: string; channel: string; isDefault: boolean }>();
      for (const b of supersetOf(predicate, index)) {
        if (!testPredicate(predicate, subjectOf(b))) continue;
        const defaultChannel = index.getPackage(b.package)?.defaultChannel ?? null;
        for (const channel of b.channels) {
          const key = `${b.package}\u0000${channel}`;
          if (!groups.has(key))
            groups.set(key, { pkg: b.package, channel, isDefault: channel === defaultChannel });
        }
      }
      const sorted = [...groups.values()].sort((a, b) => {
        if (a.isDefault !== b.isDefault) return a.isDefault ? -1 : 1;
        if (a.pkg !== b.pkg) return a.pkg < b.pkg ? -1 : 1;
        return a.channel < b.channel ? -1 : a.channel > b.channel ? 1 : 0;
      });
      for (const g of sorted) {
        for (const entry of channelChain(index, g.pkg, g.channel)) {
          const bundle = index.getBundle(g.pkg, entry.name);
          if (bundle === undefined || !testPredicate(predicate, subjectOf(bundle))) continue;
          out.push(
            this.#variables.catalog({
              kind: 'catalog',
              catalog,
              channel: g.channel,
              entry,
              bundle,
            }),
          );
        }
      }
    }
    this.#cache.set(cacheKey, out);
    return out;
  }
}

function subjectOf(b: CatalogBundle): PredicateSubject {
  return {
    package: b.package,
    version: parseVersion(b.version),
    provided: b.providedApis,
    labels: labelsOf(b.properties),
    allProperties: () => allBundleProperties(b),
  };
}

function supersetOf(p: Predicate, index: CatalogIndex): readonly CatalogBundle[] {
  switch (p.kind) {
    case 'gvk':
      return index.providersOf(p.api.group, p.api.version, p.api.kind);
    case 'package': {
      const seen = new Set<string>();
      const out: CatalogBundle[] = [];
      for (const c of index.channelsOf(p.packageName)) {
        for (const e of c.entries) {
          if (seen.has(e.name)) continue;
          seen.add(e.name);
          const b = index.getBundle(p.packageName, e.name);
          if (b !== undefined) out.push(b);
        }
      }
      return out;
    }
    case 'all': {
      for (const c of p.children)
        if (c.kind === 'gvk' || c.kind === 'package') return supersetOf(c, index);
      return index.bundles;
    }
    case 'any': {
      if (!p.children.every((c) => c.kind === 'gvk' || c.kind === 'package')) return index.bundles;
      return [...new Set(p.children.flatMap((c) => supersetOf(c, index)))];
    }
    default:
      return index.bundles;
  }
}
