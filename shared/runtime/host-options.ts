// The function host's tunables, their defaults, and the backoff they give.
import { hostname } from 'node:os';
import type { SuperviseOptions } from '../bus/supervised-consumer.js';
import type { Clock } from './types.js';

/** Tunables of the function host. */
export interface FunctionHostOptions {
  /** Work items reconciled at once by this replica. */
  concurrency: number;
  /** Consecutive failures after which a work item is dead-lettered. */
  maxAttempts: number;
  /** Backoff after the first failure; doubles per failure up to maxBackoffMs, with jitter. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** How often a conflicting write re-reads and re-decides before it counts as a failure. */
  staleRetries: number;
  /** Passes one reconcile makes at most while its decisions ask to go `again`. */
  maxPasses: number;
  /** Object changes mapped to work items at once, per trigger. */
  triggerWindow: number;
  /** Objects per trigger whose last looked-at parts are remembered (for Trigger.parts). */
  lastSeenLimit: number;
  /** Delay before retrying a key another replica is working on. */
  contentionDelayMs: number;
  /** How long an unacknowledged item waits before redelivery (a replica died mid-work). */
  ackWaitMs: number;
  /** Unique name of this replica, recorded as lease holder. */
  replicaId: string;
  /** Random source in [0, 1) for jitter; injected for tests. */
  random: () => number;
  /** The clock handed to reconciles (WorkContext.now) and stamped on dead letters. */
  now: Clock;
  /** Follow-up work items published at once (a fan-out to 10,000 namespaces goes in batches). */
  enqueueBatch: number;
  /** How often the host looks for dead letters of its queue due for a redrive. */
  redriveScanMs: number;
  /** Delay before a dead letter's first scheduled redrive; doubles per redrive that died again. */
  firstRedriveDelayMs: number;
  /** Longest delay between scheduled redrives of a key. */
  maxRedriveDelayMs: number;
  /** A reconcile running this long is logged (once) as still running, with its key. */
  slowReconcileMs: number;
  /**
   * A per-cluster consumer is deleted by the server after this long without a pull: the
   * consumers of a cluster no pool serves any more do not pile up. 0: never.
   */
  consumerInactiveMs: number;
  /** How consumes are watched for stalls after NATS failovers (supervised-consumer.ts). */
  consumerSupervision?: Partial<SuperviseOptions>;
}

/** Defaults of FunctionHostOptions. */
export const defaultFunctionHostOptions: FunctionHostOptions = {
  concurrency: 4,
  maxAttempts: 10,
  baseBackoffMs: 200,
  maxBackoffMs: 5 * 60_000,
  staleRetries: 5,
  maxPasses: 5,
  triggerWindow: 256,
  lastSeenLimit: 100_000,
  contentionDelayMs: 250,
  ackWaitMs: 30_000,
  replicaId: `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  random: Math.random,
  now: () => new Date(),
  enqueueBatch: 512,
  redriveScanMs: 30_000,
  firstRedriveDelayMs: 5 * 60_000,
  maxRedriveDelayMs: 6 * 3600_000,
  slowReconcileMs: 120_000,
  consumerInactiveMs: 3600_000,
};

/** Backoff before retry number `failures` (1 = first failure): full jitter over the upper half. */
export function backoffDelayMs(failures: number, options: FunctionHostOptions): number {
  const ceiling = Math.min(
    options.maxBackoffMs,
    options.baseBackoffMs * 2 ** Math.max(0, failures - 1),
  );
  return Math.round(ceiling / 2 + (ceiling / 2) * options.random());
}

/** Delay before the scheduled redrive of a letter that died `redrives` times after redrives. */
export function redriveDelayMs(redrives: number, options: FunctionHostOptions): number {
  return Math.min(options.maxRedriveDelayMs, options.firstRedriveDelayMs * 2 ** redrives);
}
