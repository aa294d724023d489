// The watcher: one active per cluster (leader-elected on a Lease; more replicas are hot
// standbys), mirroring every kind in ./kinds.ts into JetStream. It decides nothing.
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Backbone } from '../shared/bus/backbone.js';
import type { ClusterAccess } from '../shared/kube/clusters.js';
import { KubeClient } from '../shared/kube/client.js';
import { campaign, type LeaderTerm } from '../shared/kube/leader-election.js';
import { createApiRequestCounter, createFencedWriteCounter } from '../shared/runtime/metrics.js';
import { followFencedWrites, recordTerm, type FencedKey } from './fence.js';
import { mirroredKinds, type MirroredKind } from './kinds.js';
import { mirrorKind } from './mirror.js';

/** Options of one cluster's watcher. */
export interface WatcherOptions {
  cluster: ClusterAccess;
  backbone: Backbone;
  log: Logger;
  registry: Registry;
  /** Unique name of this replica. */
  identity: string;
  /** Namespace and name of the Lease; default olmq-system / olmq-watcher. */
  leaseNamespace: string;
  leaseName: string;
  leaseDurationSeconds: number;
  /** Kinds to mirror; default all of ./kinds.ts. */
  kinds?: readonly MirroredKind[];
  /** A watch without an event or bookmark for this long is resumed; default 150 s. */
  stallTimeoutMs?: number | undefined;
  /** How often every kind is listed again and differences mirrored; default 6 h, 0 never. */
  resyncMs?: number | undefined;
  /** Most mirror publishes of one kind unacknowledged at once; default 256. */
  maxInFlight?: number | undefined;
}

/** Default WatcherOptions.resyncMs. */
export const defaultResyncMs = 6 * 3600_000;

/** The watcher's metrics. */
export interface WatcherMetrics {
  published: Counter<'cluster' | 'kind' | 'operation'>;
  leading: Counter<'cluster'>;
  /** 1 while this replica is the active watcher of the cluster, 0 while it stands by. */
  isLeader: Gauge<'cluster'>;
  /** Watches resumed after stalling, and periodic resyncs, by kind. */
  watchEvents: Counter<'cluster' | 'kind' | 'event'>;
}

function metricsOf(registry: Registry): WatcherMetrics {
  createFencedWriteCounter(registry);
  const existing = registry.getSingleMetric('olmq_watcher_changes_published_total');
  if (existing !== undefined) {
    return {
      published: existing as WatcherMetrics['published'],
      leading: registry.getSingleMetric('olmq_lease_takeovers_total') as WatcherMetrics['leading'],
      isLeader: registry.getSingleMetric('olmq_watcher_leading') as WatcherMetrics['isLeader'],
      watchEvents: registry.getSingleMetric(
        'olmq_watcher_watch_events_total',
      ) as WatcherMetrics['watchEvents'],
    };
  }
  return {
    published: new Counter({
      name: 'olmq_watcher_changes_published_total',
      help: 'Object changes mirrored into JetStream, by kind and operation.',
      labelNames: ['cluster', 'kind', 'operation'],
      registers: [registry],
    }),
    leading: new Counter({
      name: 'olmq_lease_takeovers_total',
      help: 'Times this replica became the active watcher of a cluster.',
      labelNames: ['cluster'],
      registers: [registry],
    }),
    isLeader: new Gauge({
      name: 'olmq_watcher_leading',
      help: 'Whether this replica is the active watcher of the cluster (1) or a standby (0).',
      labelNames: ['cluster'],
      registers: [registry],
    }),
    watchEvents: new Counter({
      name: 'olmq_watcher_watch_events_total',
      help: 'Watches resumed after stalling (event="stalled") and periodic resyncs (event="resync"), by kind.',
      labelNames: ['cluster', 'kind', 'event'],
      registers: [registry],
    }),
  };
}

/** A running watcher replica. */
export interface Watcher {
  /** Resolves once this replica leads and every kind's first list is mirrored. */
  synced(): Promise<void>;
  /** Whether this replica is the active watcher now. */
  isLeading(): boolean;
  /**
   * Why the mirror is behind: keys whose latest change failed to publish and waits for a
   * retry, with the last error; "" when every change landed.
   */
  publishFailures(): string;
  /**
   * Stops mirroring. The Lease is handed back so a standby takes over at once, unless
   * `releaseLease` is false (then it expires, as after a crash).
   */
  stop(options?: { releaseLease?: boolean }): Promise<void>;
}

/** Starts campaigning; while leading, mirrors the cluster. */
export async function startWatcher(options: WatcherOptions): Promise<Watcher> {
  const { cluster, backbone, identity } = options;
  const log = options.log.child({ cluster: cluster.id, identity });
  const metrics = metricsOf(options.registry);
  const client = await KubeClient.fromKubeConfig(cluster.id, cluster.kubeConfig, {
    userAgent: 'olmq-watcher',
    requests: createApiRequestCounter(options.registry),
  });
  const stop = new AbortController();
  let leading = false;
  let releaseLease = true;
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));

  let mirrors: ReturnType<typeof mirrorKind>[] = [];
  const labels = { cluster: cluster.id };
  metrics.isLeader.set(labels, 0); // a standby reports too, so "no leader" is visible
  const lead = async (leadership: AbortSignal, term: LeaderTerm): Promise<void> => {
    // The epoch is recorded before anything is written: from then on readers refuse the
    // writes of earlier terms (shared/bus/fencing.ts).
    const recordedAt = await recordTerm(
      backbone,
      cluster.id,
      { epoch: term.epoch, holder: identity },
      leadership,
      log,
    );
    if (recordedAt === undefined) return; // the term ended first
    leading = true;
    metrics.isLeader.set(labels, 1);
    const repair = (key: FencedKey): void => {
      const mirror = mirrors.find((m) => m.kind.kind === key.kind);
      if (key.what === 'names') mirror?.repairNames(key.namespace);
      else mirror?.repair(key.namespace, key.name, key.seq);
    };
    const fenceFollower = await followFencedWrites(
      backbone,
      cluster.id,
      term.epoch,
      recordedAt + 1,
      repair,
      log,
    );
    mirrors = (options.kinds ?? mirroredKinds).map((kind) =>
      mirrorKind(
        {
          cluster: cluster.id,
          kubeConfig: cluster.kubeConfig,
          client,
          backbone,
          log,
          published: metrics.published,
          watchEvents: metrics.watchEvents,
          stallTimeoutMs: options.stallTimeoutMs,
          resyncMs: options.resyncMs ?? defaultResyncMs,
          maxInFlight: options.maxInFlight,
          epoch: term.epoch,
          current: term.current,
        },
        kind,
      ),
    );
    void Promise.all(mirrors.map((m) => m.synced)).then(() => {
      log.info({ kinds: mirrors.length }, 'mirror synced');
      markSynced();
    });
    await new Promise<void>((resolve) =>
      leadership.addEventListener('abort', () => resolve(), { once: true }),
    );
    fenceFollower.stop();
    for (const m of mirrors) m.stop();
    mirrors = [];
    leading = false;
    metrics.isLeader.set(labels, 0);
  };

  const running = campaign(
    client,
    {
      namespace: options.leaseNamespace,
      name: options.leaseName,
      identity,
      leaseDurationSeconds: options.leaseDurationSeconds,
      renewIntervalMs: (options.leaseDurationSeconds * 1000) / 3,
      retryIntervalMs: Math.max(200, (options.leaseDurationSeconds * 1000) / 5),
      releaseOnStop: () => releaseLease,
    },
    lead,
    log,
    stop.signal,
    () => metrics.leading.inc(labels),
  );

  return {
    synced: () => synced,
    isLeading: () => leading,
    publishFailures() {
      let failing = 0;
      let lastError: string | undefined;
      for (const m of mirrors) {
        failing += m.failing();
        lastError ??= m.lastError();
      }
      if (failing === 0) return '';
      return `${failing} mirror publish(es) failing, retrying (last error: ${lastError ?? 'unknown'})`;
    },
    async stop(stopOptions = {}) {
      releaseLease = stopOptions.releaseLease ?? true;
      // A renewal retrying against an API server that is gone must not hold the stop up; the
      // lease release tries once, bounded (leader-election.ts).
      client.endRetries();
      stop.abort();
      await running;
      client.close();
    },
  };
}
