// The subset of CEL that olm.constraint `cel` rules use: an expression over `properties` (the
// candidate's [{type, value}] list) with literals, member access, indexing, arithmetic and
// comparison, && || ! ?:, `in`, size(), has(), the macros exists/all/exists_one/filter/map,
// and OLM's semver_compare(a, b). Errors at parse time reject the rule; errors at evaluation
// make the candidate not match (CEL's error value is not true).
import semver from 'semver';

/** A CEL rule that cannot be parsed. */
export class CelParseError extends Error {
  override readonly name = 'CelParseError';
}

class CelEvalError extends Error {}

type Node =
  | { t: 'lit'; v: unknown }
  | { t: 'id'; name: string }
  | { t: 'member'; obj: Node; name: string }
  | { t: 'index'; obj: Node; index: Node }
  | { t: 'call'; name: string; target: Node | null; args: Node[] }
  | { t: 'unary'; op: string; arg: Node }
  | { t: 'binary'; op: string; left: Node; right: Node }
  | { t: 'cond'; test: Node; then: Node; else: Node }
  | { t: 'list'; items: Node[] };

const tokenPattern =
  /\s*(?:(\d+\.\d+(?:[eE][+-]?\d+)?|\d+u?)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|([A-Za-z_][A-Za-z0-9_]*)|(==|!=|<=|>=|&&|\|\||[-+*/%<>!?:.,()[\]{}]))/y;

type Token = { kind: 'num' | 'str' | 'id' | 'op'; text: string };

function tokenize(rule: string): Token[] {
  const out: Token[] = [];
  tokenPattern.lastIndex = 0;
  let at = 0;
  while (at < rule.length) {
    if (/^\s*$/.test(rule.slice(at))) break;
    tokenPattern.lastIndex = at;
    const m = tokenPattern.exec(rule);
    if (m === null)
      throw new CelParseError(`unexpected character at ${at}: ${rule.slice(at, at + 10)}`);
    at = tokenPattern.lastIndex;
    if (m[1] !== undefined) out.push({ kind: 'num', text: m[1] });
    else if (m[2] !== undefined) out.push({ kind: 'str', text: m[2] });
    else if (m[3] !== undefined) out.push({ kind: 'id', text: m[3] });
    else out.push({ kind: 'op', text: m[4] ?? '' });
  }
  return out;
}

class Parser {
  #i = 0;
  constructor(readonly tokens: Token[]) {}

  parse(): Node {
    const node = this.#expr();
    if (this.#i < this.tokens.length)
      throw new CelParseError(`unexpected "${this.tokens[this.#i]?.text ?? ''}"`);
    return node;
  }

  #peek(text: string): boolean {
    const tok = this.tokens[this.#i];
    return tok !== undefined && tok.kind !== 'str' && tok.text === text;
  }

  #take(text: string): boolean {
    if (!this.#peek(text)) return false;
    this.#i++;
    return true;
  }

  #expect(text: string): void {
    if (!this.#take(text)) throw new CelParseError(`expected "${text}"`);
  }

  #expr(): Node {
    const test = this.#binary(0);
    if (!this.#take('?')) return test;
    const then = this.#expr();
    this.#expect(':');
    return { t: 'cond', test, then, else: this.#expr() };
  }

  static readonly levels = [
    ['||'],
    ['&&'],
    ['==', '!=', '<', '<=', '>', '>=', 'in'],
    ['+', '-'],
    ['*', '/', '%'],
  ];

  #binary(level: number): Node {
    if (level >= Parser.levels.length) return this.#unary();
    let left = this.#binary(level + 1);
    for (;;) {
      const op = Parser.levels[level]?.find((o) => this.#peek(o));
      if (op === undefined) return left;
      this.#i++;
      left = { t: 'binary', op, left, right: this.#binary(level + 1) };
    }
  }

  #unary(): Node {
    if (this.#take('!')) return { t: 'unary', op: '!', arg: this.#unary() };
    if (this.#take('-')) return { t: 'unary', op: '-', arg: this.#unary() };
    return this.#member();
  }

  #args(): Node[] {
    const args: Node[] = [];
    if (this.#take(')')) return args;
    do args.push(this.#expr());
    while (this.#take(','));
    this.#expect(')');
    return args;
  }

  #member(): Node {
    let node = this.#primary();
    for (;;) {
      if (this.#take('.')) {
        const tok = this.tokens[this.#i++];
        if (tok?.kind !== 'id')
          throw new CelParseError('expected a field or method name after "."');
        node = this.#take('(')
          ? { t: 'call', name: tok.text, target: node, args: this.#args() }
          : { t: 'member', obj: node, name: tok.text };
      } else if (this.#take('[')) {
        const index = this.#expr();
        this.#expect(']');
        node = { t: 'index', obj: node, index };
      } else {
        return node;
      }
    }
  }

  #primary(): Node {
    const tok = this.tokens[this.#i++];
    if (tok === undefined) throw new CelParseError('unexpected end of rule');
    if (tok.kind === 'num') {
      return {
        t: 'lit',
        v: tok.text.includes('.') ? Number(tok.text) : Number(tok.text.replace(/u$/, '')),
      };
    }
    if (tok.kind === 'str') {
      return {
        t: 'lit',
        v: JSON.parse(
          `"${tok.text.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"')}"`,
        ) as string,
      };
    }
    if (tok.kind === 'id') {
      if (tok.text === 'true' || tok.text === 'false') return { t: 'lit', v: tok.text === 'true' };
      if (tok.text === 'null') return { t: 'lit', v: null };
      if (this.#take('(')) return { t: 'call', name: tok.text, target: null, args: this.#args() };
      return { t: 'id', name: tok.text };
    }
    if (tok.text === '(') {
      const node = this.#expr();
      this.#expect(')');
      return node;
    }
    if (tok.text === '[') {
      const items: Node[] = [];
      if (!this.#take(']')) {
        do items.push(this.#expr());
        while (this.#take(','));
        this.#expect(']');
      }
      return { t: 'list', items };
    }
    throw new CelParseError(`unexpected "${tok.text}"`);
  }
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  throw new CelEvalError('no such overload for comparison');
}

function evaluate(node: Node, env: ReadonlyMap<string, unknown>): unknown {
  switch (node.t) {
    case 'lit':
      return node.v;
    case 'id':
      if (!env.has(node.name)) throw new CelEvalError(`undeclared reference to '${node.name}'`);
      return env.get(node.name);
    case 'list':
      return node.items.map((i) => evaluate(i, env));
    case 'member': {
      const obj = evaluate(node.obj, env);
      if (typeof obj !== 'object' || obj === null || !(node.name in obj))
        throw new CelEvalError(`no such key: ${node.name}`);
      return (obj as Record<string, unknown>)[node.name];
    }
    case 'index': {
      const obj = evaluate(node.obj, env);
      const index = evaluate(node.index, env);
      if (Array.isArray(obj) && typeof index === 'number' && index >= 0 && index < obj.length)
        return obj[index] as unknown;
      if (typeof obj === 'object' && obj !== null && typeof index === 'string' && index in obj)
        return (obj as Record<string, unknown>)[index];
      throw new CelEvalError('invalid index');
    }
    case 'unary': {
      const v = evaluate(node.arg, env);
      if (node.op === '!' && typeof v === 'boolean') return !v;
      if (node.op === '-' && typeof v === 'number') return -v;
      throw new CelEvalError(`no such overload for ${node.op}`);
    }
    case 'cond': {
      const test = evaluate(node.test, env);
      if (typeof test !== 'boolean') throw new CelEvalError('condition is not a bool');
      return evaluate(test ? node.then : node.else, env);
    }
    case 'binary':
      return binary(node, env);
    case 'call':
      return call(node, env);
  }
}

function binary(node: Extract<Node, { t: 'binary' }>, env: ReadonlyMap<string, unknown>): unknown {
  if (node.op === '&&' || node.op === '||') {
    // CEL's commutative logic: an error on one side is absorbed when the other side decides.
    let left: unknown;
    let leftError = false;
    try {
      left = evaluate(node.left, env);
    } catch {
      leftError = true;
    }
    const decided = node.op === '&&' ? false : true;
    if (left === decided) return decided;
    const right = evaluate(node.right, env);
    if (right === decided) return decided;
    if (leftError || typeof left !== 'boolean' || typeof right !== 'boolean')
      throw new CelEvalError('no such overload');
    return right;
  }
  const a = evaluate(node.left, env);
  const b = evaluate(node.right, env);
  switch (node.op) {
    case '==':
      return equal(a, b);
    case '!=':
      return !equal(a, b);
    case '<':
      return compare(a, b) < 0;
    case '<=':
      return compare(a, b) <= 0;
    case '>':
      return compare(a, b) > 0;
    case '>=':
      return compare(a, b) >= 0;
    case 'in':
      if (Array.isArray(b)) return b.some((x) => equal(x, a));
      if (typeof b === 'object' && b !== null && typeof a === 'string') return a in b;
      throw new CelEvalError('no such overload for in');
    case '+':
      if (typeof a === 'number' && typeof b === 'number') return a + b;
      if (typeof a === 'string' && typeof b === 'string') return a + b;
      if (Array.isArray(a) && Array.isArray(b)) return [...(a as unknown[]), ...(b as unknown[])];
      throw new CelEvalError('no such overload for +');
    default: {
      if (typeof a !== 'number' || typeof b !== 'number')
        throw new CelEvalError(`no such overload for ${node.op}`);
      if ((node.op === '/' || node.op === '%') && b === 0)
        throw new CelEvalError('division by zero');
      return node.op === '-'
        ? a - b
        : node.op === '*'
          ? a * b
          : node.op === '/'
            ? Math.trunc(a / b)
            : a % b;
    }
  }
}

const macros = new Set(['exists', 'all', 'exists_one', 'filter', 'map']);

function call(node: Extract<Node, { t: 'call' }>, env: ReadonlyMap<string, unknown>): unknown {
  if (node.target !== null && macros.has(node.name)) {
    const [variable, body] = node.args;
    if (node.args.length !== 2 || variable?.t !== 'id' || body === undefined) {
      throw new CelEvalError(`${node.name} needs a variable and an expression`);
    }
    const list = evaluate(node.target, env);
    if (!Array.isArray(list)) throw new CelEvalError(`${node.name} needs a list`);
    const at = (item: unknown): unknown => evaluate(body, new Map([...env, [variable.name, item]]));
    switch (node.name) {
      case 'exists':
        return list.some((x) => at(x) === true);
      case 'all':
        return list.every((x) => at(x) === true);
      case 'exists_one':
        return list.filter((x) => at(x) === true).length === 1;
      case 'filter':
        return list.filter((x) => at(x) === true);
      default:
        return list.map(at);
    }
  }
  if (node.name === 'has' && node.target === null) {
    const arg = node.args[0];
    if (arg?.t !== 'member') throw new CelEvalError('has() needs a field selection');
    const obj = evaluate(arg.obj, env);
    return typeof obj === 'object' && obj !== null && arg.name in obj;
  }
  const args = node.args.map((a) => evaluate(a, env));
  const target = node.target === null ? undefined : evaluate(node.target, env);
  if (node.name === 'size') {
    const v = target ?? args[0];
    if (typeof v === 'string' || Array.isArray(v)) return v.length;
    if (typeof v === 'object' && v !== null) return Object.keys(v).length;
    throw new CelEvalError('no such overload for size');
  }
  if (node.name === 'semver_compare' && node.target === null) {
    const [a, b] = args.map((x) =>
      typeof x === 'string' ? semver.parse(x, { loose: true }) : null,
    );
    if (a === null || b === null || a === undefined || b === undefined)
      throw new CelEvalError('semver_compare needs two versions');
    return semver.compare(a, b);
  }
  if (node.target !== null && typeof target === 'string') {
    const [s] = args;
    if (typeof s === 'string') {
      if (node.name === 'contains') return target.includes(s);
      if (node.name === 'startsWith') return target.startsWith(s);
      if (node.name === 'endsWith') return target.endsWith(s);
      if (node.name === 'matches') return new RegExp(s).test(target);
    }
  }
  throw new CelEvalError(`unknown function ${node.name}`);
}

/** A parsed rule. */
export interface CelProgram {
  /** The rule's text. */
  readonly rule: string;
  /** True when the rule evaluates to true over these properties; errors count as false. */
  matches(properties: readonly { type: string; value: unknown }[]): boolean;
}

/** Parses a CEL rule; throws CelParseError. */
export function compileCel(rule: string): CelProgram {
  const ast = new Parser(tokenize(rule)).parse();
  return {
    rule,
    matches(properties) {
      try {
        return evaluate(ast, new Map([['properties', properties]])) === true;
      } catch (error) {
        if (error instanceof CelEvalError) return false;
        throw error;
      }
    },
  };
}
