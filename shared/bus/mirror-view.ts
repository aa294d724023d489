// A live in-memory copy of one kind of the watcher's mirror, for kinds a function reads whole
// at every reconcile (every OperatorGroup of a cluster, say): listing them from the mirror
// each time costs a request per object. One ordered consumer of the kind's subjects fills the
// view with the latest entry of each key and then follows every change.
//
// A reconcile must see at least the change that triggered it, which reached the function
// through another consumer: `current()` asks the view's consumer how far the stream is (one
// request) and waits until the view has applied that much.
import { DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { isDeletion, mirrorStream, subjectPrefix, type MirrorSource } from './mirror-read.js';
import { clusterScope, encodeToken } from './subjects.js';

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

/** Opens a view of `kind`; it is filled (and current) when the promise resolves. */
export async function openMirrorView<T>(
  mirror: MirrorSource,
  kind: string,
  options: { catchUpMs?: number } = {},
): Promise<MirrorView<T>> {
  const catchUpMs = options.catchUpMs ?? 10_000;
  // cluster token → namespace token → key → object
  const objects = new Map<string, Map<string, Map<string, T>>>();
  // The last message applied: its consumer (an ordered consumer is replaced after a gap, and
  // its sequence starts again) and its sequence in that consumer.
  let applied = { consumer: '', sequence: 0 };
  const waiters = new Set<{ consumer: string; until: number; resolve: () => void }>();
  const reached = (consumer: string, until: number): boolean =>
    applied.consumer === consumer && applied.sequence >= until;

  const apply = (m: JsMsg): void => {
    const key = m.subject.slice(subjectPrefix.length);
    const [cluster = '', , namespace = '', name = ''] = key.split('.');
    const deleted = isDeletion(m.headers?.get('KV-Operation')) || m.data.length === 0;
    let inCluster = objects.get(cluster);
    if (deleted) {
      inCluster?.get(namespace)?.delete(name);
    } else {
      if (inCluster === undefined)
        objects.set(cluster, (inCluster = new Map<string, Map<string, T>>()));
      let inNamespace = inCluster.get(namespace);
      if (inNamespace === undefined) inCluster.set(namespace, (inNamespace = new Map<string, T>()));
      inNamespace.set(name, m.json<T>());
    }
    applied = { consumer: m.info.consumer, sequence: m.info.deliverySequence };
    for (const waiter of waiters) {
      if (reached(waiter.consumer, waiter.until)) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    }
  };

  const consumer = await mirror.js.consumers.get(mirrorStream, {
    filter_subjects: `${subjectPrefix}*.${encodeToken(kind)}.*.*`,
    deliver_policy: DeliverPolicy.LastPerSubject,
  });
  const messages: ConsumerMessages = await consumer.consume();
  void (async () => {
    for await (const m of messages) apply(m);
  })().catch(() => undefined); // ends with the connection; current() then reports the lag

  const current = async (): Promise<void> => {
    const info = await consumer.info();
    const until = info.delivered.consumer_seq + info.num_pending;
    if (until === 0 || reached(info.name, until)) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        const waiter = { consumer: info.name, until, resolve };
        waiters.add(waiter);
        timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new MirrorViewLagError(kind, catchUpMs));
        }, catchUpMs);
      });
    } finally {
      clearTimeout(timer);
    }
  };
  await current();

  return {
    current,
    list(cluster, namespace) {
      const inCluster = objects.get(encodeToken(cluster));
      if (inCluster === undefined) return [];
      if (namespace !== undefined) {
        const ns = namespace === '' ? clusterScope : encodeToken(namespace);
        return [...(inCluster.get(ns)?.values() ?? [])];
      }
      return [...inCluster.values()].flatMap((inNamespace) => [...inNamespace.values()]);
    },
    stop() {
      messages.stop();
      for (const waiter of waiters) waiter.resolve();
      waiters.clear();
    },
  };
}

/** A view opened on first use (and again after a failed open), for functions' loads. */
export interface LazyMirrorView<T> {
  /** The current objects of the kind in `cluster`, optionally in one namespace. */
  list(cluster: string, namespace?: string): Promise<T[]>;
  stop(): void;
}

export function lazyMirrorView<T>(mirror: MirrorSource, kind: string): LazyMirrorView<T> {
  let view: Promise<MirrorView<T>> | undefined;
  return {
    async list(cluster, namespace) {
      view ??= openMirrorView<T>(mirror, kind);
      const opened = view;
      try {
        const live = await opened;
        await live.current();
        return live.list(cluster, namespace);
      } catch (error) {
        if (view === opened) view = undefined;
        throw error;
      }
    },
    stop() {
      void view?.then((v) => v.stop()).catch(() => undefined);
      view = undefined;
    },
  };
}
