// The functions of this build: their names and their modules, loaded lazily so a replica of one
// function never loads another's code. `olmq run` and `olmq up` (through system/) host them;
// cli/commands.ts takes the names for `olmq run <function>`.
import type { CreateFunction } from '../shared/runtime/function-module.js';

/** The functions `olmq run` can host, one per OLM concern, in the order `olmq up` starts them. */
export const functionNames = ['catalog', 'resolve', 'plan', 'install', 'rbac', 'copy-csv'] as const;

/** One of functionNames. */
export type FunctionName = (typeof functionNames)[number];

/** Function name → lazy loader of its module. */
export const functionModules: Readonly<Record<FunctionName, () => Promise<CreateFunction>>> = {
  catalog: () => import('./catalog/index.js').then((m) => m.createFunction),
  resolve: () => import('./resolve/index.js').then((m) => m.createFunction),
  plan: () => import('./plan/index.js').then((m) => m.createFunction),
  install: () => import('./install/index.js').then((m) => m.createFunction),
  rbac: () => import('./rbac/index.js').then((m) => m.createFunction),
  'copy-csv': () => import('./copy-csv/index.js').then((m) => m.createFunction),
};
