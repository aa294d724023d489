// The watcher: mirrors one cluster's objects into JetStream (see docs/backbone.md).
export { startWatcher } from './watcher.js';
export type { Watcher, WatcherMetrics, WatcherOptions } from './watcher.js';
