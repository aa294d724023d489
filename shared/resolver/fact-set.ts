// The facts of one resolution: each rule's guard literal, assumed true while the fact is
// active, and a minimal unsatisfiable subset of them when the active ones conflict.
import type { Fact, FactSpec } from './explain.js';
import { negate, positive, type Literal, type SatSolver } from './sat.js';

/** Every fact of one resolution, in the order declared. */
export class FactSet {
  readonly #solver: SatSolver;
  readonly #facts: Fact[] = [];

  constructor(solver: SatSolver) {
    this.#solver = solver;
  }

  /** Declares a fact with a new guard literal. */
  add(spec: FactSpec, active = true): Fact {
    const guard = positive(this.#solver.newVariable());
    const fact = { ...spec, guard, active } as Fact;
    this.#facts.push(fact);
    return fact;
  }

  /** Each fact's guard, negated when the fact is switched off. */
  assumptions(): Literal[] {
    return this.#facts.map((f) => (f.active ? f.guard : negate(f.guard)));
  }

  /** Deletion-based minimal unsatisfiable subset of the active facts (they must be unsatisfiable). */
  minimalCore(): Fact[] {
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
      if (this.#solver.solve(this.assumptions())) {
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
}
