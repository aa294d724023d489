// The work queue's plumbing, behind named operations: the consumers of a queue and of its
// triggers, work items and follow-ups, leases (which replica works a key), failure records
// (consecutive failures per key); dead letters are dead-letters.ts'. The function host (shared/runtime) decides
// when to call them; this file knows how they sit on JetStream (see subjects.ts for the layout
// and backbone.ts for the assets).
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  type Consumer,
  type ConsumerMessages,
} from '@nats-io/jetstream';
import { KvWatchInclude } from '@nats-io/kv';
import type { Backbone } from './backbone.js';
import { JetStreamPublishError, wrongLastSequence, type PublishAck } from './pipe.js';
import {
  assets,
  encodeToken,
  kvStream,
  leaseSubject,
  mirrorKindFilter,
  mirrorStream,
  streamMessageDeleteSubject,
  workFilter,
  workItemKeyFilter,
  workSubject,
  type WorkKey,
} from './subjects.js';

const nanos = (ms: number): number => ms * 1_000_000;

/**
 * Durable name of the work consumer of `queue`: of its items in `cluster`, shared by every replica
 * of every pool serving that cluster; without a cluster, the one consumer of every cluster's items
 * (hosts given no cluster set, and olmq before pools).
 */
export const workConsumerName = (queue: string, cluster?: string): string =>
  cluster === undefined ? `${queue}-work` : `${queue}-work-${encodeToken(cluster)}`;

/** Durable name of the consumer that maps changes of `kind` (in `cluster`, or all) to `queue`'s work. */
export const triggerConsumerName = (queue: string, kind: string, cluster?: string): string =>
  cluster === undefined
    ? `${queue}-trigger-${kind}`
    : `${queue}-trigger-${kind}-${encodeToken(cluster)}`;

/** One consumer of the work queue, for backlog metrics. */
export interface QueueConsumer {
  stream: string;
  name: string;
}

/** Where a queue's consumers read: one cluster's subjects, or every cluster's. */
export interface ConsumerScope {
  /** The cluster; undefined for every cluster. */
  cluster?: string | undefined;
  /** The queue's keys have no words (see workFilter). */
  wordless?: boolean | undefined;
  /**
   * The server deletes the consumer after this long without a pull (a cluster no pool serves
   * any more); 0 or absent: never. A consumer deleted this way is created again, from the start
   * of its stream, by the next pool that serves the cluster.
   */
  inactiveMs?: number | undefined;
}

const inactivity = (scope: ConsumerScope) =>
  scope.inactiveMs === undefined || scope.inactiveMs <= 0
    ? {}
    : { inactive_threshold: nanos(scope.inactiveMs) };

// The consumer just added. On a cluster a new replicated consumer may answer "JetStream system
// temporarily unavailable" (503) for a moment after its creation, or while its leader is being
// elected after a failover: that is retried for a while instead of failing the start.
async function consumerAdded(backbone: Backbone, stream: string, name: string): Promise<Consumer> {
  const deadline = Date.now() + 15_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await backbone.js.consumers.get(stream, name);
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.status === 503) || Date.now() > deadline)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 100 * attempt)));
    }
  }
}

/** Creates (idempotently) the work consumer of `queue` in `scope` and starts pulling `concurrency` at once. */
export async function consumeWork(
  backbone: Backbone,
  queue: string,
  options: { ackWaitMs: number; concurrency: number } & ConsumerScope,
): Promise<{ consumer: QueueConsumer; messages: ConsumerMessages }> {
  const added = await addWorkConsumer(backbone, queue, options);
  const consumer = await consumerAdded(backbone, added.stream, added.name);
  const messages = await consumer.consume({ max_messages: options.concurrency });
  return { consumer: added, messages };
}

/** Creates (idempotently) the work consumer of `queue` in `scope`, without consuming. */
export async function addWorkConsumer(
  backbone: Backbone,
  queue: string,
  options: { ackWaitMs: number } & ConsumerScope,
): Promise<QueueConsumer> {
  const name = workConsumerName(queue, options.cluster);
  await backbone.jsm.consumers.add(assets.workStream, {
    durable_name: name,
    filter_subject: workFilter(queue, options.cluster, options.wordless),
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(options.ackWaitMs),
    max_deliver: -1,
    max_ack_pending: 10_000,
    ...inactivity(options),
  });
  return { stream: assets.workStream, name };
}

/**
 * Removes the all-cluster consumers of `queue` left by olmq before pools: OLMQ_WORK is a
 * work-queue stream, which refuses a per-cluster consumer while one over every cluster exists.
 * Returns the names it removed.
 */
export async function removeAllClusterConsumers(
  backbone: Backbone,
  queue: string,
  kinds: readonly string[],
): Promise<string[]> {
  const removed: string[] = [];
  const targets = [
    { stream: assets.workStream, name: workConsumerName(queue) },
    ...kinds.map((kind) => ({ stream: mirrorStream, name: triggerConsumerName(queue, kind) })),
  ];
  for (const { stream, name } of targets) {
    try {
      if (await backbone.jsm.consumers.delete(stream, name)) removed.push(name);
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.status === 404)) throw error;
    }
  }
  return removed;
}

/**
 * Creates (idempotently) the consumer of the mirror's changes of `kind` in `scope` for `queue`,
 * and starts it.
 */
export async function consumeChanges(
  backbone: Backbone,
  queue: string,
  kind: string,
  options: { ackWaitMs: number; window: number } & ConsumerScope,
): Promise<{ consumer: QueueConsumer; messages: ConsumerMessages }> {
  const name = triggerConsumerName(queue, kind, options.cluster);
  await backbone.jsm.consumers.add(mirrorStream, {
    durable_name: name,
    filter_subject: mirrorKindFilter(kind, options.cluster),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(options.ackWaitMs),
    // Unbounded here: the trigger loop bounds its retries itself and dead-letters the change
    // (a server-side limit would drop it without a trace).
    max_deliver: -1,
    ...inactivity(options),
  });
  const consumer = await consumerAdded(backbone, mirrorStream, name);
  const messages = await consumer.consume({ max_messages: options.window });
  return { consumer: { stream: mirrorStream, name }, messages };
}

/** Pending and unacknowledged messages of each consumer. */
export function backlogOf(
  backbone: Backbone,
  consumers: readonly QueueConsumer[],
): Promise<{ consumer: string; pending: number; inFlight: number }[]> {
  return Promise.all(
    consumers.map(async ({ stream, name }) => {
      const info = await backbone.jsm.consumers.info(stream, name);
      return { consumer: name, pending: info.num_pending, inFlight: info.num_ack_pending };
    }),
  );
}

/**
 * Publishes a work item for `key` of `queue` in `cluster`. The stream keeps one pending item per
 * subject, so items for a key that is already waiting coalesce. `msgID` de-duplicates a
 * publish repeated within JetStream's window.
 */
export function publishWork(
  backbone: Backbone,
  item: { queue: string; cluster: string; key: WorkKey },
  msgID: string,
): Promise<PublishAck> {
  return backbone.pipe.publish(workSubject(item.queue, item.cluster, item.key), undefined, {
    msgID,
  });
}

/**
 * Publishes a decision's follow-up work for `cluster`, `batch` items at once. Ids are `origin`
 * (naming the item, its delivery and the pass) and the item's index, so a publish repeated
 * within one pass is stored once, and a later pass or delivery, decided on newer state, always
 * gets its items through.
 */
export async function enqueue(
  backbone: Backbone,
  origin: string,
  target: { cluster: string; batch: number },
  items: readonly { queue: string; key: WorkKey }[] | undefined,
): Promise<void> {
  if (items === undefined) return;
  for (let i = 0; i < items.length; i += target.batch) {
    await Promise.all(
      items
        .slice(i, i + target.batch)
        .map((item, j) =>
          publishWork(backbone, { ...item, cluster: target.cluster }, `${origin}#${i + j}`),
        ),
    );
  }
}

/**
 * Takes the lease of a work item for `holder`, returning its revision; throws when another
 * replica holds it. A publish that the stream stores only while the key has no entry: releases
 * delete the entry's message, so the key is normally empty. If it holds a delete marker (a lease
 * removed by hand with a KV delete) the KV client's create handles it.
 */
export async function takeLease(
  backbone: Backbone,
  itemKey: string,
  holder: string,
): Promise<number> {
  try {
    const ack = await backbone.pipe.publish(leaseSubject(itemKey), holder, {
      expectLastSubjectSequence: 0,
    });
    return ack.seq;
  } catch (error) {
    if (!(error instanceof JetStreamPublishError) || error.errCode !== wrongLastSequence)
      throw error;
    return backbone.leases.create(itemKey, holder);
  }
}

/** Renews a lease we hold at `revision`; throws when another replica took it over. */
export function renewLease(
  backbone: Backbone,
  itemKey: string,
  holder: string,
  revision: number,
): Promise<number> {
  return backbone.leases.update(itemKey, holder, revision);
}

/**
 * Removes our lease entry by its sequence, and nobody reads the answer: the item is settled, so
 * nothing depends on it, and if NATS is unreachable the TTL frees the lease. Deleting the message
 * (rather than a KV delete, which leaves a delete marker) keeps the key empty, so the next lease
 * on it is one create. By sequence, it can only ever remove our own lease: after a takeover the
 * entry has another sequence and the delete finds nothing.
 */
export function releaseLease(backbone: Backbone, revision: number): void {
  backbone.pipe.sendRequest(
    streamMessageDeleteSubject(kvStream(assets.leases)),
    JSON.stringify({ seq: revision, no_erase: true }),
  );
}

/** A key's consecutive failures, and the last error. */
export interface FailureRecord {
  failures: number;
  lastError: string;
  /** The key has a dead letter (dead-letters.ts) that its next success clears. */
  dead?: boolean;
  /** How often the key died again after a dead letter, with no success between. */
  redrives?: number;
}

/** The record of a key that has not failed. */
export const noFailures: FailureRecord = { failures: 0, lastError: '' };

/** Reads a key's failure record (noFailures when there is none). */
export async function readFailures(backbone: Backbone, itemKey: string): Promise<FailureRecord> {
  const entry = await backbone.attempts.get(itemKey);
  if (entry === null || entry.operation !== 'PUT' || entry.length === 0) return noFailures;
  return entry.json<FailureRecord>();
}

/** Records a key's consecutive failures. */
export async function recordFailures(
  backbone: Backbone,
  itemKey: string,
  record: FailureRecord,
): Promise<void> {
  await backbone.attempts.put(
    itemKey,
    JSON.stringify({ ...record, lastError: bounded(record.lastError) }),
  );
}

/**
 * Longest error text kept in a failure record or dead letter: a work item's records stay far
 * below any max payload, however long the error (a validation error can quote a whole object).
 */
export const errorTextLimit = 8 * 1024;

/** `text` cut to errorTextLimit. */
export const bounded = (text: string): string =>
  text.length <= errorTextLimit ? text : `${text.slice(0, errorTextLimit)}… (truncated)`;

/** Forgets a key's failures. */
export async function clearFailures(backbone: Backbone, itemKey: string): Promise<void> {
  await backbone.attempts.delete(itemKey);
}

/**
 * Follows which keys of `queue` have failure records: `onChange(key, present)` for every update,
 * then for the records already there. Returns a stop function and the watch's end (it should
 * not end before stop; when it does, callers must assume every key may have a record).
 */
export async function watchFailures(
  backbone: Backbone,
  queue: string,
  onChange: (itemKey: string, present: boolean) => void,
): Promise<{ stop: () => void; ended: Promise<void> }> {
  const filter = workItemKeyFilter(queue);
  const updates = await backbone.attempts.watch({
    key: filter,
    include: KvWatchInclude.UpdatesOnly,
  });
  const ended = (async () => {
    for await (const entry of updates) onChange(entry.key, entry.operation === 'PUT');
  })();
  for await (const key of await backbone.attempts.keys(filter)) onChange(key, true);
  return { stop: () => updates.stop(), ended };
}
