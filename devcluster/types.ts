// Contract types of the devcluster's public entry (index.ts): how to start one, what a running
// one offers, and the fault hooks of failure tests.
import type { Logger } from 'pino';

/** Options of startDevcluster. */
export interface DevclusterOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Listen address (default 127.0.0.1). */
  host?: string;
  /** Directory for durable storage and certificates; in-memory when absent. */
  dataDir?: string;
  /** Delay before simulated pods become Ready (default 1000 ms; 0 allowed). */
  podReadyDelayMs?: number;
  /** Version reported by /version (default v1.30.6). */
  kubernetesVersion?: string;
  /** Logger (default: silent). */
  logger?: Logger;
  /** Interval of watch bookmarks when clients allow them (default 5000 ms). */
  bookmarkIntervalMs?: number;
  /** How often aggregated APIServices are checked besides on changes (default 10000 ms). */
  apiServiceCheckIntervalMs?: number;
  /**
   * IP families of the service CIDRs, primary first (default `['IPv4']`: single-stack, where
   * `ipFamilyPolicy: RequireDualStack` is refused); `['IPv4', 'IPv6']` makes a dual-stack cluster.
   */
  serviceIPFamilies?: readonly ('IPv4' | 'IPv6')[];
}

/** A running devcluster. */
export interface Devcluster {
  /** https://host:port */
  url: string;
  port: number;
  /** Admin kubeconfig (YAML) with the cluster CA and an admin client certificate; context "olmq-devcluster". */
  kubeconfig(): string;
  /** Writes the admin kubeconfig to a file (mode 0600). */
  writeKubeconfig(path: string): Promise<void>;
  /** Fault injection for failure tests. */
  faults: FaultHooks;
  /** The simulated controllers' clock, which tests move forward (CronJob schedules, Job deadlines). */
  clock: ClockHooks;
  /** Stops serving, ends watches and controllers, flushes storage. */
  close(): Promise<void>;
}

/** The devcluster's clock: wall time plus the offset tests added. */
export interface ClockHooks {
  /** The devcluster's current time (creationTimestamps, conditions and schedules use it). */
  now(): Date;
  /** Moves time forward by `ms` and wakes the time-driven controllers at once. */
  advance(ms: number): void;
}

/** Which object a forced conflict applies to. */
export interface ObjectTarget {
  /** API group, "" for core. */
  group: string;
  /** Plural resource, e.g. "configmaps". */
  resource: string;
  /** "" for cluster-scoped objects. */
  namespace: string;
  name: string;
}

/** Hooks tests use to make the devcluster fail on purpose. */
export interface FaultHooks {
  /** The next `count` writes (update, patch, delete) to the object answer 409 Conflict. */
  conflictNextWrites(target: ObjectTarget, count: number): void;
  /** Forgets the event history: the next watch or list continuation from an older version gets 410 Expired. */
  expireWatches(): void;
  /** Ends every open watch connection now. */
  dropWatches(): void;
}
