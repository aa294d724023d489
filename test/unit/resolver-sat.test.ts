// The resolver's SAT solver against brute force on random small problems: same satisfiability,
// models that satisfy every constraint, and unsat cores that are really unsatisfiable.
import t from 'tap';
import { SatSolver, negate, negative, positive, type Literal } from '../../shared/resolver/sat.js';

/** A deterministic pseudo-random generator (mulberry32), so failures reproduce. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

interface Problem {
  vars: number;
  clauses: Literal[][];
  amos: { vars: number[]; guard: Literal }[];
}

function holds(
  p: Problem,
  value: (v: number) => boolean,
  assumptions: readonly Literal[],
): boolean {
  const lit = (l: Literal): boolean => value(l >> 1) === ((l & 1) === 0);
  return (
    assumptions.every(lit) &&
    p.clauses.every((c) => c.some(lit)) &&
    p.amos.every((a) => !lit(a.guard) || a.vars.filter((v) => value(v)).length <= 1)
  );
}

function bruteForce(p: Problem, assumptions: readonly Literal[]): boolean {
  for (let mask = 0; mask < 1 << p.vars; mask++) {
    if (holds(p, (v) => ((mask >> v) & 1) === 1, assumptions)) return true;
  }
  return false;
}

function randomProblem(rand: () => number): Problem {
  const vars = 3 + Math.floor(rand() * 8);
  const pick = (): number => Math.floor(rand() * vars);
  const clauses: Literal[][] = [];
  const n = Math.floor(rand() * vars * 2);
  for (let i = 0; i < n; i++) {
    const size = 1 + Math.floor(rand() * 3);
    const c: Literal[] = [];
    for (let k = 0; k < size; k++) c.push(rand() < 0.5 ? positive(pick()) : negative(pick()));
    clauses.push(c);
  }
  const amos: { vars: number[]; guard: Literal }[] = [];
  const m = Math.floor(rand() * 3);
  for (let i = 0; i < m; i++) {
    amos.push({ vars: [...new Set([pick(), pick(), pick()])], guard: positive(pick()) });
  }
  return { vars, clauses, amos };
}

t.test('sat - agrees with brute force, models hold, cores are unsatisfiable', (t) => {
  const rand = random(42);
  let sat = 0;
  let unsat = 0;
  for (let round = 0; round < 2000; round++) {
    const p = randomProblem(rand);
    const solver = new SatSolver();
    for (let v = 0; v < p.vars; v++) solver.newVariable();
    for (const c of p.clauses) solver.addClause(c);
    for (const a of p.amos) solver.addAtMostOne(a.vars, a.guard);
    // Several solves on one solver: learnt clauses must stay valid across assumptions.
    for (let k = 0; k < 3; k++) {
      const assumptions = [0, 1, 2].map(() =>
        rand() < 0.5
          ? positive(Math.floor(rand() * p.vars))
          : negative(Math.floor(rand() * p.vars)),
      );
      const expected = bruteForce(p, assumptions);
      const got = solver.solve(assumptions);
      if (got !== expected) {
        t.fail(`round ${round}: expected ${expected}, got ${got}`);
        break;
      }
      if (got) {
        sat++;
        if (!holds(p, (v) => solver.value(v), assumptions)) t.fail(`round ${round}: bad model`);
      } else {
        unsat++;
        const core = solver.failedAssumptions();
        if (!core.every((l) => assumptions.includes(l)))
          t.fail(`round ${round}: core not assumptions`);
        if (bruteForce(p, core)) t.fail(`round ${round}: core ${core.join(',')} is satisfiable`);
      }
    }
  }
  t.ok(sat > 100 && unsat > 100, `both outcomes exercised (${sat} sat, ${unsat} unsat)`);
  t.end();
});

t.test('sat - an at-most-one constraint is off while its guard is false', (t) => {
  const s = new SatSolver();
  const [a, b, g] = [s.newVariable(), s.newVariable(), s.newVariable()];
  s.addAtMostOne([a, b], positive(g));
  t.ok(s.solve([positive(a), positive(b), negative(g)]));
  t.notOk(s.solve([positive(a), positive(b), positive(g)]));
  t.same([...s.failedAssumptions()].sort(), [positive(a), positive(b), positive(g)].sort());
  t.end();
});

t.test('sat - a clause made empty at the root makes every solve unsatisfiable', (t) => {
  const s = new SatSolver();
  const a = s.newVariable();
  s.addClause([positive(a)]);
  s.addClause([negate(positive(a))]);
  t.notOk(s.solve([]));
  t.end();
});
