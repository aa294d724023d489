// The function host: runs one olmq function (declared as data) against the backbone.
//
// How work flows (see ../bus/backbone.ts for the assets):
// 1. Trigger: for each kind the function watches, a durable consumer on the object mirror's
//    change feed maps each change to work keys (an object, a namespace, an OperatorGroup...)
//    and publishes one work item per key to OLMQ_WORK. The stream keeps one pending item per
//    key, so a burst of changes coalesces into one item.
// 2. Work: replicas share one durable pull consumer per function. Before deciding on a key a
//    replica creates its lease in olmq_leases (create fails while another replica holds it;
//    the item is then redelivered shortly). The lease is renewed while working and expires
//    with its TTL if the replica dies.
// 3. Reconcile: load a snapshot (the first one while the lease is taken), decide (pure), apply
//    the writes. A StaleDecisionError (write conflict) means "re-read and decide again", at
//    once. Success acks the item, or holds it back for `requeueAfterMs` when the decision asks
//    to look again later.
// 4. Failure: the key's consecutive failures are counted in olmq_attempts; the item is
//    redelivered after exponential backoff with jitter, and after `maxAttempts` failures (or
//    at once for errors that say retrying cannot help) it goes to OLMQ_DEAD with the error.
// Everything is level-triggered: an item names a key, never a change, so redelivery,
// duplicates and reordering are harmless.
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { KvWatchInclude } from '@nats-io/kv';
import type { Logger } from 'pino';
import { assets, type Backbone } from '../bus/backbone.js';
import { partsDiffer, partsHeader, pickParts, type ObjectPart } from '../bus/object-parts.js';
import { JetStreamPublishError, wrongLastSequence } from '../bus/pipe.js';
import {
  deadLetterSubject,
  encodeToken,
  parseObjectKey,
  parseWorkSubject,
  workSubject,
  type ObjectRef,
  type WorkKey,
} from '../bus/subjects.js';
import type { FunctionMetrics } from './metrics.js';

/** One change of a mirrored object, as a trigger sees it. */
export interface ObjectChange {
  ref: ObjectRef;
  /** The object as mirrored (parsed JSON), or undefined when it was deleted. */
  object: unknown;
  /**
   * Whether the change may concern any of `parts`, judged as Trigger.parts is: against the last
   * version of the object this replica's trigger looked at (object-parts.ts). Always true for a
   * deletion, and for an object this replica has not looked at yet.
   */
  touches(parts: readonly ObjectPart[]): boolean;
}

/** Which changes start work for a function, and which keys they concern. */
export interface Trigger {
  /** Kind whose changes start work, e.g. "Subscription". */
  kind: string;
  /** The work keys a change maps to; none to ignore it. Async for fan-out (e.g. every namespace). */
  workKeys(change: ObjectChange): readonly WorkKey[] | Promise<readonly WorkKey[]>;
  /**
   * The parts of the object the function reads, when not all: a change that leaves all of them
   * as they were when this replica last looked at the object starts no work (deletions, and
   * objects it has not looked at, always do).
   */
  parts?: readonly ObjectPart[];
}

/** What a reconcile is about, and its means to stop early. */
export interface WorkContext {
  cluster: string;
  key: WorkKey;
  /** Consecutive failures of this key before this attempt. */
  failures: number;
  log: Logger;
  /** Aborted when the host stops or the lease was lost; writes are still safe, but pointless. */
  signal: AbortSignal;
}

/** A decision: the writes to make, and whether to look again later. */
export interface Decision<Writes> {
  writes: Writes;
  /** Look at this key again after this many ms even if nothing changes (e.g. waiting for a Deployment). */
  requeueAfterMs?: number;
  /**
   * The writes let the key progress further at once (an object just created is what the next
   * step needs): load and decide again right away, within this lease, rather than waiting for
   * the writes to come back through the watcher. Only for functions whose load reads the API.
   */
  again?: boolean;
}

/** An olmq function, declared as data: triggers, and load → decide → apply. */
export interface FunctionDefinition<Snapshot, Writes> {
  /** Function name, e.g. "install"; also names its consumers. */
  name: string;
  triggers: readonly Trigger[];
  /** Reads what the decision needs (the mirror, or the API when it must be fresh). */
  load(work: WorkContext): Promise<Snapshot>;
  /** Pure: decides from the snapshot alone. */
  decide(snapshot: Snapshot): Decision<Writes>;
  /** Performs the writes; throws StaleDecisionError when the world changed under the decision. */
  apply(writes: Writes, work: WorkContext): Promise<void>;
}

/** A write found the world changed since the snapshot (409 Conflict): re-read and decide again. */
export class StaleDecisionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StaleDecisionError';
  }
}

/** Errors may say retrying cannot help (bad input that only a person can fix). */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof Error && 'retryable' in error && error.retryable === false);
}

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
};

/** Backoff before retry number `failures` (1 = first failure): full jitter over the upper half. */
export function backoffDelayMs(failures: number, options: FunctionHostOptions): number {
  const ceiling = Math.min(
    options.maxBackoffMs,
    options.baseBackoffMs * 2 ** Math.max(0, failures - 1),
  );
  return Math.round(ceiling / 2 + (ceiling / 2) * options.random());
}

interface AttemptRecord {
  failures: number;
  lastError: string;
}

/** Runs one function's triggers and workers until stopped. */
export class FunctionHost<Snapshot, Writes> {
  private readonly options: FunctionHostOptions;
  private readonly streams: ConsumerMessages[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private loops: Promise<void>[] = [];
  /**
   * Keys that may have a failure record in olmq_attempts, kept current by a watch of the
   * function's records (failures are rare, so the watch is quiet). A first delivery of a key not
   * in it skips reading the record: one round trip less per item in the common case.
   */
  private readonly maybeFailing = new Set<string>();
  private stopAttemptsWatch: () => void = () => undefined;
  /** The watch ended early (it should not): every key may then have a record. */
  private failureWatchLost = false;
  /**
   * Keys this replica is reconciling, each with the newest item that arrived for it meanwhile.
   * That item runs as soon as the reconcile ends, instead of failing to take the lease and
   * coming back after contentionDelayMs: a function's own writes often retrigger its key.
   */
  private readonly running = new Map<string, JsMsg | undefined>();
  private freeSlots: number;
  private slotWaiters: (() => void)[] = [];

  constructor(
    private readonly backbone: Backbone,
    private readonly definition: FunctionDefinition<Snapshot, Writes>,
    private readonly log: Logger,
    private readonly metrics: FunctionMetrics,
    options: Partial<FunctionHostOptions> = {},
  ) {
    this.options = { ...defaultFunctionHostOptions, ...options };
    this.freeSlots = this.options.concurrency;
    setMaxListeners(0, this.stopping.signal); // one listener per reconcile in flight
  }

  /** Durable name of the work consumer shared by all replicas of this function. */
  get workConsumer(): string {
    return `${this.definition.name}-work`;
  }

  /** Creates the consumers (idempotent) and starts consuming. */
  async start(): Promise<void> {
    const { jsm, js } = this.backbone;
    const fn = encodeToken(this.definition.name);
    await this.watchFailureRecords(fn);
    await jsm.consumers.add(assets.workStream, {
      durable_name: this.workConsumer,
      filter_subject: `olmq.work.${fn}.>`,
      ack_policy: AckPolicy.Explicit,
      ack_wait: this.options.ackWaitMs * 1_000_000,
      max_deliver: -1,
      max_ack_pending: 10_000,
    });
    for (const trigger of this.definition.triggers) {
      const durable = `${this.definition.name}-trigger-${trigger.kind}`;
      await jsm.consumers.add(`KV_${assets.objects}`, {
        durable_name: durable,
        filter_subject: `$KV.${assets.objects}.*.${encodeToken(trigger.kind)}.*.*`,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: this.options.ackWaitMs * 1_000_000,
        max_deliver: -1,
      });
      const messages = await (
        await js.consumers.get(`KV_${assets.objects}`, durable)
      ).consume({
        max_messages: 256,
      });
      this.streams.push(messages);
      this.loops.push(this.triggerLoop(trigger, messages));
    }
    const consumers = [
      { stream: assets.workStream, name: this.workConsumer },
      ...this.definition.triggers.map((t) => ({
        stream: `KV_${assets.objects}`,
        name: `${this.definition.name}-trigger-${t.kind}`,
      })),
    ];
    this.metrics.addBacklogSource(() =>
      Promise.all(
        consumers.map(async ({ stream, name }) => {
          const info = await jsm.consumers.info(stream, name);
          return {
            function: this.definition.name,
            consumer: name,
            pending: info.num_pending,
            inFlight: info.num_ack_pending,
          };
        }),
      ),
    );
    const work = await (
      await js.consumers.get(assets.workStream, this.workConsumer)
    ).consume({
      max_messages: this.options.concurrency,
    });
    this.streams.push(work);
    this.loops.push(this.workLoop(work));
  }

  /**
   * Stops pulling, lets in-flight reconciles finish for up to `graceMs`, then aborts the rest;
   * unfinished items are redelivered to another replica.
   */
  async stop(graceMs = 10_000): Promise<void> {
    for (const messages of this.streams) messages.stop();
    this.stopAttemptsWatch();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled([...this.inflight]), grace]);
    clearTimeout(timer);
    this.stopping.abort();
    await Promise.allSettled([...this.inflight, ...this.loops]);
    // Acks are sent without waiting for an answer: make sure the last ones reached the server.
    this.backbone.pipe.flush();
    await this.backbone.nc.flush().catch(() => undefined);
  }

  // Follows which keys of this function have failure records: updates first (so none is
  // missed), then the records already there. A key is dropped only on a delete event, so the
  // set errs towards reading a record that is not there, never towards missing one.
  private async watchFailureRecords(fn: string): Promise<void> {
    const updates = await this.backbone.attempts.watch({
      key: `${fn}.>`,
      include: KvWatchInclude.UpdatesOnly,
    });
    this.stopAttemptsWatch = () => updates.stop();
    this.loops.push(
      (async () => {
        for await (const entry of updates) {
          if (entry.operation === 'PUT') this.maybeFailing.add(entry.key);
          else this.maybeFailing.delete(entry.key);
        }
      })().catch((error: unknown) => {
        // Without the watch every item reads its record, as if all keys might be failing.
        this.log.warn({ err: error }, 'failure record watch ended; reading every record');
        this.failureWatchLost = true;
      }),
    );
    for await (const key of await this.backbone.attempts.keys(`${fn}.>`))
      this.maybeFailing.add(key);
  }

  private mayBeFailing(leaseKey: string): boolean {
    return this.failureWatchLost || this.maybeFailing.has(leaseKey);
  }

  // Maps changes to work items. Changes are handled concurrently (up to triggerWindow at once):
  // work items name keys, not changes, so their order does not matter, and a redelivered
  // change republishes with the same message id, which JetStream drops. The id names the
  // function: two functions triggered by the same change must both get their item.
  private async triggerLoop(trigger: Trigger, messages: ConsumerMessages): Promise<void> {
    const prefix = `$KV.${assets.objects}.`;
    const inflight = new Set<Promise<void>>();
    const lastSeen = new LastSeen(this.options.lastSeenLimit);
    const handle = async (m: JsMsg): Promise<void> => {
      try {
        const ref = parseObjectKey(m.subject.slice(prefix.length));
        const operation = m.headers?.get('KV-Operation') ?? '';
        const deleted = operation === 'DEL' || operation === 'PURGE';
        const signature =
          m.headers?.has(partsHeader) === true ? m.headers.get(partsHeader) : undefined;
        const seen = lastSeen.get(m.subject);
        // Remembered: the parts asked about, of objects they were asked about (most triggers never
        // ask), so a bucket of 50,000 CSV copies costs no memory here.
        const asked = new Set<ObjectPart>();
        const touches = (parts: readonly ObjectPart[]): boolean => {
          for (const part of parts) asked.add(part);
          return deleted || partsDiffer(seen?.parts, signature, parts);
        };
        if (trigger.parts !== undefined && !touches(trigger.parts)) {
          this.settle(() => m.ack());
          return;
        }
        // Parsed only if the trigger looks at it: most map the key alone.
        let parsed: { object: unknown } | undefined;
        const keys = await trigger.workKeys({
          ref,
          touches,
          get object() {
            parsed ??= { object: deleted ? undefined : m.json<unknown>() };
            return parsed.object;
          },
        });
        await Promise.all(
          keys.map((key, i) =>
            this.backbone.pipe.publish(
              workSubject(this.definition.name, ref.cluster, key),
              undefined,
              {
                // Per function: another function triggered by the same change publishes its own item.
                msgID: `${this.definition.name}:${m.subject}@${m.seq}#${i}`,
              },
            ),
          ),
        );
        this.settle(() => m.ack());
        if (asked.size > 0 || seen !== undefined)
          lastSeen.look(
            m.subject,
            m.seq,
            deleted || signature === undefined ? undefined : pickParts(signature, asked),
          );
      } catch (error) {
        this.log.error({ err: error, subject: m.subject }, 'trigger failed; will retry');
        this.settle(() => m.nak(this.options.baseBackoffMs));
      }
    };
    for await (const m of messages) {
      if (this.stopping.signal.aborted) {
        this.settle(() => m.nak());
        continue;
      }
      const task = handle(m).finally(() => inflight.delete(task));
      inflight.add(task);
      if (inflight.size >= this.options.triggerWindow) await Promise.race(inflight);
    }
    await Promise.allSettled([...inflight]);
  }

  private async workLoop(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      if (this.stopping.signal.aborted) {
        this.settle(() => m.nak());
        continue;
      }
      const leaseKey = m.subject.slice('olmq.work.'.length);
      if (this.running.has(leaseKey)) {
        const waiting = this.running.get(leaseKey);
        // The newer item names the same key, so it supersedes the waiting one (unless it is
        // that same item redelivered, which must stay unacknowledged until it has run).
        if (waiting !== undefined && waiting.seq !== m.seq) this.settle(() => waiting.ack());
        this.running.set(leaseKey, m);
        continue;
      }
      await this.dispatch(m, leaseKey);
    }
  }

  private async dispatch(m: JsMsg, leaseKey: string): Promise<void> {
    this.running.set(leaseKey, undefined);
    await this.acquireSlot();
    const task = this.reconcileItem(m)
      .catch((error: unknown) => {
        this.log.error({ err: error, subject: m.subject }, 'reconcile crashed; redelivering');
        this.settle(() => m.nak(this.options.baseBackoffMs));
      })
      .finally(() => {
        this.inflight.delete(task);
        this.releaseSlot();
        const next = this.running.get(leaseKey);
        this.running.delete(leaseKey);
        if (next === undefined) return;
        if (this.stopping.signal.aborted) this.settle(() => next.nak());
        else void this.dispatch(next, leaseKey);
      });
    this.inflight.add(task);
  }

  private acquireSlot(): Promise<void> {
    if (this.freeSlots > 0) {
      this.freeSlots--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  private releaseSlot(): void {
    const next = this.slotWaiters.shift();
    if (next) next();
    else this.freeSlots++;
  }

  private async reconcileItem(m: JsMsg): Promise<void> {
    const { cluster, key } = parseWorkSubject(m.subject);
    const leaseKey = m.subject.slice('olmq.work.'.length);
    const labels = { cluster, function: this.definition.name };
    const { leases, attempts } = this.backbone;

    // The key's failure record: a first delivery of a key with no record (the common case) skips
    // the read; the failure path reads it then. Otherwise it is read alongside the lease create,
    // saving a round trip of latency: a holder that failed writes the record before it releases
    // the lease, so once our create succeeds the record we read is current (short of a race
    // within one round trip, which at worst undercounts by one failure). When the key is
    // contended the read is dropped.
    const readRecord = m.info.deliveryCount > 1 || this.mayBeFailing(leaseKey);
    const attemptsRead = readRecord
      ? readAttempts(attempts, leaseKey)
      : Promise.resolve(noFailures);
    attemptsRead.catch(() => undefined); // awaited below, unless contended
    const abort = new AbortController();
    const log = this.log.child({ cluster, key: key.join('/') });
    const context: WorkContext = { cluster, key, failures: 0, log, signal: abort.signal };
    // The first snapshot is read while the lease is taken, in the same round trip. That is as
    // safe as reading after it: the item arrived after the change it names was mirrored, so the
    // read shows at least that; and the mirror may lag the previous holder's last writes either
    // way, which the writes' preconditions catch.
    const firstSnapshot = this.definition.load(context);
    firstSnapshot.catch(() => undefined); // awaited below, unless contended
    let leaseRevision: number;
    try {
      leaseRevision = await this.createLease(leaseKey);
    } catch {
      abort.abort();
      this.metrics.leaseContended.inc(labels);
      this.log.debug({ cluster, key: key.join('/') }, 'key busy; retrying shortly');
      this.settle(() => m.nak(this.options.contentionDelayMs));
      return;
    }

    const onStop = (): void => abort.abort();
    this.stopping.signal.addEventListener('abort', onStop);
    let renewing = Promise.resolve();
    const renewal = setInterval(
      () => {
        m.working();
        renewing = leases.update(leaseKey, this.options.replicaId, leaseRevision).then(
          (revision) => void (leaseRevision = revision),
          () => abort.abort(), // another replica took over after our lease expired
        );
      },
      Math.max(100, Math.floor(this.backbone.options.leaseTtlMs / 3)),
    );

    let record: AttemptRecord = { failures: 0, lastError: '' };
    const stopTimer = this.metrics.reconcileDuration.startTimer(labels);
    try {
      // Every NATS call may time out (a restarting server): any error lands in the failure path.
      record = await attemptsRead;
      context.failures = record.failures;
      let decision = await this.decideAndApply(context, labels, firstSnapshot);
      for (let pass = 1; decision.again === true && pass < this.options.maxPasses; pass++)
        decision = await this.decideAndApply(context, labels);
      // Still progressing after maxPasses: come back soon rather than spin here.
      const requeueAfterMs = decision.requeueAfterMs;
      if (decision.again === true) this.settle(() => m.nak(this.options.baseBackoffMs));
      else if (requeueAfterMs === undefined) this.settle(() => m.ack());
      else this.settle(() => m.nak(requeueAfterMs));
      this.metrics.processed.inc({ ...labels, outcome: 'success' });
      if (record.failures > 0 || this.mayBeFailing(leaseKey))
        await attempts.delete(leaseKey).catch(() => undefined);
    } catch (error) {
      // A skipped record must be read now: the failures of this key count on from it.
      const settled = readRecord
        ? Promise.resolve(record)
        : readAttempts(attempts, leaseKey).catch(() => record);
      await settled
        .then((current) => this.fail(m, context, leaseKey, current, error))
        .catch((failure: unknown) => {
          // Not even the failure could be recorded (NATS unreachable): redeliver soon.
          log.warn({ err: failure, cause: error }, 'could not record a failed reconcile; retrying');
          this.settle(() => m.nak(this.options.baseBackoffMs));
        });
    } finally {
      stopTimer();
      clearInterval(renewal);
      this.stopping.signal.removeEventListener('abort', onStop);
      // A renewal still in flight changes the revision to release.
      void renewing.then(() => this.releaseLease(leaseRevision));
    }
  }

  // Sends a settlement (ack, nak, term) of a consumed message with this turn's other messages.
  private settle(action: () => void): void {
    this.backbone.pipe.later(action);
  }

  // Creates the key's lease: a publish that the stream stores only while the key has no entry.
  // Releases delete the entry's message (below), so the key is normally empty. If it holds a
  // delete marker (a lease removed by hand with a KV delete) the KV client's create handles it.
  private async createLease(leaseKey: string): Promise<number> {
    try {
      const ack = await this.backbone.pipe.publish(
        `$KV.${assets.leases}.${leaseKey}`,
        this.options.replicaId,
        { expectLastSubjectSequence: 0 },
      );
      return ack.seq;
    } catch (error) {
      if (!(error instanceof JetStreamPublishError) || error.errCode !== wrongLastSequence)
        throw error;
      return this.backbone.leases.create(leaseKey, this.options.replicaId);
    }
  }

  // Removes our lease entry by its sequence, and nobody reads the answer: the item is settled,
  // so nothing depends on it, and if NATS is unreachable the TTL frees the lease. Deleting the
  // message (rather than a KV delete, which leaves a delete marker) keeps the key empty, so the
  // next lease on it is one create, not a failed create, a read and an update. By sequence, it
  // can only ever remove our own lease: after a takeover the entry has another sequence and the
  // delete finds nothing.
  private releaseLease(revision: number): void {
    this.backbone.pipe.sendRequest(
      `$JS.API.STREAM.MSG.DELETE.KV_${assets.leases}`,
      JSON.stringify({ seq: revision, no_erase: true }),
    );
  }

  private async decideAndApply(
    context: WorkContext,
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

  private async fail(
    m: JsMsg,
    context: WorkContext,
    leaseKey: string,
    record: AttemptRecord,
    error: unknown,
  ): Promise<void> {
    const labels = { cluster: context.cluster, function: this.definition.name };
    const failures = record.failures + 1;
    const message = error instanceof Error ? error.message : String(error);
    this.metrics.processed.inc({ ...labels, outcome: 'failure' });
    if (failures >= this.options.maxAttempts || !isRetryable(error)) {
      const entry = {
        function: this.definition.name,
        cluster: context.cluster,
        key: context.key,
        failures,
        error: message,
        at: new Date().toISOString(),
      };
      await this.backbone.js.publish(
        deadLetterSubject(this.definition.name, context.cluster, context.key),
        JSON.stringify(entry),
      );
      await this.backbone.attempts.delete(leaseKey);
      this.settle(() => m.term(message));
      this.metrics.deadLettered.inc(labels);
      context.log.error({ err: error, failures }, 'work dead-lettered after repeated failures');
      return;
    }
    const delay = backoffDelayMs(failures, this.options);
    await this.backbone.attempts.put(leaseKey, JSON.stringify({ failures, lastError: message }));
    this.settle(() => m.nak(delay));
    this.metrics.retried.inc(labels);
    context.log.warn(
      { err: error, failures, retryInMs: delay },
      'reconcile failed; retrying with backoff',
    );
  }
}

const noFailures: AttemptRecord = { failures: 0, lastError: '' };

async function readAttempts(attempts: Backbone['attempts'], key: string): Promise<AttemptRecord> {
  const entry = await attempts.get(key);
  if (entry === null || entry.operation !== 'PUT' || entry.length === 0)
    return { failures: 0, lastError: '' };
  return entry.json<AttemptRecord>();
}

/**
 * What a trigger remembers of the last message of each object it looked at (mapped to work
 * keys, not skipped), by mirror subject: the digests of the parts it asked about. What a change
 * touches is judged against it, so only content this replica has looked at can be skipped.
 * Bounded: the oldest entries go first, and an object without one counts as changed in every
 * part.
 */
class LastSeen {
  private readonly entries = new Map<string, { seq: number; parts: string }>();

  constructor(private readonly limit: number) {}

  get(subject: string): { seq: number; parts: string } | undefined {
    return this.entries.get(subject);
  }

  /** Records a message looked at (pickParts); an older one (redelivered) does not replace a newer. */
  look(subject: string, seq: number, parts: string | undefined): void {
    const current = this.entries.get(subject);
    if (current !== undefined && current.seq > seq) return;
    this.entries.delete(subject);
    if (parts === undefined) return;
    this.entries.set(subject, { seq, parts });
    if (this.entries.size > this.limit) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
