// Contract types of the devcluster's public entry (index.ts): how to start one, what a running
// one offers, and the fault hooks of failure tests.
import type { FaultAction } from './server/http/types.js';
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
  /** Ends every open watch connection now (and every stalled one). */
  dropWatches(): void;
  /**
   * Makes the API requests `rule` matches fail (429 with Retry-After, 500, 503), answer late,
   * lose their connection or (watches) stall, for `rule.forMs` or `rule.count` requests, or
   * until `end()`.
   */
  inject(rule: FaultRule): InjectedFault;
  /** Ends every injected fault (stalled watches are let go). */
  clearFaults(): void;
  /**
   * Rotates a ServiceAccount's token: every token of the account issued until now is refused
   * from now on; returns a fresh one (valid a year).
   */
  rotateServiceAccountToken(namespace: string, name: string): string;
}

/** What an injected fault does to the requests it matches. */
export type { FaultAction } from './server/http/types.js';

/** Which requests an injected fault applies to, what it does, and for how long. */
export interface FaultRule {
  /** Authorizer verbs (get, list, watch, create, update, patch, delete, deletecollection); all when absent. */
  verbs?: readonly string[];
  /** Plural resources, as "configmaps" (any group) or "apps/deployments"; all when absent. */
  resources?: readonly string[];
  /** Namespaces ("" for cluster-scoped requests); all when absent. */
  namespaces?: readonly string[];
  /** Only requests whose User-Agent starts with this (e.g. "olmq-install"). */
  userAgent?: string;
  action: FaultAction;
  /** The window: the fault ends this long after inject(). */
  forMs?: number;
  /** The fault ends after this many requests. */
  count?: number;
}

/** A fault injected with inject(). */
export interface InjectedFault {
  /** Requests it has hit so far. */
  readonly hits: number;
  /** Whether it still applies. */
  readonly active: boolean;
  /** Ends it now. */
  end(): void;
}
