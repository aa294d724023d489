// Test fixture: a watcher mirroring a devcluster into the backbone, as `olmq watcher` runs one.
import { Registry } from 'prom-client';
import type { Test } from 'tap';
import { startWatcher, type Watcher, type WatcherOptions } from '../../watcher/index.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import type { ClusterFixture } from './devcluster.js';
import { capturingLogger } from './log.js';

/**
 * A watcher of `fixture` as cluster c1 leading Lease olmq-system/olmq-watcher, logging warnings
 * only, every kind mirrored; `options` changes any of that. Stopped at t's teardown.
 */
export async function watcherFor(
  t: Test,
  fixture: ClusterFixture,
  backbone: Backbone,
  options: Partial<Omit<WatcherOptions, 'backbone'>> = {},
): Promise<Watcher> {
  const watcher = await startWatcher({
    cluster: { id: 'c1', kubeConfig: fixture.kubeConfig },
    backbone,
    log: capturingLogger('warn').log,
    registry: new Registry(),
    identity: 'test-watcher',
    leaseNamespace: 'olmq-system',
    leaseName: 'olmq-watcher',
    leaseDurationSeconds: 15,
    ...options,
  });
  t.teardown(() => watcher.stop());
  return watcher;
}
