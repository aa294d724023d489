// The functions `olmq run` and `olmq up` can host, loaded lazily so a replica of one function
// never loads another's code.
import type { CreateFunction } from '../shared/runtime/function-module.js';
import type { FunctionName } from '../cli/commands.js';

export const functionModules: Record<FunctionName, () => Promise<CreateFunction>> = {
  catalog: () => import('./catalog/index.js').then((m) => m.createFunction),
  resolve: () => import('./resolve/index.js').then((m) => m.createFunction),
  plan: () => import('./plan/index.js').then((m) => m.createFunction),
  install: () => import('./install/index.js').then((m) => m.createFunction),
  rbac: () => import('./rbac/index.js').then((m) => m.createFunction),
  'copy-csv': () => import('./copy-csv/index.js').then((m) => m.createFunction),
};
