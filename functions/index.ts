// The functions `olmq run` and `olmq up` can host, loaded lazily so a replica of one function
// never loads another's code. A name maps to undefined until its issue lands.
import type { CreateFunction } from '../shared/runtime/function-module.js';
import type { functionNames } from '../cli/commands.js';

type FunctionName = (typeof functionNames)[number];

export const functionModules: Record<FunctionName, (() => Promise<CreateFunction>) | undefined> = {
  catalog: undefined,
  resolve: undefined,
  plan: undefined,
  install: undefined,
  rbac: async () => (await import('./rbac/index.js')).createFunction,
  'copy-csv': async () => (await import('./copy-csv/index.js')).createFunction,
};
