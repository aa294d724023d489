// The function host: runs one olmq function (declared as data) against the backbone.
//
// How work flows (see ../bus/backbone.ts for the assets):
// 1. Trigger: for each kind a definition watches (and served cluster), a durable consumer on the mirror's
//    change feed maps each change to work items (typed keys: an object, a namespace, an
//    OperatorGroup...) and publishes one per key to OLMQ_WORK. The stream keeps one pending item per
//    key, so a burst of changes coalesces into one item.
// 2. Work: replicas share one durable pull consumer per definition (queue) and served cluster,
//    opened and closed as clusters join and leave (cluster-lanes.ts). Before deciding on a key a
//    replica creates its lease in olmq_leases (create fails while another replica holds it;
//    the item is then redelivered shortly). The lease is renewed while working and expires
//    with its TTL if the replica dies. Each consume is supervised (../bus/supervised-consumer.ts):
//    one that ends or stops pulling after a NATS failover is opened again.
// 3. Reconcile: load a snapshot (the first one while the lease is taken), decide (pure), apply
//    the writes, then publish the decision's follow-up work (`enqueue`; one with the same basis
//    as the last this replica published for its key is not sent again). A StaleDecisionError
//    (write conflict) means "re-read and decide again", at once. Success acks the item, or holds
//    it back for `requeueAfterMs` when the decision asks to look again later.
// 4. Failure (dead-work.ts): the key's consecutive failures are counted in olmq_attempts; the
//    item is redelivered after exponential backoff with jitter, and after `maxAttempts`
//    failures (or at once for errors that say retrying cannot help) it goes to OLMQ_DEAD with
//    the error, and the definition's giveUp says so on the key's object. A trigger's failed
//    change is retried the same way, then dead-lettered too. An unreachable or throttling API
//    (isTransientApiFailure) is waited out instead: the item comes back after Retry-After or a
//    backoff and the failure is not counted.
// 5. Redrive (redrive.ts): a dead key's next success clears its letter (its object changed);
//    letters are also redriven on a schedule with backoff, and by `olmq dlq redrive`.
// Everything is level-triggered: an item names a key, never a change, so redelivery,
// duplicates and reordering are harmless.
import { setMaxListeners } from 'node:events';
import type { JsMsg } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { Backbone } from '../bus/backbone.js';
import { assets, parseWorkSubject, workItemKey } from '../bus/subjects.js';
import { deadLetterCounts } from '../bus/dead-letters.js';
import { superviseConsumer } from '../bus/supervised-consumer.js';
import {
  backlogOf,
  clearFailures,
  enqueue,
  noFailures,
  readFailures,
  releaseLease,
  renewLease,
  takeLease,
  watchFailures,
  type FailureRecord,
} from '../bus/work-queue.js';
import type { KubeClient } from '../kube/client.js';
import { StaleDecisionError } from '../kube/executor.js';
import { ClusterLanes, laneConsumers, type Lane, type LaneHost } from './cluster-lanes.js';
import { membershipOf, type ClusterMembership } from './cluster-membership.js';
import { clearHandledLetter, isRetryable, settleFailure, type FailureHost } from './dead-work.js';
import {
  backoffDelayMs,
  defaultFunctionHostOptions,
  type FunctionHostOptions,
} from './host-options.js';
import { startRedriver } from './redrive.js';
import { Slots } from './slots.js';
import { runTrigger } from './trigger-loop.js';
import type { FunctionMetrics } from './metrics.js';
import { PublishedFollowUps } from './follow-ups.js';
import type { Decision, FunctionDefinition, WorkContext, WorkItem } from './types.js';

export type {
  Decision,
  FunctionDefinition,
  ObjectChange,
  Trigger,
  WorkContext,
  WorkItem,
  WorkKeyType,
} from './types.js';
export { StaleDecisionError, isRetryable };
export { backoffDelayMs, defaultFunctionHostOptions, type FunctionHostOptions };

/** A work item names a cluster this replica has no API client for. */
export class NoClusterClientError extends Error {
  constructor(readonly cluster: string) {
    super(`no client for cluster ${cluster}`);
    this.name = 'NoClusterClientError';
  }
}

/** Runs one function definition's triggers and workers until stopped. */
export class FunctionHost<Key, Snapshot, Writes> {
  private readonly options: FunctionHostOptions;
  private readonly inflight = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private loops: Promise<void>[] = [];
  /** The consumers, one lane per served cluster (cluster-lanes.ts). */
  private readonly lanes: ClusterLanes;
  /** The served clusters when they are a set (a pool); undefined: every cluster. */
  private readonly membership: ClusterMembership | undefined;
  private readonly clients: ReadonlyMap<string, KubeClient>;
  private stopFollowing: () => void = () => undefined;
  /**
   * Keys that may have a failure record in olmq_attempts, kept current by a watch of the
   * definition's records (failures are rare, so the watch is quiet). A first delivery of a key
   * not in it skips reading the record: one round trip less per item in the common case.
   */
  private readonly maybeFailing = new Set<string>();
  private stopFailureWatch: () => void = () => undefined;
  private stopRedriver: () => Promise<void> = () => Promise.resolve();
  /** The watch ended early (it should not): every key may then have a record. */
  private failureWatchLost = false;
  /**
   * Keys this replica is reconciling, each with the newest item that arrived for it meanwhile.
   * That item runs as soon as the reconcile ends, instead of failing to take the lease and
   * coming back after contentionDelayMs: a function's own writes often retrigger its key.
   */
  private readonly running = new Map<string, JsMsg | undefined>();
  private readonly followUps = new PublishedFollowUps();
  private readonly slots: Slots;

  constructor(
    private readonly backbone: Backbone,
    private readonly definition: FunctionDefinition<Key, Snapshot, Writes>,
    private readonly log: Logger,
    private readonly metrics: FunctionMetrics,
    options: Partial<FunctionHostOptions> = {},
    /**
     * The clusters this replica serves, with one API client each, handed to each reconcile: a
     * ClusterMembership (followed as clusters join and leave) or a fixed map. An empty map
     * serves every cluster's work through one consumer (hosts that need no client).
     */
    clusters: ReadonlyMap<string, KubeClient> | ClusterMembership = new Map(),
  ) {
    this.options = { ...defaultFunctionHostOptions, ...options };
    this.slots = new Slots(this.options.concurrency);
    setMaxListeners(0, this.stopping.signal); // one listener per reconcile in flight
    this.membership = membershipOf(clusters);
    this.clients = this.membership?.clients ?? new Map<string, KubeClient>();
    this.lanes = new ClusterLanes(this.laneHost());
  }

  /** The queue this host works: its definition's key type's. */
  get queue(): string {
    return this.definition.key.queue;
  }

  /** Durable names of the work consumers this replica pulls now, one per served cluster. */
  get workConsumers(): string[] {
    return this.lanes.consumers.filter((c) => c.stream === assets.workStream).map((c) => c.name);
  }

  /** Creates the consumers (idempotent) and starts consuming. */
  async start(): Promise<void> {
    await this.watchFailureRecords();
    if (this.membership === undefined) await this.lanes.open(undefined);
    else this.stopFollowing = await this.lanes.follow(this.membership);
    const backlog = async () => backlogOf(this.backbone, this.lanes.consumers);
    this.metrics.addBacklogSource(async () =>
      (await backlog()).map((b) => ({ function: this.queue, ...b })),
    );
    this.metrics.addDeadLetterSource(async () => ({
      function: this.queue,
      counts: await deadLetterCounts(this.backbone, this.queue),
    }));
    this.stopRedriver = startRedriver({
      ...this.failureHost,
      triggers: this.definition.triggers,
      log: this.log,
      serves: (cluster) => this.lanes.serves(cluster),
    });
  }

  // How the lanes open consumers and run loops (see cluster-lanes.ts).
  private laneHost(): LaneHost {
    return {
      ...laneConsumers(this.backbone, this.definition, this.options),
      triggers: this.definition.triggers,
      log: this.log,
      retryMs: this.options.consumerSupervision?.retryMs ?? 1_000,
      supervise: ({ consumer, messages }, reopen) =>
        superviseConsumer(
          this.backbone,
          consumer,
          messages,
          reopen,
          this.log,
          this.options.consumerSupervision,
        ),
      runTrigger: (trigger, messages) =>
        runTrigger(trigger, messages, {
          ...this.failureHost,
          log: this.log,
          stopping: this.stopping.signal,
        }),
      runWork: (messages, lane) => this.workLoop(messages, lane),
    };
  }

  // What failure handling (dead-work.ts) needs of this host.
  private get failureHost(): FailureHost {
    return {
      backbone: this.backbone,
      queue: this.queue,
      options: this.options,
      metrics: this.metrics,
      settle: (action) => this.settle(action),
    };
  }

  /**
   * Stops pulling, lets in-flight reconciles finish for up to `graceMs`, then aborts the rest;
   * unfinished items are redelivered to another replica.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopFollowing();
    this.lanes.stopPulling();
    this.stopFailureWatch();
    await this.stopRedriver();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled([...this.inflight]), grace]);
    clearTimeout(timer);
    this.stopping.abort();
    await Promise.allSettled([...this.inflight, ...this.loops, this.lanes.ended()]);
    // Acks are sent without waiting for an answer: make sure the last ones reached the server.
    this.backbone.pipe.flush();
    await this.backbone.nc.flush().catch(() => undefined);
  }

  // Follows which keys have failure records. A key is dropped only on a delete event, so the
  // set errs towards reading a record that is not there, never towards missing one.
  private async watchFailureRecords(): Promise<void> {
    const watch = await watchFailures(this.backbone, this.queue, (key, present) => {
      if (present) this.maybeFailing.add(key);
      else this.maybeFailing.delete(key);
    });
    this.stopFailureWatch = watch.stop;
    this.loops.push(
      watch.ended.catch((error: unknown) => {
        // Without the watch every item reads its record, as if all keys might be failing.
        this.log.warn({ err: error }, 'failure record watch ended; reading every record');
        this.failureWatchLost = true;
      }),
    );
  }

  private mayBeFailing(itemKey: string): boolean {
    return this.failureWatchLost || this.maybeFailing.has(itemKey);
  }

  private async workLoop(messages: AsyncIterable<JsMsg>, lane: Lane): Promise<void> {
    for await (const m of messages) {
      // A closed lane's cluster left: its items go back for the pool that serves it now.
      if (this.stopping.signal.aborted || lane.closed) {
        this.settle(() => m.nak());
        continue;
      }
      // A first delivery waits out the definition's quiet time; a newer item of the key
      // replaces it meanwhile. By delivery count, not age: the server's clock is not ours.
      const quietMs = this.definition.quietMs;
      if (quietMs !== undefined && m.info.deliveryCount === 1) {
        this.settle(() => m.nak(quietMs));
        continue;
      }
      const itemKey = workItemKey(m.subject);
      if (this.running.has(itemKey)) {
        const waiting = this.running.get(itemKey);
        // The newer item names the same key, so it supersedes the waiting one (unless it is
        // that same item redelivered, which must stay unacknowledged until it has run).
        if (waiting !== undefined && waiting.seq !== m.seq) this.settle(() => waiting.ack());
        this.running.set(itemKey, m);
        continue;
      }
      await this.dispatch(m, itemKey);
    }
  }

  private async dispatch(m: JsMsg, itemKey: string): Promise<void> {
    this.running.set(itemKey, undefined);
    await this.slots.take();
    const task = this.reconcileItem(m, itemKey)
      .catch((error: unknown) => {
        this.log.error({ err: error, subject: m.subject }, 'reconcile crashed; redelivering');
        this.settle(() => m.nak(this.options.baseBackoffMs));
      })
      .finally(() => {
        this.inflight.delete(task);
        this.slots.give();
        const next = this.running.get(itemKey);
        this.running.delete(itemKey);
        if (next === undefined) return;
        if (this.stopping.signal.aborted) this.settle(() => next.nak());
        else void this.dispatch(next, itemKey);
      });
    this.inflight.add(task);
  }

  // The context of one reconcile: its typed key, and the cluster's client and clock.
  private contextOf(
    cluster: string,
    words: readonly string[],
    signal: AbortSignal,
  ): WorkContext<Key> {
    // Taken now: a reconcile keeps the client it started with if the cluster's is re-created.
    const client = this.clients.get(cluster);
    return {
      cluster,
      key: this.definition.key.decode(words),
      get client(): KubeClient {
        if (client === undefined) throw new NoClusterClientError(cluster);
        return client;
      },
      now: this.options.now,
      failures: 0,
      log: this.log.child({ cluster, key: words.join('/') }),
      signal,
    };
  }

  private async reconcileItem(m: JsMsg, itemKey: string): Promise<void> {
    const { cluster, key: words } = parseWorkSubject(m.subject);
    if (!this.lanes.serves(cluster)) {
      // The cluster left while the item waited here: another pool's replica takes it.
      this.settle(() => m.nak());
      return;
    }
    const labels = { cluster, function: this.queue };
    const abort = new AbortController();
    // Every API request of the reconcile listens to it; a load sends many at once.
    setMaxListeners(0, abort.signal);
    let context: WorkContext<Key>;
    try {
      context = this.contextOf(cluster, words, abort.signal);
    } catch (error) {
      // Words no key of this type has (a hand-published item): nothing to reconcile.
      const work = { cluster, key: words, log: this.log, itemKey, record: noFailures };
      await settleFailure(this.failureHost, m, work, error);
      return;
    }

    // The key's failure record: a first delivery of a key with no record (the common case) skips
    // the read; the failure path reads it then. Otherwise it is read alongside the lease create,
    // saving a round trip of latency: a holder that failed writes the record before it releases
    // the lease, so once our create succeeds the record we read is current (short of a race
    // within one round trip, which at worst undercounts by one failure). When the key is
    // contended the read is dropped.
    const readRecord = m.info.deliveryCount > 1 || this.mayBeFailing(itemKey);
    const recordRead = readRecord
      ? readFailures(this.backbone, itemKey)
      : Promise.resolve(noFailures);
    recordRead.catch(() => undefined); // awaited below, unless contended
    // The first snapshot is read while the lease is taken, in the same round trip. That is as
    // safe as reading after it: the item arrived after the change it names was mirrored, so the
    // read shows at least that; and the mirror may lag the previous holder's last writes either
    // way, which the writes' preconditions catch.
    // A live copy of the mirror first catches up with it (one round trip, shared): a copy
    // only as new as the item's change can lag this function's own writes (own-writes.ts).
    const caughtUp = this.backbone.copy?.reached(cluster);
    const firstSnapshot =
      caughtUp?.then(() => this.definition.load(context)) ?? this.definition.load(context);
    firstSnapshot.catch(() => undefined); // awaited below, unless contended
    let leaseRevision: number;
    try {
      leaseRevision = await takeLease(this.backbone, itemKey, this.options.replicaId);
    } catch {
      abort.abort();
      this.metrics.leaseContended.inc(labels);
      this.log.debug({ cluster, key: words.join('/') }, 'key busy; retrying shortly');
      this.settle(() => m.nak(this.options.contentionDelayMs));
      return;
    }

    const onStop = (): void => abort.abort();
    this.stopping.signal.addEventListener('abort', onStop);
    let renewing = Promise.resolve();
    const renewal = setInterval(
      () => {
        m.working();
        renewing = renewLease(this.backbone, itemKey, this.options.replicaId, leaseRevision).then(
          (revision) => void (leaseRevision = revision),
          () => abort.abort(), // another replica took over after our lease expired
        );
      },
      Math.max(100, Math.floor(this.backbone.options.leaseTtlMs / 3)),
    );
    // A reconcile renews its lease for as long as it runs: one that never ends holds its key
    // (and a slot) for good, which only this says.
    const slow = setTimeout(
      () =>
        context.log.warn({ runningMs: this.options.slowReconcileMs }, 'reconcile still running'),
      this.options.slowReconcileMs,
    );

    let record: FailureRecord = noFailures;
    const stopTimer = this.metrics.reconcileDuration.startTimer(labels);
    const started = performance.now();
    try {
      // Every NATS call may time out (a restarting server): any error lands in the failure path.
      record = await recordRead;
      context.failures = record.failures;
      let decision = await this.decideAndApply(context, labels, firstSnapshot);
      await this.publishFollowUps(m, 0, cluster, decision.enqueue);
      for (let pass = 1; decision.again === true && pass < this.options.maxPasses; pass++) {
        decision = await this.decideAndApply(context, labels);
        await this.publishFollowUps(m, pass, cluster, decision.enqueue);
      }
      // Still progressing after maxPasses: come back soon rather than spin here.
      const requeueAfterMs = decision.requeueAfterMs;
      if (decision.again === true) this.settle(() => m.nak(this.options.baseBackoffMs));
      else if (requeueAfterMs === undefined) this.settle(() => m.ack());
      else this.settle(() => m.nak(requeueAfterMs));
      this.metrics.processed.inc({ ...labels, outcome: 'success' });
      if (context.log.isLevelEnabled('debug'))
        context.log.debug(
          {
            // From the item's publish to the end of its reconcile, and of that the reconcile.
            sincePublishedMs: Math.round(Date.now() - m.info.timestampNanos / 1e6),
            reconcileMs: Math.round(performance.now() - started),
          },
          'reconciled',
        );
      if (record.failures > 0 || this.mayBeFailing(itemKey))
        await clearFailures(this.backbone, itemKey).catch(() => undefined);
      if (record.dead === true)
        await clearHandledLetter(this.failureHost, { cluster, key: words, log: context.log }).catch(
          (error: unknown) => context.log.warn({ err: error }, 'could not clear a dead letter'),
        );
    } catch (error) {
      // A skipped record must be read now: the failures of this key count on from it.
      const settled = readRecord
        ? Promise.resolve(record)
        : readFailures(this.backbone, itemKey).catch(() => record);
      await settled
        .then((current) =>
          settleFailure(
            this.failureHost,
            m,
            { cluster, key: words, log: context.log, itemKey, record: current },
            error,
            this.definition.giveUp === undefined
              ? undefined
              : (dead) => this.definition.giveUp?.(context, dead) ?? Promise.resolve(),
          ),
        )
        .catch((failure: unknown) => {
          // Not even the failure could be recorded (NATS unreachable): redeliver soon.
          context.log.warn(
            { err: failure, cause: error },
            'could not record a failed reconcile; retrying',
          );
          this.settle(() => m.nak(this.options.baseBackoffMs));
        });
    } finally {
      stopTimer();
      clearInterval(renewal);
      clearTimeout(slow);
      this.stopping.signal.removeEventListener('abort', onStop);
      // A renewal still in flight changes the revision to release.
      void renewing.then(() => releaseLease(this.backbone, leaseRevision));
    }
  }

  // Publishes a pass's follow-ups, named by the item, its delivery and the pass (see enqueue),
  // but those sent before on the same basis (follow-ups.ts).
  private async publishFollowUps(
    m: JsMsg,
    pass: number,
    cluster: string,
    items?: readonly WorkItem[],
  ) {
    const origin = `${this.queue}@${m.seq}.${m.info.deliveryCount}.${pass}`;
    const unsent = this.followUps.unsent(cluster, items);
    await enqueue(this.backbone, origin, { cluster, batch: this.options.enqueueBatch }, unsent);
    this.followUps.published(cluster, unsent);
  }

  // Sends a settlement (ack, nak, term) of a consumed message with this turn's other messages.
  private settle(action: () => void): void {
    this.backbone.pipe.later(action);
  }

  private async decideAndApply(
    context: WorkContext<Key>,
    labels: { cluster: string; function: string },
    firstSnapshot?: Promise<Snapshot>,
  ): Promise<Decision<Writes>> {
    for (let round = 0; ; round++) {
      const snapshot =
        round === 0 && firstSnapshot !== undefined
          ? await firstSnapshot
          : await this.definition.load(context);
      const decision = this.definition.decide(snapshot);
      try {
        await this.definition.apply(decision.writes, context);
        return decision;
      } catch (error) {
        if (!(error instanceof StaleDecisionError) || round >= this.options.staleRetries)
          throw error;
        this.metrics.writeConflicts.inc(labels);
        context.log.debug({ err: error }, 'write conflict; deciding again on fresh state');
      }
    }
  }
}
