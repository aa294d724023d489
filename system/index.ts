// Public entry point of system/: olmq's parts wired into one process (startSystem), and the
// pieces of that wiring the single-part commands share (`olmq run`, `olmq watcher`, ...).
export { startSystem } from './start.js';
export type { FunctionSettings, System, SystemOptions, WatcherSettings } from './types.js';
export {
  clientsFor,
  drainGraceMs,
  startFunctions,
  stopFunctions,
  UnknownFunctionError,
  type FunctionTable,
} from './functions.js';
export { connectNats, natsProblem, NatsConnectError, type NatsConnectionSettings } from './nats.js';
