// Consumer leader elections, as the servers announce them. The server leading a replicated
// consumer holds the consume's pull requests; when it dies they die with it, and the leader
// elected next has none: the consume gets nothing until nats.js notices its missed heartbeats
// (up to 30 s), or the supervisor's periodic look finds it (supervised-consumer.ts). The new
// leader's advisory lets the supervisor look at once. One NATS subscription per stream and
// connection, shared by every consumer of that stream.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';

/** The subject of the advisories a new leader of a consumer of `stream` publishes. */
export const leaderElectedSubject = (stream: string): string =>
  `$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.${stream}.*`;

interface StreamWatch {
  subscription: Subscription;
  listeners: Map<string, Set<() => void>>;
}

const watches = new WeakMap<NatsConnection, Map<string, StreamWatch>>();

/**
 * Calls `listener` whenever a leader of durable consumer `consumer` of `stream` is elected (its
 * leader died or stepped down, or it was just created). Returns the function that stops it.
 */
export function onConsumerLeaderElected(
  nc: NatsConnection,
  consumer: { stream: string; name: string },
  listener: () => void,
): () => void {
  let streams = watches.get(nc);
  if (streams === undefined) {
    streams = new Map();
    watches.set(nc, streams);
  }
  let watch = streams.get(consumer.stream);
  if (watch === undefined) {
    const listeners = new Map<string, Set<() => void>>();
    const subscription = nc.subscribe(leaderElectedSubject(consumer.stream), {
      callback: (error, msg) => {
        if (error !== null) return;
        const name = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
        for (const l of listeners.get(name) ?? []) l();
      },
    });
    watch = { subscription, listeners };
    streams.set(consumer.stream, watch);
  }
  const named = watch.listeners.get(consumer.name) ?? new Set();
  watch.listeners.set(consumer.name, named);
  named.add(listener);
  const w = watch;
  const all = streams;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    named.delete(listener);
    if (named.size === 0) w.listeners.delete(consumer.name);
    if (w.listeners.size > 0) return;
    w.subscription.unsubscribe();
    all.delete(consumer.stream);
  };
}
