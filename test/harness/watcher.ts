// Test fixture: a watcher mirroring a devcluster into the backbone, as `olmq watcher` runs one.
import { Registry } from 'prom-client';
import type { Test } from 'tap';
import { startWatcher, type Watcher, type WatcherOptions } from '../../watcher/index.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import type { InjectedFault } from '../../devcluster/index.js';
import type { ClusterFixture } from './devcluster.js';
import { capturingLogger } from './log.js';
import { waitFor } from './wait.js';

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

/**
 * Makes the watcher's watch of `resource` ("group/plural", or the plural of the core group) go
 * quiet: what is written to it now stays out of the mirror until the returned fault is ended.
 */
export async function stallWatcherWatch(
  fixture: ClusterFixture,
  resource: string,
): Promise<InjectedFault> {
  const stall = fixture.cluster.faults.inject({
    verbs: ['watch'],
    resources: [resource],
    action: { kind: 'stall' },
  });
  fixture.cluster.faults.dropWatches();
  await waitFor(`the watch of ${resource} to stall`, () => stall.hits >= 1, 15_000);
  return stall;
}
