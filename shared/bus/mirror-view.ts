// A live in-memory copy of one kind of the watcher's mirror, for kinds a function reads whole
// at every reconcile (every OperatorGroup of a cluster, say): listing them from the mirror
// each time costs a request per object. One ordered consumer of the kind's subjects fills the
// view with the latest entry of each key and then follows every change.
//
// A reconcile must see at least the change that triggered it, which reached the function
// through another consumer. `current()` asks for the first message of the kind past what the
// view has applied (a direct get by subject) and waits until the view has applied it, until
// none is left; concurrent calls share one such round trip. Asking the view's consumer how many
// messages it has pending would be one request, but NATS 2.9 counts them by a pass over
// every subject written since the consumer's position, which is the whole stream for a kind
// that changes rarely.
import { DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { Backbone, MirroredEntry } from './backbone.js';
import { isFenced, reportFenced } from './fencing.js';
import { BodyMissingError, isBodyRef, textOf } from './large-values.js';
import {
  clusterScope,
  decodeToken,
  encodeToken,
  mirrorStream,
  mirrorSubjectPrefix as subjectPrefix,
} from './subjects.js';

/** What reading the mirror needs of the backbone (and its live copy, when it has one). */
export type MirrorSource = Pick<Backbone, 'js' | 'jsm' | 'pipe' | 'copy'>;

/** Whether a mirror message's KV-Operation header marks a deletion. */
export const isDeletion = (operation: string | undefined): boolean =>
  operation === 'DEL' || operation === 'PURGE';

/** The view could not catch up with the mirror in time (NATS unreachable or restarting). */
export class MirrorViewLagError extends Error {
  constructor(kind: string, waitedMs: number) {
    super(`the mirror view of ${kind} did not catch up within ${waitedMs} ms; retrying`);
    this.name = 'MirrorViewLagError';
  }
}

/** A live view of one mirrored kind, across clusters. */
export interface MirrorView<T> {
  /** Resolves once the view holds every change the mirror had when it was called. */
  current(): Promise<void>;
  /** The objects of the kind in `cluster`, optionally in one namespace ("" = cluster-scoped). */
  list(cluster: string, namespace?: string): T[];
  stop(): void;
}

/**
 * What a mirror message says of its key: `deleted`, the object, or undefined for a reference
 * whose value is gone (the key moved on, and its later message says to what) and for a write
 * of a deposed watcher (fencing.ts: the view keeps what it had; the active watcher repairs it).
 */
export async function mirroredValue<T>(
  mirror: MirrorSource,
  m: JsMsg,
): Promise<T | 'deleted' | undefined> {
  const cluster = decodeToken(m.subject.slice(subjectPrefix.length).split('.')[0] ?? '=');
  if ((await isFenced(mirror, cluster, m.headers)) !== undefined) {
    reportFenced({ cluster, reader: 'view' });
    return undefined;
  }
  if (isDeletion(m.headers?.get('KV-Operation')) || m.data.length === 0) return 'deleted';
  if (!isBodyRef(m.headers)) return m.json<T>();
  try {
    return JSON.parse(await textOf(mirror, m)) as T;
  } catch (error) {
    if (error instanceof BodyMissingError) return undefined;
    throw error;
  }
}

/** A consumer applying, in order, every mirror message of one subject filter. */
export interface MirrorFollower {
  /** Resolves once every message the mirror had when it was called has been applied. */
  current(): Promise<void>;
  /**
   * Resolves once the message at stream sequence `seq` (one of the filter's, seen through
   * another consumer) or a later one has been applied: no round trip. Falls back to current()
   * when none comes within a second (a message purged meanwhile has no successor).
   */
  reached(seq: number): Promise<void>;
  /** Its consume ended (connection closed, or it gave up after a failover): it is stale. */
  readonly ended: boolean;
  stop(): void;
}

/** How often a quiet follower's server says it is alive (two missed: a new consumer). */
const followerHeartbeatMs = 3_000;

// Per connection (its pipe): a stream sequence the mirror is known to have reached, the
// highest any follower applied or found. A round that finds nothing of its filter past what
// its follower applied knows the same up to there, so the next round starts from there: a
// direct get by subject from an old sequence makes NATS 2.9 pass over every later subject.
const reached = new WeakMap<MirrorSource['pipe'], { seq: number }>();

/**
 * Follows the mirror messages matching `filter` (from the first), handing each to `apply` in
 * stream order; filled (and current) when the promise resolves. `what` names the follower in
 * the error raised when it cannot catch up within `catchUpMs`.
 */
export async function followMirror(
  mirror: MirrorSource,
  filter: string,
  apply: (m: JsMsg) => Promise<void> | void,
  options: { what: string; catchUpMs?: number; from?: number },
): Promise<MirrorFollower> {
  const catchUpMs = options.catchUpMs ?? 10_000;
  const from = options.from ?? 1;
  // The stream sequence of the last message applied (an ordered consumer replaced after a gap
  // goes on from there), and a sequence up to which the stream is known to hold no message of
  // the filter that is not applied.
  let applied = from - 1;
  let checked = from - 1;
  const waiters = new Set<{ until: number; resolve: () => void }>();
  let known = reached.get(mirror.pipe);
  if (known === undefined) reached.set(mirror.pipe, (known = { seq: 0 }));
  const stream = known;

  // Every message, not the last per subject: the bucket keeps one message per key, so both
  // deliver the same, and NATS 2.9 sets up the first more cheaply.
  const consumer = await mirror.js.consumers.get(mirrorStream, {
    filter_subjects: filter,
    ...(from > 1
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from }
      : { deliver_policy: DeliverPolicy.All }),
  });
  // An ordered consumer lives on one server: when that server dies, nats.js makes a new one
  // after two missed heartbeats. At its default (15 s) a view would lag half a minute.
  const messages: ConsumerMessages = await consumer.consume({
    idle_heartbeat: followerHeartbeatMs,
  });
  // A view whose consume ended (the connection closed, or it gave up after a failover) never
  // catches up again: current() says so at once, and the lazy view opens a new one.
  let ended = false;
  void (async () => {
    // In order: a message is applied whole (a reference's value read) before the next.
    for await (const m of messages) {
      await apply(m);
      applied = m.seq;
      stream.seq = Math.max(stream.seq, applied);
      for (const waiter of waiters) {
        if (applied >= waiter.until) {
          waiters.delete(waiter);
          waiter.resolve();
        }
      }
    }
  })()
    .catch(() => undefined)
    .finally(() => (ended = true));

  const appliedUpTo = async (until: number, deadline: number): Promise<void> => {
    if (applied >= until) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        const waiter = { until, resolve };
        waiters.add(waiter);
        timer = setTimeout(
          () => {
            waiters.delete(waiter);
            reject(new MirrorViewLagError(options.what, catchUpMs));
          },
          Math.max(0, deadline - Date.now()),
        );
      });
    } finally {
      clearTimeout(timer);
    }
  };
  // One catch-up round: the first message of the filter past what is applied (a direct get by
  // subject); none means every message the mirror had when the round started is applied. Only
  // a view that is behind asks the stream how far it is, a bound that keeps the round from
  // chasing writes made after it started.
  const catchUp = async (): Promise<void> => {
    const deadline = Date.now() + catchUpMs;
    let last: number | undefined;
    for (;;) {
      const from = Math.max(applied, checked) + 1;
      if (last !== undefined && from > last) return;
      const reachedBefore = stream.seq;
      const next = await mirror.jsm.direct.getMessage(mirrorStream, {
        seq: from,
        next_by_subj: filter,
      });
      if (next === null || (last !== undefined && next.seq > last)) {
        checked = Math.max(checked, last ?? 0, next === null ? reachedBefore : 0);
        return;
      }
      stream.seq = Math.max(stream.seq, next.seq);
      last ??= (await mirror.jsm.streams.info(mirrorStream)).state.last_seq;
      await appliedUpTo(next.seq, deadline);
    }
  };
  // Concurrent calls share a round, but only one that starts after they were called: a call
  // arriving while a round is in flight joins the next one, which starts when that one ends.
  let inFlight: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const startRound = (): Promise<void> => {
    const round: Promise<void> = catchUp().finally(() => {
      if (inFlight === round) inFlight = undefined;
    });
    inFlight = round;
    return round;
  };
  const current = async (): Promise<void> => {
    if (ended) throw new MirrorViewLagError(options.what, 0);
    if (inFlight === undefined) return startRound();
    const after = inFlight.then(
      () => undefined,
      () => undefined,
    );
    queued ??= after.then(() => {
      queued = undefined;
      return startRound();
    });
    return queued;
  };
  const reachedSeq = async (seq: number): Promise<void> => {
    if (Math.max(applied, checked) >= seq) return;
    if (ended) throw new MirrorViewLagError(options.what, 0);
    try {
      await appliedUpTo(seq, Date.now() + Math.min(1_000, catchUpMs));
    } catch (error) {
      if (!(error instanceof MirrorViewLagError)) throw error;
      await current();
    }
  };
  await current();
  return {
    current,
    reached: reachedSeq,
    get ended() {
      return ended;
    },
    stop() {
      messages.stop();
      for (const waiter of waiters) waiter.resolve();
      waiters.clear();
    },
  };
}

/** Opens a view of `kind`; it is filled (and current) when the promise resolves. */
export async function openMirrorView<T>(
  mirror: MirrorSource,
  kind: string,
  options: { catchUpMs?: number } = {},
): Promise<MirrorView<T>> {
  // cluster token → namespace token → key → object
  const objects = new Map<string, Map<string, Map<string, T>>>();

  const apply = async (m: JsMsg): Promise<void> => {
    const key = m.subject.slice(subjectPrefix.length);
    const [cluster = '', , namespace = '', name = ''] = key.split('.');
    const value = await mirroredValue<T>(mirror, m);
    let inCluster = objects.get(cluster);
    if (value === 'deleted') {
      inCluster?.get(namespace)?.delete(name);
    } else if (value !== undefined) {
      if (inCluster === undefined)
        objects.set(cluster, (inCluster = new Map<string, Map<string, T>>()));
      let inNamespace = inCluster.get(namespace);
      if (inNamespace === undefined) inCluster.set(namespace, (inNamespace = new Map<string, T>()));
      inNamespace.set(name, value);
    }
  };
  const follower = await followMirror(mirror, `${subjectPrefix}*.${encodeToken(kind)}.*.*`, apply, {
    what: kind,
    ...options,
  });

  return {
    current: () => follower.current(),
    list(cluster, namespace) {
      const inCluster = objects.get(encodeToken(cluster));
      if (inCluster === undefined) return [];
      if (namespace !== undefined) {
        const ns = namespace === '' ? clusterScope : encodeToken(namespace);
        return [...(inCluster.get(ns)?.values() ?? [])];
      }
      return [...inCluster.values()].flatMap((inNamespace) => [...inNamespace.values()]);
    },
    stop: () => follower.stop(),
  };
}

/** A view opened on first use (and again after a failed open), for functions' loads. */
export interface LazyMirrorView<T> {
  /**
   * The current objects of the kind in `cluster`, optionally in one namespace. They are shared
   * between calls (an unchanged object is parsed once): read them, never change them.
   */
  list(cluster: string, namespace?: string): Promise<T[]>;
  stop(): void;
}

/**
 * A view of `kind` opened on first use. In a process keeping a live copy of the mirror
 * (mirror-copy.ts) it answers from the copy once the copy keeps the kind: the host's barrier
 * before a load, or before a trigger maps a change, made the copy as current as this view's own
 * round trip would, and the view's consumer is closed.
 */
export function lazyMirrorView<T>(mirror: MirrorSource, kind: string): LazyMirrorView<T> {
  let view: Promise<MirrorView<T>> | undefined;
  // Per listing (cluster, namespace), the objects it last answered by key, with the text each
  // was parsed from: the copy keeps an entry's text until it changes, and a view listed at every
  // change of another kind (an Operator's components) would parse all of them each time.
  const parsed = new Map<string, Map<string, { text: string; object: T }>>();
  const fromCopy = (listing: string, entries: readonly MirroredEntry[]): T[] => {
    const before = parsed.get(listing);
    const now = new Map<string, { text: string; object: T }>();
    const objects = entries.map(({ key, text }) => {
      const known = before?.get(key);
      const entry = known?.text === text ? known : { text, object: JSON.parse(text) as T };
      now.set(key, entry);
      return entry.object;
    });
    parsed.set(listing, now);
    return objects;
  };
  return {
    async list(cluster, namespace) {
      const kept = mirror.copy?.entries(cluster, kind, namespace);
      if (kept !== undefined) {
        void view?.then((v) => v.stop()).catch(() => undefined);
        view = undefined;
        return fromCopy(`${cluster}\u0000${namespace ?? '*'}`, kept);
      }
      view ??= openMirrorView<T>(mirror, kind);
      const opened = view;
      try {
        const live = await opened;
        await live.current();
        return live.list(cluster, namespace);
      } catch (error) {
        if (view === opened) view = undefined;
        // A view that fell behind keeps its consumer until stopped.
        void opened.then((v) => v.stop()).catch(() => undefined);
        throw error;
      }
    },
    stop() {
      void view?.then((v) => v.stop()).catch(() => undefined);
      view = undefined;
    },
  };
}
