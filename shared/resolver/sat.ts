// A small incremental CDCL SAT solver, sized for resolution problems (hundreds to a few
// thousand variables, mostly Horn-like clauses).
//
// - Literals are integers: variable v is 2v (true) and 2v+1 (false); `negate(l) = l ^ 1`.
// - Clauses use two watched literals; "at most one of these variables" constraints are native
//   (propagated directly, reasons built on demand) and guarded by an activation literal, so a
//   constraint can be switched off by assuming its guard false.
// - solve(assumptions) decides the assumptions first (one decision level each, as MiniSat
//   does); on UNSAT it reports the subset of assumptions that made the problem unsatisfiable
//   (an unsat core over assumptions). Learnt clauses are implied by the permanent clauses alone,
//   so the solver is reused across calls with different assumptions.
// - Conflict analysis is first-UIP with non-chronological backjumping; decisions follow the
//   order variables were created, with saved phases starting at false (install nothing
//   unless required). Learning guarantees termination.

/** A literal: 2v for variable v true, 2v+1 for v false. */
export type Literal = number;

/** The positive literal of variable v. */
export const positive = (v: number): Literal => v << 1;
/** The negative literal of variable v. */
export const negative = (v: number): Literal => (v << 1) | 1;
/** The opposite literal. */
export const negate = (l: Literal): Literal => l ^ 1;
/** The variable of a literal. */
export const variableOf = (l: Literal): number => l >> 1;

interface Clause {
  readonly lits: Literal[];
}

interface AtMostOne {
  readonly guard: Literal;
  readonly vars: readonly number[];
}

const UNASSIGNED = 0;
const TRUE = 1;
const FALSE = -1;

/** An incremental SAT solver with assumptions, unsat cores and native at-most-one constraints. */
export class SatSolver {
  // Per variable.
  readonly #value: number[] = []; // value of the variable: TRUE, FALSE, UNASSIGNED
  readonly #level: number[] = [];
  readonly #reason: (Clause | null)[] = [];
  readonly #phase: boolean[] = [];
  readonly #seen: boolean[] = [];
  readonly #model: boolean[] = [];
  readonly #amoOfVar: AtMostOne[][] = [];
  readonly #amoOfGuard: AtMostOne[][] = [];
  // Per literal: clauses watching it (visited when it becomes false).
  readonly #watches: Clause[][] = [];
  readonly #trail: Literal[] = [];
  readonly #trailLim: number[] = [];
  #qhead = 0;
  #nextDecision = 0;
  #unsatAtRoot = false;
  #failed: Literal[] = [];
  /** Work counters, for benchmarks. */
  readonly stats = { solves: 0, decisions: 0, conflicts: 0, propagations: 0 };

  /** Number of variables. */
  get variables(): number {
    return this.#value.length;
  }

  /** Creates a variable and returns its index. */
  newVariable(): number {
    const v = this.#value.length;
    this.#value.push(UNASSIGNED);
    this.#level.push(0);
    this.#reason.push(null);
    this.#phase.push(false);
    this.#seen.push(false);
    this.#model.push(false);
    this.#amoOfVar.push([]);
    this.#amoOfGuard.push([]);
    this.#watches.push([], []);
    return v;
  }

  /** Adds a permanent clause (a disjunction of literals). Call between solves only. */
  addClause(lits: readonly Literal[]): void {
    this.#backtrack(0);
    const unique = [...new Set(lits)];
    if (unique.some((l) => unique.includes(negate(l)))) return; // tautology
    const open = unique.filter(
      (l) => this.#litValue(l) !== FALSE || this.#level[variableOf(l)] !== 0,
    );
    if (open.some((l) => this.#litValue(l) === TRUE && this.#level[variableOf(l)] === 0)) return;
    if (open.length === 0) {
      this.#unsatAtRoot = true;
      return;
    }
    if (open.length === 1) {
      const l = open[0] as Literal;
      this.#enqueue(l, null);
      if (this.#propagate() !== null) this.#unsatAtRoot = true;
      return;
    }
    const clause: Clause = { lits: open };
    this.#watch(clause);
  }

  /** Adds "at most one of `vars` is true, while `guard` is true". */
  addAtMostOne(vars: readonly number[], guard: Literal): void {
    this.#backtrack(0);
    const amo: AtMostOne = { guard, vars: [...new Set(vars)] };
    if (amo.vars.length < 2) return;
    for (const v of amo.vars) this.#amoOfVar[v]?.push(amo);
    this.#amoOfGuard[variableOf(guard)]?.push(amo);
    // Members or the guard may already be fixed at the root: propagate the root trail again.
    this.#qhead = 0;
    if (this.#propagate() !== null) this.#unsatAtRoot = true;
  }

  /** Solves under assumptions; true when satisfiable (see value()), false otherwise (see failedAssumptions()). */
  solve(assumptions: readonly Literal[]): boolean {
    this.stats.solves++;
    this.#failed = [];
    this.#backtrack(0);
    if (this.#unsatAtRoot) return false;
    if (this.#propagate() !== null) {
      this.#unsatAtRoot = true;
      return false;
    }
    for (;;) {
      const conflict = this.#propagate();
      if (conflict !== null) {
        this.stats.conflicts++;
        if (this.#trailLim.length === 0) {
          this.#unsatAtRoot = true;
          return false;
        }
        const { learnt, backjump } = this.#analyze(conflict);
        this.#backtrack(backjump);
        if (learnt.length === 1) {
          this.#enqueue(learnt[0] as Literal, null);
        } else {
          const clause: Clause = { lits: learnt };
          this.#watch(clause);
          this.#enqueue(learnt[0] as Literal, clause);
        }
        continue;
      }
      const level = this.#trailLim.length;
      if (level < assumptions.length) {
        const a = assumptions[level] as Literal;
        const value = this.#litValue(a);
        if (value === TRUE) {
          this.#trailLim.push(this.#trail.length); // dummy level keeps levels aligned
          continue;
        }
        if (value === FALSE) {
          this.#failed = this.#analyzeFinal(a);
          this.#backtrack(0);
          return false;
        }
        this.#trailLim.push(this.#trail.length);
        this.#enqueue(a, null);
        continue;
      }
      const next = this.#pickBranch();
      if (next < 0) {
        for (let v = 0; v < this.#value.length; v++) this.#model[v] = this.#value[v] === TRUE;
        this.#backtrack(0);
        return true;
      }
      this.stats.decisions++;
      this.#trailLim.push(this.#trail.length);
      this.#enqueue(this.#phase[next] === true ? positive(next) : negative(next), null);
    }
  }

  /** The value of variable v in the last model. */
  value(v: number): boolean {
    return this.#model[v] === true;
  }

  /** After an unsatisfiable solve: the assumptions that together cannot hold. */
  failedAssumptions(): readonly Literal[] {
    return this.#failed;
  }

  #litValue(l: Literal): number {
    const v = this.#value[variableOf(l)] ?? UNASSIGNED;
    return (l & 1) === 0 ? v : -v;
  }

  #watch(clause: Clause): void {
    this.#watches[clause.lits[0] as Literal]?.push(clause);
    this.#watches[clause.lits[1] as Literal]?.push(clause);
  }

  #enqueue(l: Literal, reason: Clause | null): void {
    const v = variableOf(l);
    this.#value[v] = (l & 1) === 0 ? TRUE : FALSE;
    this.#level[v] = this.#trailLim.length;
    this.#reason[v] = reason;
    this.#trail.push(l);
  }

  #backtrack(level: number): void {
    if (this.#trailLim.length <= level) return;
    const keep = this.#trailLim[level] as number;
    for (let i = this.#trail.length - 1; i >= keep; i--) {
      const l = this.#trail[i] as Literal;
      const v = variableOf(l);
      this.#phase[v] = (l & 1) === 0;
      this.#value[v] = UNASSIGNED;
      this.#reason[v] = null;
      if (v < this.#nextDecision) this.#nextDecision = v;
    }
    this.#trail.length = keep;
    this.#trailLim.length = level;
    this.#qhead = Math.min(this.#qhead, keep);
  }

  #pickBranch(): number {
    while (this.#nextDecision < this.#value.length) {
      if (this.#value[this.#nextDecision] === UNASSIGNED) return this.#nextDecision;
      this.#nextDecision++;
    }
    return -1;
  }

  /** Unit propagation; returns a conflicting clause or null. */
  #propagate(): Clause | null {
    while (this.#qhead < this.#trail.length) {
      const p = this.#trail[this.#qhead++] as Literal;
      this.stats.propagations++;
      const falseLit = negate(p);
      const watchers = this.#watches[falseLit] as Clause[];
      let i = 0;
      let j = 0;
      let conflict: Clause | null = null;
      while (i < watchers.length) {
        const clause = watchers[i++] as Clause;
        const lits = clause.lits;
        if (lits[0] === falseLit) {
          lits[0] = lits[1] as Literal;
          lits[1] = falseLit;
        }
        if (this.#litValue(lits[0] as Literal) === TRUE) {
          watchers[j++] = clause;
          continue;
        }
        let moved = false;
        for (let k = 2; k < lits.length; k++) {
          const l = lits[k] as Literal;
          if (this.#litValue(l) !== FALSE) {
            lits[1] = l;
            lits[k] = falseLit;
            this.#watches[l]?.push(clause);
            moved = true;
            break;
          }
        }
        if (moved) continue;
        watchers[j++] = clause;
        const first = lits[0] as Literal;
        if (this.#litValue(first) === FALSE) {
          conflict = clause;
          while (i < watchers.length) watchers[j++] = watchers[i++] as Clause;
        } else {
          this.#enqueue(first, clause);
        }
      }
      watchers.length = j;
      if (conflict !== null) return conflict;
      const amoConflict = this.#propagateAtMostOne(p);
      if (amoConflict !== null) return amoConflict;
    }
    return null;
  }

  #propagateAtMostOne(p: Literal): Clause | null {
    const v = variableOf(p);
    if ((p & 1) === 0) {
      for (const amo of this.#amoOfVar[v] ?? []) {
        const guard = this.#litValue(amo.guard);
        if (guard === FALSE) continue;
        for (const w of amo.vars) {
          if (w === v) continue;
          const value = this.#value[w];
          if (value === TRUE) {
            if (guard === TRUE) return { lits: [negate(amo.guard), negative(v), negative(w)] };
            this.#enqueue(negate(amo.guard), {
              lits: [negate(amo.guard), negative(v), negative(w)],
            });
            break;
          }
          if (value === UNASSIGNED && guard === TRUE) {
            this.#enqueue(negative(w), { lits: [negative(w), negate(amo.guard), negative(v)] });
          }
        }
      }
    }
    for (const amo of this.#amoOfGuard[v] ?? []) {
      if (p !== amo.guard) continue;
      const trues = amo.vars.filter((w) => this.#value[w] === TRUE);
      const [x, y] = trues;
      if (x === undefined) continue;
      if (y !== undefined) return { lits: [negate(amo.guard), negative(x), negative(y)] };
      for (const w of amo.vars) {
        if (w !== x && this.#value[w] === UNASSIGNED) {
          this.#enqueue(negative(w), { lits: [negative(w), negate(amo.guard), negative(x)] });
        }
      }
    }
    return null;
  }

  /** First-UIP learning: the learnt clause (asserting literal first) and the level to jump to. */
  #analyze(conflict: Clause): { learnt: Literal[]; backjump: number } {
    const learnt: Literal[] = [0];
    const current = this.#trailLim.length;
    let pathCount = 0;
    let p: Literal | null = null;
    let reason: Clause | null = conflict;
    let index = this.#trail.length - 1;
    const marked: number[] = [];
    for (;;) {
      const lits = (reason as Clause).lits;
      for (let k = p === null ? 0 : 1; k < lits.length; k++) {
        const q = lits[k] as Literal;
        const v = variableOf(q);
        if (this.#seen[v] === true || this.#level[v] === 0) continue;
        this.#seen[v] = true;
        marked.push(v);
        if (this.#level[v] === current) pathCount++;
        else learnt.push(q);
      }
      while (this.#seen[variableOf(this.#trail[index] as Literal)] !== true) index--;
      p = this.#trail[index] as Literal;
      index--;
      reason = this.#reason[variableOf(p)] ?? null;
      this.#seen[variableOf(p)] = false;
      pathCount--;
      if (pathCount <= 0) break;
    }
    for (const v of marked) this.#seen[v] = false;
    learnt[0] = negate(p);
    let backjump = 0;
    let at = 1;
    for (let k = 1; k < learnt.length; k++) {
      const level = this.#level[variableOf(learnt[k] as Literal)] as number;
      if (level > backjump) {
        backjump = level;
        at = k;
      }
    }
    if (learnt.length > 1) {
      const tmp = learnt[1] as Literal;
      learnt[1] = learnt[at] as Literal;
      learnt[at] = tmp;
    }
    return { learnt, backjump };
  }

  /** The assumptions (decisions) that imply the negation of assumption `a`, plus `a` itself. */
  #analyzeFinal(a: Literal): Literal[] {
    const out: Literal[] = [a];
    const start = this.#trailLim[0] ?? this.#trail.length;
    const v0 = variableOf(a);
    if (this.#level[v0] === 0) return out;
    this.#seen[v0] = true;
    for (let i = this.#trail.length - 1; i >= start; i--) {
      const l = this.#trail[i] as Literal;
      const v = variableOf(l);
      if (this.#seen[v] !== true) continue;
      const reason = this.#reason[v];
      if (reason === null || reason === undefined) {
        out.push(l);
      } else {
        for (let k = 1; k < reason.lits.length; k++) {
          const u = variableOf(reason.lits[k] as Literal);
          if ((this.#level[u] as number) > 0) this.#seen[u] = true;
        }
      }
      this.#seen[v] = false;
    }
    this.#seen[v0] = false;
    return out;
  }
}
