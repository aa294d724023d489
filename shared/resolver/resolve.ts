// The resolver: from a namespace snapshot and its visible catalogs to the bundles each
// Subscription gets — the same choice upstream OLM's SAT resolver makes — or a minimal,
// readable explanation of why not.
//
// ## Model (as upstream's pkg/controller/registry/resolver)
// - A variable per candidate bundle, identified by catalog, channel and CSV name
//   (`<catalog>/<namespace>/<channel>/<csv>`), and per installed CSV (`@existing/<ns>//<csv>`).
// - Subscription s: "s requires at least one of" its candidates, in preference order: the
//   default channel first, then channel names; within a channel the replaces chain from the
//   head (entries skipped by another entry, and entries off the head's chain, are not
//   candidates). With an installed CSV (status.installedCSV), only entries that replace it, skip
//   it, or whose skipRange contains its version are candidates, each conflicting with it, and
//   the installed CSV itself is the last option (so a Subscription never fails for lack of an
//   upgrade: it keeps what it has). Without one, spec.startingCSV narrows the candidates to it.
// - Installed CSVs no Subscription references are mandatory.
// - Each bundle's dependencies (olm.gvk.required, olm.package.required with semver ranges,
//   olm.label.required, olm.constraint all/any/not/gvk/package; the CSV's required CRDs and API
//   services when the bundle states no gvk/package dependency, as upstream's legacy path does):
//   "bundle b requires at least one of" the providers, ordered: installed CSVs, b's own catalog,
//   higher catalog priority, the namespace's own catalogs before global ones, catalog name; then
//   default channel first, package, channel name, chain order.
// - At most one bundle per package; at most one provider per API (group/version/kind);
//   bundles carrying olm.deprecated are prohibited.
//
// ## Algorithm
// Every rule above is a guarded clause (or a guarded native at-most-one constraint) in a CDCL
// SAT solver (./sat.ts); each rule's guard literal is a "fact" that is assumed true.
// Upstream (operator-framework/deppy-style search over gini) walks choices breadth first —
// first every mandatory variable (Subscriptions, standalone CSVs), then the dependency lists of
// what it picked — and for each choice picks the first candidate that keeps the problem
// satisfiable, then minimises extra installs. With a complete satisfiability check per guess
// that walk never needs to backtrack, and its result is exactly the set of guesses (every
// clause of a guessed variable is satisfied by another guess), so this resolver computes:
//     for each choice, in BFS order: skip it if a candidate is already picked; otherwise pick
//     the first candidate c such that SAT(facts ∧ picks ∧ c)
// reusing the last model as a witness (a candidate true in it needs no new solve).
//
// ## Unsatisfiable namespaces and isolation
// If the facts themselves are unsatisfiable, the solver's core over fact guards is shrunk to a
// minimal unsatisfiable subset (deletion-based: drop a fact, keep it out if still UNSAT). The
// Subscriptions in that set get a problem explaining it in OLM's words; their facts are switched
// off and their installed CSV (if any) is kept as is. Sets without a Subscription (installed CSVs
// that already break a rule) are reported for the namespace and their rules relaxed. This
// repeats until the rest is satisfiable, so Subscriptions not involved still resolve.
import semver from 'semver';
import type { CatalogBundle, CatalogChannelEntry, CatalogIndex } from '../catalog/index.js';
import { allBundleProperties, skipRangeOptions } from '../catalog/index.js';
import { explainConflict, type Fact, type FactSpec, type ExplainContext } from './explain.js';
import type {
  ApiFact,
  CatalogSourceKey,
  InstalledCsvFacts,
  PropertyFact,
  ResolutionProblem,
  ResolutionWarning,
  Resolution,
  ResolvedBundle,
  ResolverCatalog,
  ResolverInput,
  SubscriptionFacts,
} from './model.js';
import { ResolutionProblemCode } from './model.js';
import {
  dependencyOfProperty,
  describePredicate,
  formatApi,
  labelsOf,
  predicateKey,
  testPredicate,
  DependencyParseError,
  type Dependency,
  type Predicate,
  type PredicateSubject,
} from './predicates.js';
import { SatSolver, negate, negative, positive, type Literal } from './sat.js';
import type { BundleVariable, Candidate } from './variables.js';

const existingCatalogName = '@existing';

function catalogKeyText(k: CatalogSourceKey): string {
  return `${k.name}/${k.namespace}`;
}

function sameCatalog(a: CatalogSourceKey, b: CatalogSourceKey): boolean {
  return a.name === b.name && a.namespace === b.namespace;
}

function apiKey(a: ApiFact): string {
  return `${a.group}/${a.version}/${a.kind}`;
}

// Per index: the replaces chain of each channel, and parsed skipRanges (the index is immutable).
const chains = new WeakMap<CatalogIndex, Map<string, readonly CatalogChannelEntry[]>>();
const ranges = new WeakMap<CatalogIndex, Map<string, semver.Range | null>>();

/** The channel's entries along the replaces chain from its head, skipped entries left out (upstream sortChannel). */
export function channelChain(
  index: CatalogIndex,
  pkg: string,
  channel: string,
): readonly CatalogChannelEntry[] {
  let byIndex = chains.get(index);
  if (byIndex === undefined) {
    byIndex = new Map<string, readonly CatalogChannelEntry[]>();
    chains.set(index, byIndex);
  }
  const key = `${pkg}\u0000${channel}`;
  const known = byIndex.get(key);
  if (known !== undefined) return known;
  const c = index.getChannel(pkg, channel);
  const chain: CatalogChannelEntry[] = [];
  if (c !== undefined && c.head !== null) {
    const byName = new Map(c.entries.map((e) => [e.name, e]));
    const skipped = new Set<string>();
    for (const e of c.entries) for (const s of e.skips) if (byName.has(s)) skipped.add(s);
    const visited = new Set<string>();
    let current = byName.get(c.head);
    while (current !== undefined && !visited.has(current.name)) {
      visited.add(current.name);
      if (!skipped.has(current.name)) chain.push(current);
      current = current.replaces === null ? undefined : byName.get(current.replaces);
    }
  }
  byIndex.set(key, chain);
  return chain;
}

function skipRangeOf(index: CatalogIndex, entry: CatalogChannelEntry): semver.Range | null {
  if (entry.skipRange === null) return null;
  let byIndex = ranges.get(index);
  if (byIndex === undefined) {
    byIndex = new Map<string, semver.Range | null>();
    ranges.set(index, byIndex);
  }
  const known = byIndex.get(entry.skipRange);
  if (known !== undefined) return known;
  let range: semver.Range | null;
  try {
    range = new semver.Range(entry.skipRange, skipRangeOptions);
  } catch {
    range = null; // reported when the index was built; matches nothing
  }
  byIndex.set(entry.skipRange, range);
  return range;
}

function parseVersion(text: string | null): semver.SemVer | null {
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

interface Choice {
  readonly candidates: readonly BundleVariable[];
}

/** Resolves one namespace. Pure: no I/O, no clock. */
export function resolveNamespace(input: ResolverInput): Resolution {
  return new NamespaceResolution(input).run();
}

class NamespaceResolution {
  readonly #input: ResolverInput;
  readonly #solver = new SatSolver();
  readonly #vars = new Map<string, BundleVariable>();
  readonly #byV: BundleVariable[] = [];
  readonly #facts: Fact[] = [];
  readonly #problems: ResolutionProblem[] = [];
  readonly #warnings: ResolutionWarning[] = [];
  readonly #existing: BundleVariable[] = [];
  readonly #deps = new Map<
    BundleVariable,
    { dependency: Dependency; providers: BundleVariable[] }[]
  >();
  readonly #providerCache = new Map<string, BundleVariable[]>();
  readonly #expanded = new Set<BundleVariable>();
  readonly #pending: BundleVariable[] = [];
  readonly #catalogOrder: ResolverCatalog[];
  readonly #subCandidates = new Map<
    string,
    { sub: SubscriptionFacts; candidates: BundleVariable[]; current: BundleVariable | null }
  >();

  constructor(input: ResolverInput) {
    this.#input = input;
    this.#catalogOrder = [...input.catalogs].sort((a, b) => {
      if (a.priority !== b.priority) return b.priority - a.priority;
      if (a.namespace !== b.namespace) {
        if (a.namespace === input.namespace) return -1;
        if (b.namespace === input.namespace) return 1;
      }
      return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    });
  }

  run(): Resolution {
    const input = this.#input;
    const subs = [...input.subscriptions].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    const ogProblem = this.#operatorGroupProblem();
    if (ogProblem !== null) {
      return this.#result(
        [],
        [
          {
            subscription: null,
            code: ResolutionProblemCode.ErrorPreventedResolution,
            message: ogProblem,
            facts: [],
          },
        ],
      );
    }
    for (const csv of input.installed) this.#existing.push(this.#existingVariable(csv, subs));
    const referenced = new Set(
      subs.map((s) => s.installedCSV).filter((n): n is string => n !== null),
    );

    // Facts for standalone CSVs, then Subscriptions.
    const anchors: { fact: Fact; choice: Choice }[] = [];
    for (const e of [...this.#existing].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (referenced.has(e.name)) continue;
      const fact = this.#fact({ kind: 'mandatory', variable: e });
      this.#solver.addClause([negate(fact.guard), positive(e.v)]);
      anchors.push({ fact, choice: { candidates: [e] } });
      this.#pending.push(e);
    }
    const kept = new Map<string, { fact: Fact; variable: BundleVariable }>();
    for (const sub of subs) {
      const found = this.#subscriptionCandidates(sub);
      if ('problem' in found) {
        this.#problems.push(found.problem);
        const current = this.#currentOf(sub);
        if (current !== null) {
          const fact = this.#fact({ kind: 'kept', variable: current, subscription: sub.name });
          this.#solver.addClause([negate(fact.guard), positive(current.v)]);
          anchors.push({ fact, choice: { candidates: [current] } });
          this.#pending.push(current);
        }
        continue;
      }
      const { candidates, current } = found;
      this.#subCandidates.set(sub.name, { sub, candidates, current });
      const fact = this.#fact({ kind: 'subscription', subscription: sub, candidates });
      this.#solver.addClause([negate(fact.guard), ...candidates.map((c) => positive(c.v))]);
      if (current !== null) {
        for (const c of candidates) {
          if (c !== current)
            this.#solver.addClause([negate(fact.guard), negative(c.v), negative(current.v)]);
        }
        const keep = this.#fact({ kind: 'kept', variable: current, subscription: sub.name }, false);
        this.#solver.addClause([negate(keep.guard), positive(current.v)]);
        kept.set(sub.name, { fact: keep, variable: current });
      }
      anchors.push({ fact, choice: { candidates } });
      this.#pending.push(...candidates);
    }
    this.#expandAll();
    this.#addInvariants();

    // Isolation: switch off the facts of each minimal conflict until the rest is satisfiable.
    for (;;) {
      if (this.#solver.solve(this.#assumptions())) break;
      const core = this.#minimalCore();
      if (core.length === 0) {
        // Unreachable unless the solver is wrong; refuse rather than guess.
        throw new Error('resolver: unsatisfiable without any fact');
      }
      const problems = explainConflict(core, this.#context());
      this.#problems.push(...problems);
      const subsInCore = core.filter((f) => f.kind === 'subscription');
      if (subsInCore.length > 0) {
        for (const f of subsInCore) {
          if (f.kind !== 'subscription') continue;
          f.active = false;
          const keep = kept.get(f.subscription.name);
          if (keep !== undefined) {
            keep.fact.active = true;
            anchors.push({ fact: keep.fact, choice: { candidates: [keep.variable] } });
          }
        }
      } else {
        const relax = core.filter((f) => f.kind !== 'mandatory' && f.kind !== 'kept');
        for (const f of relax.length > 0 ? relax : core) f.active = false;
      }
    }

    const picked = this.#search(anchors.filter((a) => a.fact.active));
    const bundles = this.#bundles(picked);
    this.#installModeWarnings(bundles);
    return this.#result(bundles, this.#problems);
  }

  /** Upstream does not filter by install mode; the CSV fails later with UnsupportedOperatorGroup. Say so early. */
  #installModeWarnings(bundles: readonly ResolvedBundle[]): void {
    const mode = this.#input.operatorGroups?.[0]?.installMode;
    if (mode === undefined) return;
    for (const b of bundles) {
      const modes = b.bundle?.installModes;
      if (b.action === 'keep' || modes === null || modes === undefined) continue;
      if (modes.some((m) => m.type === mode && m.supported)) continue;
      this.#warnings.push({
        subscription: b.subscription,
        message: `bundle ${b.name} does not support install mode ${mode} of OperatorGroup ${this.#input.operatorGroups?.[0]?.name ?? ''}; its ClusterServiceVersion will fail with UnsupportedOperatorGroup`,
      });
    }
  }

  #operatorGroupProblem(): string | null {
    const groups = this.#input.operatorGroups;
    if (groups === null) return null;
    if (groups.length !== 1) return `found ${groups.length} operatorGroups, expected 1`;
    return null;
  }

  #result(bundles: ResolvedBundle[], problems: ResolutionProblem[]): Resolution {
    return {
      status: problems.length === 0 ? 'resolved' : 'unsatisfiable',
      bundles,
      problems,
      warnings: this.#warnings,
      stats: { variables: this.#solver.variables, solves: this.#solver.stats.solves },
    };
  }

  #fact(spec: FactSpec, active = true): Fact {
    const guard = positive(this.#solver.newVariable());
    const fact = { ...spec, guard, active } as Fact;
    this.#facts.push(fact);
    return fact;
  }

  #assumptions(): Literal[] {
    return this.#facts.map((f) => (f.active ? f.guard : negate(f.guard)));
  }

  /** Deletion-based minimal unsatisfiable subset of the active facts (they must be unsatisfiable). */
  #minimalCore(): Fact[] {
    const byGuard = new Map(this.#facts.map((f) => [f.guard, f]));
    const failed = (): Set<Fact> =>
      new Set(
        this.#solver
          .failedAssumptions()
          .map((l) => byGuard.get(l))
          .filter((f): f is Fact => f !== undefined && f.active),
      );
    const saved = new Map(this.#facts.map((f) => [f, f.active]));
    let core = [...failed()];
    for (const f of this.#facts) f.active = core.includes(f);
    // core[0..i) are necessary: dropping one makes the rest satisfiable. A necessary fact of a
    // set is in every unsatisfiable subset of it, so refining the core keeps them.
    let i = 0;
    while (i < core.length) {
      const f = core[i] as Fact;
      f.active = false;
      if (this.#solver.solve(this.#assumptions())) {
        f.active = true;
        i++;
        continue;
      }
      const smaller = failed();
      core = core.filter((g) => smaller.has(g));
      for (const g of this.#facts) g.active = core.includes(g);
    }
    for (const [f, active] of saved) f.active = active;
    const order = new Map(this.#facts.map((f, i) => [f, i]));
    return core.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  }

  #context(): ExplainContext {
    return { namespace: this.#input.namespace, catalogs: this.#input.catalogs };
  }

  // ---- variables -------------------------------------------------------------------------

  #variable(candidate: Candidate): BundleVariable {
    const id =
      candidate.kind === 'catalog'
        ? `${candidate.catalog.name}/${candidate.catalog.namespace}/${candidate.channel}/${candidate.bundle.name}`
        : `${existingCatalogName}/${this.#input.namespace}//${candidate.csv.name}`;
    const known = this.#vars.get(id);
    if (known !== undefined) return known;
    let variable: BundleVariable;
    if (candidate.kind === 'catalog') {
      const b = candidate.bundle;
      variable = {
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
    } else {
      throw new Error('existing variables are made by #existingVariable');
    }
    this.#vars.set(id, variable);
    this.#byV[variable.v] = variable;
    return variable;
  }

  #existingVariable(csv: InstalledCsvFacts, subs: readonly SubscriptionFacts[]): BundleVariable {
    const id = `${existingCatalogName}/${this.#input.namespace}//${csv.name}`;
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
    this.#byV[variable.v] = variable;
    return variable;
  }

  #currentOf(sub: SubscriptionFacts): BundleVariable | null {
    if (sub.installedCSV === null) return null;
    return this.#existing.find((e) => e.name === sub.installedCSV) ?? null;
  }

  // ---- Subscription candidates -----------------------------------------------------------

  #subscriptionCandidates(
    sub: SubscriptionFacts,
  ):
    | { candidates: BundleVariable[]; current: BundleVariable | null }
    | { problem: ResolutionProblem } {
    const problem = (
      code: ResolutionProblemCode,
      message: string,
    ): { problem: ResolutionProblem } => ({
      problem: { subscription: sub.name, code, message, facts: [] },
    });
    const catalog = this.#input.catalogs.find((c) => sameCatalog(c, sub.source));
    const current = this.#currentOf(sub);
    const where = `${sub.source.name} in namespace ${sub.source.namespace}`;
    if (catalog === undefined || (catalog.index !== null && catalog.index.bundles.length === 0)) {
      const visible = this.#input.catalogs.map((c) => catalogKeyText(c)).join(', ');
      return problem(
        ResolutionProblemCode.NoCandidates,
        `no operators found from catalog ${where} referenced by subscription ${sub.name}` +
          (catalog === undefined
            ? `; no such CatalogSource is visible to namespace ${this.#input.namespace} (visible: ${visible === '' ? 'none' : visible}). Fix spec.source/spec.sourceNamespace or create the CatalogSource.`
            : '; the catalog is empty.'),
      );
    }
    if (catalog.index === null) {
      return problem(
        ResolutionProblemCode.CatalogUnavailable,
        `catalog source ${catalog.namespace}/${catalog.name} referenced by subscription ${sub.name} is unavailable` +
          `${catalog.unavailableReason === undefined ? '' : `: ${catalog.unavailableReason}`}; the subscription resolves again once the catalog is healthy.`,
      );
    }
    const index = catalog.index;
    const pkg = index.getPackage(sub.package);
    if (pkg === undefined) {
      const near = index.packages
        .map((p) => p.name)
        .filter((n) => n.includes(sub.package) || sub.package.includes(n))
        .slice(0, 5);
      return problem(
        ResolutionProblemCode.NoCandidates,
        `no operators found in package ${sub.package} in the catalog referenced by subscription ${sub.name}; catalog ${catalog.namespace}/${catalog.name} has no package ${sub.package}` +
          (near.length > 0 ? ` (similar: ${near.join(', ')})` : '') +
          '. Fix spec.name.',
      );
    }
    if (sub.channel !== null && index.getChannel(sub.package, sub.channel) === undefined) {
      return problem(
        ResolutionProblemCode.NoCandidates,
        `no operators found in channel ${sub.channel} of package ${sub.package} in the catalog referenced by subscription ${sub.name}; its channels are ${pkg.channels.join(', ')}` +
          `${pkg.defaultChannel === null ? '' : ` (default ${pkg.defaultChannel})`}. Fix spec.channel.`,
      );
    }
    let channels = sub.channel === null ? [...pkg.channels] : [sub.channel];
    // Default channel first, then channel names.
    channels.sort((a, b) =>
      a === pkg.defaultChannel ? -1 : b === pkg.defaultChannel ? 1 : a < b ? -1 : a > b ? 1 : 0,
    );
    const starting = current === null ? sub.startingCSV : null;
    if (starting !== null) {
      channels = channels.filter((c) =>
        index.getChannel(sub.package, c)?.entries.some((e) => e.name === starting),
      );
      if (channels.length === 0) {
        return problem(
          ResolutionProblemCode.NoCandidates,
          `no operators found with name ${starting} in channel ${sub.channel ?? ''} of package ${sub.package} in the catalog referenced by subscription ${sub.name}. Fix spec.startingCSV.`,
        );
      }
    }
    const candidates: BundleVariable[] = [];
    for (const channel of channels) {
      let entries: readonly CatalogChannelEntry[];
      if (starting !== null) {
        entries =
          index.getChannel(sub.package, channel)?.entries.filter((e) => e.name === starting) ?? [];
      } else {
        entries = channelChain(index, sub.package, channel);
      }
      if (current !== null) {
        const name = current.name;
        const version = current.version;
        entries = entries.filter((e) => {
          if (e.replaces === name || e.skips.includes(name)) return true;
          const range = skipRangeOf(index, e);
          return range !== null && version !== null && range.test(version);
        });
      }
      for (const entry of entries) {
        const bundle = index.getBundle(sub.package, entry.name);
        if (bundle === undefined) continue;
        const v = this.#variable({ kind: 'catalog', catalog, channel, entry, bundle });
        if (!candidates.includes(v)) candidates.push(v);
      }
    }
    if (current !== null) candidates.push(current);
    return { candidates, current };
  }

  // ---- dependencies ----------------------------------------------------------------------

  #dependenciesOf(v: BundleVariable): {
    dependencies: Dependency[];
    error: string | null;
    deprecated: boolean;
  } {
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

  #expandAll(): void {
    while (this.#pending.length > 0) {
      const v = this.#pending.pop() as BundleVariable;
      if (this.#expanded.has(v)) continue;
      this.#expanded.add(v);
      const { dependencies, error, deprecated } = this.#dependenciesOf(v);
      if (error !== null) {
        const fact = this.#fact({
          kind: 'prohibited',
          variable: v,
          why: `bundle ${v.name} has an unusable dependency: ${error}`,
        });
        this.#solver.addClause([negate(fact.guard), negative(v.v)]);
        continue;
      }
      if (deprecated) {
        const fact = this.#fact({
          kind: 'prohibited',
          variable: v,
          why: `bundle ${v.name} is deprecated`,
        });
        this.#solver.addClause([negate(fact.guard), negative(v.v)]);
      }
      const list: { dependency: Dependency; providers: BundleVariable[] }[] = [];
      for (const dependency of dependencies) {
        const providers = this.#providers(dependency.predicate, v);
        list.push({ dependency, providers });
        const fact = this.#fact({ kind: 'dependency', variable: v, dependency, providers });
        this.#solver.addClause([
          negate(fact.guard),
          negative(v.v),
          ...providers.map((p) => positive(p.v)),
        ]);
        for (const p of providers) if (!this.#expanded.has(p)) this.#pending.push(p);
      }
      this.#deps.set(v, list);
    }
  }

  /** Providers of a dependency of `from`, in upstream's preference order. */
  #providers(predicate: Predicate, from: BundleVariable): BundleVariable[] {
    const preferred = from.candidate.kind === 'catalog' ? from.candidate.catalog : null;
    const cacheKey = `${predicateKey(predicate)}|${preferred === null ? existingCatalogName : catalogKeyText(preferred)}`;
    const known = this.#providerCache.get(cacheKey);
    if (known !== undefined) return known;
    const out: BundleVariable[] = [];
    // Installed CSVs first, by package then name (each is its own one-entry channel).
    const existing = this.#existing
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
          out.push(this.#variable({ kind: 'catalog', catalog, channel: g.channel, entry, bundle }));
        }
      }
    }
    this.#providerCache.set(cacheKey, out);
    return out;
  }

  #addInvariants(): void {
    const byPackage = new Map<string, BundleVariable[]>();
    const byApi = new Map<string, { api: ApiFact; vars: BundleVariable[] }>();
    for (const v of this.#vars.values()) {
      if (v.package !== null) {
        const list = byPackage.get(v.package);
        if (list === undefined) byPackage.set(v.package, [v]);
        else list.push(v);
      }
      for (const api of v.provided) {
        const k = apiKey(api);
        const entry = byApi.get(k);
        if (entry === undefined) byApi.set(k, { api, vars: [v] });
        else if (!entry.vars.includes(v)) entry.vars.push(v);
      }
    }
    for (const [pkg, vars] of byPackage) {
      if (vars.length < 2) continue;
      const fact = this.#fact({ kind: 'package', packageName: pkg, variables: vars });
      this.#solver.addAtMostOne(
        vars.map((v) => v.v),
        fact.guard,
      );
    }
    for (const { api, vars } of byApi.values()) {
      // Providers all from one package are already bound by that package's rule.
      const first = vars[0]?.package ?? null;
      if (vars.length < 2 || (first !== null && vars.every((v) => v.package === first))) continue;
      const fact = this.#fact({ kind: 'api', api, variables: vars });
      this.#solver.addAtMostOne(
        vars.map((v) => v.v),
        fact.guard,
      );
    }
  }

  // ---- preference-ordered search ---------------------------------------------------------

  #search(anchors: readonly { fact: Fact; choice: Choice }[]): Set<BundleVariable> {
    const base = this.#assumptions();
    const picks: BundleVariable[] = [];
    const picked = new Set<BundleVariable>();
    const model = (v: BundleVariable): boolean => this.#solver.value(v.v);
    // The solver's last model satisfies base ∧ picks (invariant).
    if (!this.#solver.solve(base)) throw new Error('resolver: facts became unsatisfiable');
    let witness = new Set<number>();
    const snapshot = (): void => {
      witness = new Set();
      for (const v of this.#vars.values()) if (model(v)) witness.add(v.v);
    };
    snapshot();
    const queue: Choice[] = anchors.map((a) => a.choice);
    for (let q = 0; q < queue.length; q++) {
      const choice = queue[q] as Choice;
      if (choice.candidates.some((c) => picked.has(c))) continue;
      let pick: BundleVariable | null = null;
      for (const c of choice.candidates) {
        if (witness.has(c.v)) {
          pick = c;
          break;
        }
        const lits = [...base, ...picks.map((p) => positive(p.v)), positive(c.v)];
        if (this.#solver.solve(lits)) {
          snapshot();
          pick = c;
          break;
        }
      }
      if (pick === null) continue; // an anchor's choice whose fact was switched off
      picks.push(pick);
      picked.add(pick);
      for (const { providers } of this.#deps.get(pick) ?? []) {
        if (providers.length > 0) queue.push({ candidates: providers });
      }
    }
    return picked;
  }

  // ---- output ----------------------------------------------------------------------------

  #bundles(picked: Set<BundleVariable>): ResolvedBundle[] {
    const out: ResolvedBundle[] = [];
    const claimed = new Set<BundleVariable>();
    const failed = new Set(this.#problems.map((p) => p.subscription));
    const subs = [...this.#subCandidates.values()].sort((a, b) =>
      a.sub.name < b.sub.name ? -1 : 1,
    );
    for (const { sub, candidates, current } of subs) {
      if (failed.has(sub.name)) continue;
      const pick = candidates.find((c) => picked.has(c));
      if (pick === undefined) continue;
      claimed.add(pick);
      if (pick.candidate.kind === 'existing') {
        const catalog = this.#input.catalogs.find((c) => sameCatalog(c, sub.source));
        const bundle = catalog?.index?.getBundle(sub.package, pick.name) ?? null;
        out.push({
          package: pick.package ?? sub.package,
          name: pick.name,
          version: pick.versionText,
          catalog: { name: sub.source.name, namespace: sub.source.namespace },
          channel: sub.channel,
          subscription: sub.name,
          action: 'keep',
          replaces: null,
          startingCSV: false,
          bundle,
        });
        continue;
      }
      out.push(
        this.#resolved(
          pick,
          sub.name,
          current?.name ?? null,
          sub.startingCSV === pick.name && current === null,
        ),
      );
    }
    const deps = [...picked]
      .filter((v) => v.candidate.kind === 'catalog' && !claimed.has(v))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const v of deps) {
      // A dependency of a package already installed (and not picked) upgrades that CSV.
      const replaced = this.#existing.find((e) => e.package === v.package && !picked.has(e));
      out.push(this.#resolved(v, null, replaced?.name ?? null, false));
    }
    return out;
  }

  #resolved(
    v: BundleVariable,
    subscription: string | null,
    replaces: string | null,
    startingCSV: boolean,
  ): ResolvedBundle {
    if (v.candidate.kind !== 'catalog') throw new Error('resolver: not a catalog bundle');
    const { catalog, channel, bundle } = v.candidate;
    return {
      package: bundle.package,
      name: bundle.name,
      version: bundle.version,
      catalog: { name: catalog.name, namespace: catalog.namespace },
      channel,
      subscription,
      action: replaces === null ? 'install' : 'upgrade',
      replaces,
      startingCSV,
      bundle,
    };
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

export { describePredicate, formatApi };
