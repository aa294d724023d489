// The solver variables of one resolution: one per catalog entry (by catalog, channel and CSV
// name) and one per installed CSV (the `@existing` catalog), each made once.
import semver from 'semver';
import { allBundleProperties } from '../catalog/index.js';
import type { ApiFact, InstalledCsvFacts, PropertyFact, SubscriptionFacts } from './model.js';
import { labelsOf } from './predicates.js';
import type { SatSolver } from './sat.js';
import type { BundleVariable, Candidate } from './variables.js';

/** The catalog name of installed CSVs' variables. */
export const existingCatalogName = '@existing';

/** A catalog channel entry, as a candidate. */
export type CatalogCandidate = Extract<Candidate, { kind: 'catalog' }>;

/** A version as upstream parses it; null when there is none. */
export function parseVersion(text: string | null): semver.SemVer | null {
  if (text === null) return null;
  // blang/semver ParseTolerant: a leading v and missing minor/patch are tolerated.
  return semver.parse(text, { loose: true }) ?? semver.coerce(text, { includePrerelease: true });
}

function packageOfProperties(properties: readonly PropertyFact[]): string | null {
  let pkg: string | null = null;
  for (const p of properties) {
    if (p.type !== 'olm.package') continue;
    const v = typeof p.value === 'string' ? safeJson(p.value) : p.value;
    if (
      typeof v === 'object' &&
      v !== null &&
      typeof (v as { packageName?: unknown }).packageName === 'string'
    ) {
      pkg = (v as { packageName: string }).packageName;
    }
  }
  return pkg;
}

function gvksOfProperties(properties: readonly PropertyFact[]): ApiFact[] {
  const out: ApiFact[] = [];
  for (const p of properties) {
    if (p.type !== 'olm.gvk') continue;
    const v = typeof p.value === 'string' ? safeJson(p.value) : p.value;
    if (typeof v !== 'object' || v === null) continue;
    const o = v as Record<string, unknown>;
    out.push({
      group: typeof o.group === 'string' ? o.group : '',
      version: typeof o.version === 'string' ? o.version : '',
      kind: typeof o.kind === 'string' ? o.kind : '',
    });
  }
  return out;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Every variable of one resolution, by id; installed CSVs' also in `existing`, in input order. */
export class VariableTable {
  readonly #solver: SatSolver;
  readonly #namespace: string;
  readonly #vars = new Map<string, BundleVariable>();
  /** The installed CSVs' variables. */
  readonly existing: BundleVariable[] = [];

  constructor(solver: SatSolver, namespace: string) {
    this.#solver = solver;
    this.#namespace = namespace;
  }

  /** Every variable made so far, in the order made. */
  values(): IterableIterator<BundleVariable> {
    return this.#vars.values();
  }

  /** The variable of a catalog channel entry, made on first use. */
  catalog(candidate: CatalogCandidate): BundleVariable {
    const id = `${candidate.catalog.name}/${candidate.catalog.namespace}/${candidate.channel}/${candidate.bundle.name}`;
    const known = this.#vars.get(id);
    if (known !== undefined) return known;
    const b = candidate.bundle;
    const variable: BundleVariable = {
      id,
      v: this.#solver.newVariable(),
      candidate,
      name: b.name,
      package: b.package,
      version: parseVersion(b.version),
      versionText: b.version,
      provided: b.providedApis,
      labels: labelsOf(b.properties),
      allProperties: () => allBundleProperties(b),
    };
    this.#vars.set(id, variable);
    return variable;
  }

  /** Makes the variable of an installed CSV and adds it to `existing`. */
  addExisting(csv: InstalledCsvFacts, subs: readonly SubscriptionFacts[]): BundleVariable {
    const id = `${existingCatalogName}/${this.#namespace}//${csv.name}`;
    let pkg: string | null = null;
    let provided: readonly ApiFact[];
    if (csv.properties !== null) {
      pkg = packageOfProperties(csv.properties);
      provided = gvksOfProperties(csv.properties);
    } else {
      // Upstream infers the package from the Subscriptions whose installedCSV names the CSV.
      const pkgs = new Set(subs.filter((s) => s.installedCSV === csv.name).map((s) => s.package));
      if (pkgs.size === 1) pkg = [...pkgs][0] ?? null;
      provided = csv.ownedApis;
    }
    const variable: BundleVariable = {
      id,
      v: this.#solver.newVariable(),
      candidate: { kind: 'existing', csv },
      name: csv.name,
      package: pkg,
      version: parseVersion(csv.version),
      versionText: csv.version ?? '',
      provided,
      labels: labelsOf(csv.properties ?? []),
      allProperties: () =>
        csv.properties ?? [
          ...(pkg === null
            ? []
            : [{ type: 'olm.package', value: { packageName: pkg, version: csv.version ?? '' } }]),
          ...provided.map((a) => ({ type: 'olm.gvk', value: a })),
        ],
    };
    this.#vars.set(id, variable);
    this.existing.push(variable);
    return variable;
  }

  /** The installed CSV a Subscription names in status.installedCSV, if it is installed. */
  currentOf(sub: SubscriptionFacts): BundleVariable | null {
    if (sub.installedCSV === null) return null;
    return this.existing.find((e) => e.name === sub.installedCSV) ?? null;
  }
}
