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
import { catalogPreferenceOrder } from './catalog-order.js';
import { DependencyProviders, dependenciesOf } from './dependencies.js';
import { explainConflict, type Fact, type ExplainContext } from './explain.js';
import { FactSet } from './fact-set.js';
import type {
  ApiFact,
  ResolutionProblem,
  ResolutionWarning,
  Resolution,
  ResolvedBundle,
  ResolverInput,
} from './model.js';
import { ResolutionProblemCode } from './model.js';
import { describePredicate, formatApi, type Dependency } from './predicates.js';
import { installModeWarnings, resolvedBundles } from './resolved-bundles.js';
import { SatSolver, negate, negative, positive } from './sat.js';
import { subscriptionCandidates, type SubscriptionCandidates } from './subscription-candidates.js';
import { VariableTable } from './variable-table.js';
import type { BundleVariable } from './variables.js';

function apiKey(a: ApiFact): string {
  return `${a.group}/${a.version}/${a.kind}`;
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
  readonly #facts = new FactSet(this.#solver);
  readonly #variables: VariableTable;
  readonly #providers: DependencyProviders;
  readonly #problems: ResolutionProblem[] = [];
  readonly #warnings: ResolutionWarning[] = [];
  readonly #deps = new Map<
    BundleVariable,
    { dependency: Dependency; providers: BundleVariable[] }[]
  >();
  readonly #expanded = new Set<BundleVariable>();
  readonly #pending: BundleVariable[] = [];
  readonly #subCandidates = new Map<string, SubscriptionCandidates>();

  constructor(input: ResolverInput) {
    this.#input = input;
    this.#variables = new VariableTable(this.#solver, input.namespace);
    this.#providers = new DependencyProviders(
      this.#variables,
      catalogPreferenceOrder(input.catalogs, input.namespace),
    );
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
    for (const csv of input.installed) this.#variables.addExisting(csv, subs);
    const referenced = new Set(
      subs.map((s) => s.installedCSV).filter((n): n is string => n !== null),
    );

    // Facts for standalone CSVs, then Subscriptions.
    const anchors: { fact: Fact; choice: Choice }[] = [];
    for (const e of [...this.#variables.existing].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (referenced.has(e.name)) continue;
      const fact = this.#facts.add({ kind: 'mandatory', variable: e });
      this.#solver.addClause([negate(fact.guard), positive(e.v)]);
      anchors.push({ fact, choice: { candidates: [e] } });
      this.#pending.push(e);
    }
    const kept = new Map<string, { fact: Fact; variable: BundleVariable }>();
    for (const sub of subs) {
      const found = subscriptionCandidates(sub, {
        namespace: input.namespace,
        catalogs: input.catalogs,
        variables: this.#variables,
      });
      if ('problem' in found) {
        this.#problems.push(found.problem);
        const current = this.#variables.currentOf(sub);
        if (current !== null) {
          const fact = this.#facts.add({ kind: 'kept', variable: current, subscription: sub.name });
          this.#solver.addClause([negate(fact.guard), positive(current.v)]);
          anchors.push({ fact, choice: { candidates: [current] } });
          this.#pending.push(current);
        }
        continue;
      }
      const { candidates, current } = found;
      this.#subCandidates.set(sub.name, { sub, candidates, current });
      const fact = this.#facts.add({ kind: 'subscription', subscription: sub, candidates });
      this.#solver.addClause([negate(fact.guard), ...candidates.map((c) => positive(c.v))]);
      if (current !== null) {
        for (const c of candidates) {
          if (c !== current)
            this.#solver.addClause([negate(fact.guard), negative(c.v), negative(current.v)]);
        }
        const keep = this.#facts.add(
          { kind: 'kept', variable: current, subscription: sub.name },
          false,
        );
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
      if (this.#solver.solve(this.#facts.assumptions())) break;
      const core = this.#facts.minimalCore();
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
    const bundles = resolvedBundles(picked, {
      catalogs: input.catalogs,
      existing: this.#variables.existing,
      subscriptions: [...this.#subCandidates.values()],
      problems: this.#problems,
    });
    this.#warnings.push(...installModeWarnings(bundles, input.operatorGroups));
    return this.#result(bundles, this.#problems);
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

  #context(): ExplainContext {
    return { namespace: this.#input.namespace, catalogs: this.#input.catalogs };
  }

  #expandAll(): void {
    while (this.#pending.length > 0) {
      const v = this.#pending.pop() as BundleVariable;
      if (this.#expanded.has(v)) continue;
      this.#expanded.add(v);
      const { dependencies, error, deprecated } = dependenciesOf(v);
      if (error !== null) {
        const fact = this.#facts.add({
          kind: 'prohibited',
          variable: v,
          why: `bundle ${v.name} has an unusable dependency: ${error}`,
        });
        this.#solver.addClause([negate(fact.guard), negative(v.v)]);
        continue;
      }
      if (deprecated) {
        const fact = this.#facts.add({
          kind: 'prohibited',
          variable: v,
          why: `bundle ${v.name} is deprecated`,
        });
        this.#solver.addClause([negate(fact.guard), negative(v.v)]);
      }
      const list: { dependency: Dependency; providers: BundleVariable[] }[] = [];
      for (const dependency of dependencies) {
        const providers = this.#providers.of(dependency.predicate, v);
        list.push({ dependency, providers });
        const fact = this.#facts.add({ kind: 'dependency', variable: v, dependency, providers });
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

  #addInvariants(): void {
    const byPackage = new Map<string, BundleVariable[]>();
    const byApi = new Map<string, { api: ApiFact; vars: BundleVariable[] }>();
    for (const v of this.#variables.values()) {
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
      const fact = this.#facts.add({ kind: 'package', packageName: pkg, variables: vars });
      this.#solver.addAtMostOne(
        vars.map((v) => v.v),
        fact.guard,
      );
    }
    for (const { api, vars } of byApi.values()) {
      // Providers all from one package are already bound by that package's rule.
      const first = vars[0]?.package ?? null;
      if (vars.length < 2 || (first !== null && vars.every((v) => v.package === first))) continue;
      const fact = this.#facts.add({ kind: 'api', api, variables: vars });
      this.#solver.addAtMostOne(
        vars.map((v) => v.v),
        fact.guard,
      );
    }
  }

  // ---- preference-ordered search ---------------------------------------------------------

  #search(anchors: readonly { fact: Fact; choice: Choice }[]): Set<BundleVariable> {
    const base = this.#facts.assumptions();
    const picks: BundleVariable[] = [];
    const picked = new Set<BundleVariable>();
    const model = (v: BundleVariable): boolean => this.#solver.value(v.v);
    // The solver's last model satisfies base ∧ picks (invariant).
    if (!this.#solver.solve(base)) throw new Error('resolver: facts became unsatisfiable');
    let witness = new Set<number>();
    const snapshot = (): void => {
      witness = new Set();
      for (const v of this.#variables.values()) if (model(v)) witness.add(v.v);
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
}

export { describePredicate, formatApi };
