// The layering check of `npm run lint` (scripts/check-layers.mjs) on small synthetic trees, so
// that it cannot pass by finding nothing.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { repoRoot } from '../harness/repo.js';

interface Violation {
  rule: string;
  from?: string;
  to?: string;
  file?: string;
  files?: string[];
  message: string;
}

interface AllowlistEntry {
  rule: string;
  from?: string;
  to?: string;
  file?: string;
  files?: string[];
}

interface LayersModule {
  maxLines: number;
  checkLayers(sources: Map<string, string>): { violations: Violation[]; warnings: string[] };
  applyAllowlist(
    violations: Violation[],
    entries: AllowlistEntry[],
  ): { errors: Violation[]; allowed: number; stale: AllowlistEntry[] };
}

const layers = (await import(
  pathToFileURL(join(repoRoot, 'scripts', 'check-layers.mjs')).href
)) as LayersModule;

const check = (files: Record<string, string>) => layers.checkLayers(new Map(Object.entries(files)));
const rules = (violations: Violation[]) => violations.map((v) => v.rule);

t.test('layers - an import cycle is reported, through type-only imports too', (t) => {
  const { violations } = check({
    'shared/api/a.ts': "import type { B } from './b.js';\nexport type A = B;\n",
    'shared/api/b.ts': "import { c } from './c.js';\nexport type B = string;\nc();\n",
    'shared/api/c.ts': "export { a } from './a.js';\nexport function c() {}\n",
    'shared/api/d.ts': "import { c } from './c.js';\nc();\n",
  });
  t.same(rules(violations), ['cycle']);
  t.same(violations[0]?.files, ['shared/api/a.ts', 'shared/api/b.ts', 'shared/api/c.ts']);
  t.match(
    violations[0]?.message,
    /shared\/api\/a\.ts → shared\/api\/b\.ts → shared\/api\/c\.ts → shared\/api\/a\.ts/,
  );
  t.end();
});

t.test('layers - dynamic imports and import() types are edges of the graph', (t) => {
  const { violations } = check({
    'cli/a.ts': "export const load = () => import('./b.js');\n",
    'cli/b.ts': "export type A = import('./a.js').Loaded;\n",
  });
  t.same(rules(violations), ['cycle']);
  t.end();
});

t.test('layers - a lower layer importing a higher one is reported', (t) => {
  const { violations } = check({
    'shared/kube/client.ts': "import { up } from '../../cli/up.js';\nup();\n",
    'shared/kube/executor.ts': "import type { Host } from '../runtime/host.js';\n",
    'shared/runtime/host.ts': "import type { Client } from '../kube/client.js';\n",
    'functions/plan/index.ts': "import { startWatcher } from '../../watcher/index.js';\n",
    'watcher/index.ts': "import { plan } from '../functions/plan/index.js';\n",
    'system/start.ts': "import { startWatcher } from '../watcher/index.js';\n",
    'cli/up.ts': "import { startSystem } from '../system/start.js';\n",
  });
  t.same(
    violations.filter((v) => v.rule === 'layer').map((v) => `${v.from} -> ${v.to}`),
    [
      'functions/plan/index.ts -> watcher/index.ts',
      'shared/kube/client.ts -> cli/up.ts',
      'shared/kube/executor.ts -> shared/runtime/host.ts',
      'watcher/index.ts -> functions/plan/index.ts',
    ],
  );
  t.match(
    violations.find((v) => v.from === 'shared/kube/client.ts')?.message,
    /shared\/ \(rank 0\) may not import cli\/ \(rank 3\)/,
  );
  t.end();
});

t.test('layers - a function importing another function, or the table, is reported', (t) => {
  const { violations } = check({
    'functions/index.ts': "export const table = { rbac: () => import('./rbac/index.js') };\n",
    'functions/rbac/index.ts': "import { isCopy } from '../copy-csv/copy.js';\nisCopy();\n",
    'functions/rbac/names.ts': "import { table } from '../index.js';\nvoid table;\n",
    'functions/rbac/groups.ts': "import { names } from './names.js';\nvoid names;\n",
    'functions/copy-csv/copy.ts': 'export function isCopy() {}\n',
  });
  t.same(
    violations.map((v) => `${v.rule} ${v.from} -> ${v.to}`),
    [
      'function-imports-function functions/rbac/index.ts -> functions/copy-csv/copy.ts',
      'function-imports-function functions/rbac/names.ts -> functions/index.ts',
    ],
  );
  t.end();
});

t.test("layers - a file importing its own folder's index.ts is reported", (t) => {
  const { violations } = check({
    'packageserver/index.ts': "export { serve } from './serving.js';\n",
    'packageserver/serving.ts':
      "import type { Ref } from './index.js';\nexport function serve(r: Ref) {}\n",
    'packageserver/types.ts': 'export interface Ref { name: string }\n',
    'cli/packageserver.ts': "import { serve } from '../packageserver/index.js';\nserve();\n",
  });
  t.same(
    violations.map((v) => `${v.rule} ${v.from ?? ''}`),
    ['own-index packageserver/serving.ts', 'cycle '],
  );
  t.end();
});

t.test(
  'layers - a source file over the size limit is reported, test/ and generated code are not',
  (t) => {
    const long = 'export const x = 1;\n'.repeat(layers.maxLines + 1);
    const atLimit = 'export const x = 1;\n'.repeat(layers.maxLines);
    const { violations } = check({
      'shared/api/long.ts': long,
      'shared/api/at-limit.ts': atLimit,
      'shared/api/generated.ts': `// Code generated by protoc. DO NOT EDIT.\n${long}`,
      'test/unit/long.test.ts': long,
      'bench/long.ts': long,
    });
    t.same(
      violations.map((v) => `${v.rule} ${v.file}`),
      ['size bench/long.ts', 'size shared/api/long.ts'],
    );
    t.match(violations[1]?.message, `shared/api/long.ts has ${layers.maxLines + 1} lines`);
    t.end();
  },
);

t.test('layers - an index.ts defining private functions is a warning, not a violation', (t) => {
  const { violations, warnings } = check({
    'watcher/index.ts':
      'export function startWatcher() {}\nfunction metricsOf() {}\nclass Cache {}\n',
    'watcher/kinds.ts': 'function helper() {}\nexport const kinds = [helper];\n',
  });
  t.same(violations, []);
  t.equal(warnings.length, 1);
  t.match(warnings[0], /^watcher\/index\.ts defines metricsOf, Cache/);
  t.end();
});

t.test('layers - allowlisted violations pass, and an entry matching nothing is stale', (t) => {
  const { violations } = check({
    'functions/rbac/csv.ts': "import { isCopy } from '../copy-csv/copy.js';\nisCopy();\n",
    'functions/copy-csv/copy.ts': 'export function isCopy() {}\n',
    'shared/api/a.ts': "import './b.js';\n",
    'shared/api/b.ts': "import './a.js';\n",
  });
  const entries = [
    {
      rule: 'function-imports-function',
      from: 'functions/rbac/csv.ts',
      to: 'functions/copy-csv/copy.ts',
    },
    { rule: 'cycle', files: ['shared/api/b.ts', 'shared/api/a.ts'] },
    { rule: 'size', file: 'functions/install/csv-lifecycle.ts' },
    {
      rule: 'function-imports-function',
      from: 'functions/rbac/groups.ts',
      to: 'functions/copy-csv/copy.ts',
    },
  ];
  const { errors, allowed, stale } = layers.applyAllowlist(violations, entries);
  t.same(errors, []);
  t.equal(allowed, 2);
  t.same(stale, entries.slice(2));
  // A cycle that grows is no longer the one allowlisted.
  const grown = check({
    'shared/api/a.ts': "import './b.js';\n",
    'shared/api/b.ts': "import './c.js';\n",
    'shared/api/c.ts': "import './a.js';\n",
  });
  t.same(rules(layers.applyAllowlist(grown.violations, entries).errors), ['cycle']);
  t.end();
});

t.test('layers - a subject written by hand outside shared/bus is found', (t) => {
  const { violations } = check({
    'functions/a/index.ts': "export const s = `olmq.work.${'a'}.c1`;\n",
    'watcher/mirror.ts': "export const k = '$KV.olmq_objects.c1';\n",
    'shared/bus/subjects.ts': "export const w = 'olmq.work.>';\n",
    'test/unit/x.test.ts': "export const d = 'olmq.dead.widgets';\n",
  });
  t.same(
    violations.filter((v) => v.rule === 'subject').map((v) => v.file),
    ['functions/a/index.ts', 'watcher/mirror.ts'],
  );
  t.end();
});
