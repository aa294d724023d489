#!/usr/bin/env node
// The layering check behind `npm run lint`: reads the imports of every .ts file under the
// folders below and fails, listing each problem, when
//   - a folder imports one of a higher rank (`roomRanks`; inside shared/, `sharedRanks`): lower
//     layers never import higher ones;
//   - a function's folder imports another function's (functions/<a> → functions/<b>), or
//     functions/index.ts, the table of them all (which alone may import every function);
//   - a file imports its own folder's index.ts (the entry point is for the folder's users);
//   - imports form a cycle (type-only and dynamic imports count too);
//   - a source file outside test/ (and not generated) is over `maxLines` lines;
//   - a file outside shared/bus/ and test/ writes a NATS subject of olmq's by hand (shared/bus/
//     subjects.ts builds every one).
// It warns, without failing, when an index.ts defines private functions or classes: an entry
// point re-exports and wires; logic belongs in a module of its own.
// Today's violations are listed in `allowlist`, each by exact path, so that lint passes while
// the refactors that remove them are in flight; an entry that no longer matches anything is an
// error too, so the list only shrinks.
//
// Plain Node, no dependency beyond the TypeScript compiler the repo builds with.
//   node scripts/check-layers.mjs [repo root]
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** The folders checked, each with its rank: a folder may import only folders of a lower rank. */
export const roomRanks = {
  shared: 0,
  devcluster: 1,
  functions: 1,
  watcher: 1,
  packageserver: 1,
  monitoring: 1,
  system: 2,
  cli: 3,
  test: 4,
  bench: 5,
};

/** The folders of shared/ and their ranks, by the same rule. */
export const sharedRanks = {
  api: 0,
  bus: 0,
  oci: 0,
  kube: 1,
  catalog: 1,
  'operator-group': 2,
  registry: 2,
  resolver: 2,
  handoff: 3,
  'install-plan': 3,
  'registry-access': 2,
  'bundle-image': 3,
  runtime: 4,
};

/** A string or template starting with one of olmq's subjects or a JetStream API subject. */
const handBuiltSubject = /['"`](\$KV\.|\$JS\.|olmq\.work\.|olmq\.dead\.|olmq\.obj\.)/;

/** Longest a source file may be, outside test/ and generated code. */
export const maxLines = 500;

/**
 * Today's violations, each to be removed with the change that fixes it. Entries name exact
 * paths: { rule, from, to } for an import, { rule: 'size', file }, { rule: 'cycle', files }.
 */
export const allowlist = [];

/**
 * The relative imports of one TypeScript source: static, re-exports, `import()` calls and
 * `import('…')` types, type-only ones included.
 */
export function importsOf(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found = [];
  const add = (node) => {
    if (node !== undefined && ts.isStringLiteralLike(node)) found.push(node.text);
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference)
    )
      add(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      add(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  const privateDefinitions = source.statements
    .filter((s) => ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s))
    .filter((s) => !(ts.getCombinedModifierFlags(s) & ts.ModifierFlags.Export))
    .map((s) => s.name?.text ?? '(anonymous)');
  return { specifiers: found.filter((s) => s.startsWith('.')), privateDefinitions };
}

/** The repo path `specifier` (relative) names from `from`, mapped to its .ts source when known. */
function resolveImport(from, specifier, sources) {
  const target = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = target.endsWith('.js')
    ? [`${target.slice(0, -3)}.ts`, target]
    : [target, `${target}.ts`, `${target}/index.ts`];
  return candidates.find((c) => sources.has(c)) ?? candidates[0];
}

function lineCount(text) {
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

const generatedMarker = /^\/\/ Code generated .* DO NOT EDIT\.?$|@generated\b/m;

/** Whether `path` is generated code (a marker in its first lines). */
function isGenerated(text) {
  return generatedMarker.test(text.split('\n').slice(0, 5).join('\n'));
}

/** The function folder of a path under functions/ ('' for files beside functions/index.ts). */
function functionFolder(path) {
  const parts = path.split('/');
  return parts.length > 2 ? (parts[1] ?? '') : '';
}

/** Why `from` may not import `to`, or undefined when it may. */
function importProblem(from, to) {
  const [fromRoom = '', fromSub = ''] = from.split('/');
  const [toRoom = '', toSub = ''] = to.split('/');
  if (fromRoom !== toRoom) {
    const fromRank = roomRanks[fromRoom];
    const toRank = roomRanks[toRoom];
    if (toRank === undefined)
      return { rule: 'layer', why: `${toRoom}/ is not a layer of the code (see roomRanks)` };
    if (fromRank !== undefined && toRank >= fromRank)
      return {
        rule: 'layer',
        why: `${fromRoom}/ (rank ${fromRank}) may not import ${toRoom}/ (rank ${toRank})`,
      };
    return undefined;
  }
  if (fromRoom === 'shared' && fromSub !== toSub) {
    const fromRank = sharedRanks[fromSub];
    const toRank = sharedRanks[toSub];
    if (fromRank === undefined || toRank === undefined) {
      const unranked = fromRank === undefined ? fromSub : toSub;
      return { rule: 'layer', why: `shared/${unranked} has no rank (see sharedRanks)` };
    }
    if (toRank >= fromRank)
      return {
        rule: 'layer',
        why: `shared/${fromSub} (rank ${fromRank}) may not import shared/${toSub} (rank ${toRank})`,
      };
    return undefined;
  }
  if (fromRoom === 'functions' && from !== 'functions/index.ts') {
    if (to === 'functions/index.ts')
      return { rule: 'function-imports-function', why: 'a function imports the table of all' };
    if (functionFolder(from) !== functionFolder(to))
      return { rule: 'function-imports-function', why: "a function imports another's folder" };
  }
  if (posix.dirname(from) === posix.dirname(to) && posix.basename(to) === 'index.ts')
    return { rule: 'own-index', why: "a file imports its own folder's index.ts" };
  return undefined;
}

/** The strongly connected components of more than one file (or a file importing itself). */
function cycles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const connect = (node) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    for (;;) {
      const member = stack.pop();
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return found;
}

/** One cycle through `component`, as a path from its first file back to it. */
function cyclePath(graph, component) {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [];
        for (let at = node; at !== undefined; at = previous.get(at)) path.unshift(at);
        return [...path, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [...component, start];
}

/**
 * Checks `sources` (repo-relative path → text) against every rule. Returns the violations, each
 * with its rule, the paths that identify it and a message, and the warnings.
 */
export function checkLayers(sources) {
  const violations = [];
  const warnings = [];
  const graph = new Map();
  const seen = new Set();
  for (const [from, text] of [...sources].sort(([a], [b]) => a.localeCompare(b))) {
    const { specifiers, privateDefinitions } = importsOf(from, text);
    const edges = new Set();
    graph.set(from, edges);
    for (const specifier of specifiers) {
      const to = resolveImport(from, specifier, sources);
      if (to.startsWith('..')) continue; // outside the repo: not ours to judge
      if (sources.has(to)) edges.add(to);
      const problem = importProblem(from, to);
      const key = `${problem?.rule} ${from} ${to}`;
      if (problem === undefined || seen.has(key)) continue;
      seen.add(key);
      violations.push({
        rule: problem.rule,
        from,
        to,
        message: `${from} imports ${to}: ${problem.why}`,
      });
    }
    if (!from.startsWith('test/') && !isGenerated(text)) {
      const lines = lineCount(text);
      if (lines > maxLines)
        violations.push({
          rule: 'size',
          file: from,
          message: `${from} has ${lines} lines (at most ${maxLines}): split it`,
        });
    }
    if (!from.startsWith('shared/bus/') && !from.startsWith('test/')) {
      const subject = handBuiltSubject.exec(text);
      if (subject !== null)
        violations.push({
          rule: 'subject',
          file: from,
          message: `${from} writes the subject ${subject[1]}… by hand: build it with shared/bus/subjects.ts`,
        });
    }
    if (posix.basename(from) === 'index.ts' && privateDefinitions.length > 0)
      warnings.push(
        `${from} defines ${privateDefinitions.join(', ')}: an index.ts re-exports and wires; move logic to a module of its own`,
      );
  }
  for (const component of cycles(graph))
    violations.push({
      rule: 'cycle',
      files: component,
      message: `import cycle of ${component.length} files: ${cyclePath(graph, component).join(' → ')}`,
    });
  return { violations, warnings };
}

function sameEntry(entry, violation) {
  if (entry.rule !== violation.rule) return false;
  if (violation.rule === 'size' || violation.rule === 'subject')
    return entry.file === violation.file;
  if (violation.rule === 'cycle')
    return (
      Array.isArray(entry.files) &&
      [...entry.files].sort().join('\n') === violation.files.join('\n')
    );
  return entry.from === violation.from && entry.to === violation.to;
}

/** Splits violations into errors and allowed ones, and finds the allowlist entries that match none. */
export function applyAllowlist(violations, entries) {
  const errors = violations.filter((v) => !entries.some((e) => sameEntry(e, v)));
  const stale = entries.filter((e) => !violations.some((v) => sameEntry(e, v)));
  return { errors, allowed: violations.length - errors.length, stale };
}

/** The folders checked. */
export const checkedRooms = Object.keys(roomRanks);

/** Every .ts file under `rooms` of `root`, by repo-relative path. */
export function readSources(root, rooms = checkedRooms) {
  const sources = new Map();
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
        sources.set(relative(root, path).split(sep).join('/'), readFileSync(path, 'utf8'));
    }
  };
  for (const room of rooms) {
    try {
      walk(join(root, room));
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
  }
  return sources;
}

function describeEntry(entry) {
  if (entry.rule === 'size') return `{ rule: 'size', file: '${entry.file}' }`;
  if (entry.rule === 'cycle') return `{ rule: 'cycle', files: [${entry.files.join(', ')}] }`;
  return `{ rule: '${entry.rule}', from: '${entry.from}', to: '${entry.to}' }`;
}

function main() {
  const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
  const { violations, warnings } = checkLayers(readSources(root));
  const { errors, allowed, stale } = applyAllowlist(violations, allowlist);
  const out = (line) => process.stderr.write(`${line}\n`);
  for (const warning of warnings) out(`layers: warning: ${warning}`);
  for (const error of errors) out(`layers: error: [${error.rule}] ${error.message}`);
  for (const entry of stale)
    out(`layers: error: allowlist entry matches nothing, remove it: ${describeEntry(entry)}`);
  const failed = errors.length + stale.length;
  out(
    `layers: ${failed === 0 ? 'ok' : `${failed} problem(s)`} (${allowed} allowlisted, ${warnings.length} warning(s))`,
  );
  process.exitCode = failed === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  main();
