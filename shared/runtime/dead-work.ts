// What the function host does when a reconcile or a trigger fails: retry with backoff, or give
// up — a dead letter (shared/bus/dead-letters.ts), a metric by reason, an error log line, and the
// definition's giveUp, which says so on the key's object. Never silent.
import type { JsMsg } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { Backbone } from '../bus/backbone.js';
import {
  clearDeadLetter,
  deadLetterReasons,
  publishDeadLetter,
  type DeadLetterReason,
} from '../bus/dead-letters.js';
import type { ObjectRef, WorkKey } from '../bus/subjects.js';
import { isBackboneUnavailable } from '../bus/unavailable.js';
import { recordFailures, type FailureRecord } from '../bus/work-queue.js';
import { isTransientApiFailure, retryAfterOf } from '../kube/errors.js';
import { kubeTime } from '../kube/time.js';
import { backoffDelayMs, type FunctionHostOptions } from './host-options.js';
import type { FunctionMetrics } from './metrics.js';
import type { DeadWork } from './types.js';

/** Errors may say retrying cannot help (bad input that only a person can fix). */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof Error && 'retryable' in error && error.retryable === false);
}

/**
 * What a failure says was unreachable (the Kubernetes API, or NATS), or undefined when the
 * failure is the work's own.
 */
export function unavailableService(error: unknown): 'Kubernetes API' | 'NATS' | undefined {
  if (isTransientApiFailure(error)) return 'Kubernetes API';
  if (isBackboneUnavailable(error)) return 'NATS';
  return undefined;
}

/** How long to wait before retrying work that met an unavailable service. */
export function unavailableRetryDelayMs(
  error: unknown,
  deliveries: number,
  options: FunctionHostOptions,
): number {
  return Math.max(retryAfterOf(error) ?? 0, backoffDelayMs(Math.min(deliveries, 5), options));
}

/** What failure handling needs of its host. */
export interface FailureHost {
  backbone: Backbone;
  /** The queue (definition) whose work failed. */
  queue: string;
  options: FunctionHostOptions;
  metrics: FunctionMetrics;
  /** Sends an ack, nak or term with this turn's other messages. */
  settle: (action: () => void) => void;
}

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

// The next letter of a key counts the redrives that died: one more than the last letter's when
// the key died before with no success between (its record still says dead).
const redrivesAfter = (record: FailureRecord): number =>
  record.dead === true ? (record.redrives ?? 0) + 1 : 0;

/**
 * Settles a failed reconcile of `m`: redelivery after backoff, or — after maxAttempts failures
 * in a row, or at once when the error says retrying cannot help — a dead letter, then the
 * definition's `giveUp` (best effort). The key's record then says it is dead, so its next
 * success clears the letter, and its failures count afresh.
 */
export async function settleFailure(
  host: FailureHost,
  m: JsMsg,
  work: { cluster: string; key: WorkKey; log: Logger; itemKey: string; record: FailureRecord },
  error: unknown,
  giveUp?: (dead: DeadWork) => Promise<void>,
): Promise<void> {
  const { backbone, options, metrics } = host;
  const labels = { cluster: work.cluster, function: host.queue };
  const unavailable = unavailableService(error);
  if (unavailable !== undefined) {
    // The client already retried for its window: wait a little (at most 3.2 s, or as long as
    // Retry-After asks) and try again, without counting a failure: an unreachable API or NATS
    // never dead-letters work.
    const delay = unavailableRetryDelayMs(error, m.info.deliveryCount, options);
    host.settle(() => m.nak(delay));
    metrics.processed.inc({ ...labels, outcome: 'unavailable' });
    metrics.retried.inc(labels);
    work.log.warn(
      { err: error, retryInMs: delay },
      `${unavailable} unavailable; retrying without counting a failure`,
    );
    return;
  }
  const failures = work.record.failures + 1;
  const message = messageOf(error);
  metrics.processed.inc({ ...labels, outcome: 'failure' });
  const permanent = !isRetryable(error);
  if (failures < options.maxAttempts && !permanent) {
    const delay = backoffDelayMs(failures, options);
    await recordFailures(backbone, work.itemKey, { ...work.record, failures, lastError: message });
    host.settle(() => m.nak(delay));
    metrics.retried.inc(labels);
    work.log.warn(
      { err: error, failures, retryInMs: delay },
      'reconcile failed; retrying with backoff',
    );
    return;
  }
  const reason: DeadLetterReason = permanent
    ? deadLetterReasons.permanent
    : deadLetterReasons.tooManyFailures;
  const redrives = redrivesAfter(work.record);
  await publishDeadLetter(backbone, {
    function: host.queue,
    cluster: work.cluster,
    key: [...work.key],
    reason,
    failures,
    error: message,
    at: kubeTime(options.now(), 'millis'),
    redrives,
  });
  await recordFailures(backbone, work.itemKey, {
    failures: 0,
    lastError: message,
    dead: true,
    redrives,
  });
  host.settle(() => m.term(message));
  metrics.deadLettered.inc({ ...labels, reason });
  work.log.error(
    { err: error, failures, reason, redrives },
    permanent
      ? 'work dead-lettered: the error says retrying cannot help'
      : 'work dead-lettered after repeated failures',
  );
  if (giveUp === undefined) return;
  try {
    await giveUp({ reason, message, error, failures });
  } catch (failure) {
    work.log.warn({ err: failure }, 'could not record the dead work on its object');
  }
}

/**
 * After a success of a key whose record says it died: its dead letter is handled (its object
 * changed, or someone redrove it), so it goes.
 */
export async function clearHandledLetter(
  host: FailureHost,
  work: { cluster: string; key: WorkKey; log: Logger },
): Promise<void> {
  const { purged } = await clearDeadLetter(host.backbone, {
    queue: host.queue,
    cluster: work.cluster,
    key: work.key,
  });
  if (purged === 0) return;
  host.metrics.redriven.inc({ cluster: work.cluster, function: host.queue, cause: 'change' });
  work.log.info('dead work handled: the key reconciled after all');
}

/**
 * Gives up on a change a trigger could not map to work: a dead letter naming the object, which
 * the host's redriver re-runs the trigger for later (redrive.ts).
 */
export async function giveUpOnChange(
  host: FailureHost,
  ref: ObjectRef,
  failure: { error: unknown; failures: number; redrives: number; log: Logger },
): Promise<void> {
  const message = messageOf(failure.error);
  const reason = deadLetterReasons.triggerFailed;
  await publishDeadLetter(host.backbone, {
    function: host.queue,
    cluster: ref.cluster,
    origin: 'trigger',
    key: [ref.kind, ref.namespace, ref.name],
    reason,
    failures: failure.failures,
    error: message,
    at: kubeTime(host.options.now(), 'millis'),
    redrives: failure.redrives,
  });
  host.metrics.deadLettered.inc({ cluster: ref.cluster, function: host.queue, reason });
  failure.log.error(
    { err: failure.error, failures: failure.failures, object: ref },
    'trigger dead-lettered a change after repeated failures',
  );
}
