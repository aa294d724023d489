// Upkeep of the backbone, run by the watcher (the mirror's writer): how full each olmq stream is
// against its byte limit (a gauge, and a warning once it passes a threshold), and purging the
// mirror's delete markers once they are old. The mirror keeps one message per key, so a deleted
// object leaves a marker that NATS 2.9 never removes by itself (2.11's per-bucket marker TTL is
// not available there); readers have seen a delete long before it is purged.
import { DeliverPolicy } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { Backbone } from './backbone.js';
import { assets, kvStream } from './subjects.js';

/** The streams whose fill is measured (the object store's is measured when it exists). */
export const measuredStreams: readonly string[] = [
  kvStream(assets.objects),
  kvStream(assets.leases),
  kvStream(assets.attempts),
  assets.workStream,
  assets.deadStream,
  'OBJ_olmq_catalogs',
];

/** How the upkeep runs. */
export interface UpkeepOptions {
  log: Logger;
  registry: Registry;
  /** Delete markers older than this are purged; the check runs every tenth of it. */
  purgeDeletesAfterMs: number;
  /** How often stream fill is measured; default 30 s. */
  measureEveryMs?: number;
  /** Fill ratio from which a warning is logged; default 0.8. */
  warnRatio?: number;
}

/** A running upkeep. */
export interface Upkeep {
  /** Measures every stream now (also done on the schedule). */
  measure(): Promise<void>;
  /** Purges old delete markers now; resolves with how many were purged. */
  purge(): Promise<number>;
  stop(): void;
}

/** Starts measuring and purging on a schedule. */
export function startUpkeep(backbone: Backbone, options: UpkeepOptions): Upkeep {
  const { log } = options;
  const warnRatio = options.warnRatio ?? 0.8;
  // One set of gauges per registry, however many upkeeps (tests start several systems).
  const existing = (name: string): Gauge | undefined =>
    options.registry.getSingleMetric(name) as Gauge | undefined;
  const usage =
    existing('olmq_jetstream_stream_usage_ratio') ??
    new Gauge({
      name: 'olmq_jetstream_stream_usage_ratio',
      help: 'Bytes stored in an olmq stream over its byte limit (1 = full: writes are refused or the oldest dropped).',
      labelNames: ['stream'],
      registers: [options.registry],
    });
  const purged =
    existing('olmq_jetstream_delete_markers_purged') ??
    new Gauge({
      name: 'olmq_jetstream_delete_markers_purged',
      help: 'Delete markers purged from the object mirror by the last upkeep run.',
      registers: [options.registry],
    });
  const warned = new Set<string>();
  const measure = async (): Promise<void> => {
    for (const stream of measuredStreams) {
      let info;
      try {
        info = await backbone.jsm.streams.info(stream);
      } catch (error) {
        if (error instanceof Error && /stream not found/i.test(error.message)) continue;
        throw error;
      }
      const limit = info.config.max_bytes;
      if (limit <= 0) continue;
      const ratio = info.state.bytes / limit;
      usage.set({ stream }, ratio);
      if (ratio >= warnRatio && !warned.has(stream)) {
        warned.add(stream);
        log.warn(
          { stream, bytes: info.state.bytes, maxBytes: limit },
          `stream ${stream} is ${Math.round(ratio * 100)}% full: raise its limit or find what fills it`,
        );
      } else if (ratio < warnRatio) warned.delete(stream);
    }
  };
  const purge = async (): Promise<number> => {
    const count = await purgeDeleteMarkers(
      backbone,
      kvStream(assets.objects),
      options.purgeDeletesAfterMs,
    );
    purged.set(count);
    if (count > 0) log.info({ purged: count }, 'purged old delete markers from the mirror');
    return count;
  };
  const guarded = (what: string, run: () => Promise<unknown>) => () => {
    run().catch((error: unknown) => log.warn({ err: error }, `backbone upkeep: ${what} failed`));
  };
  const timers = [
    setInterval(guarded('measuring streams', measure), options.measureEveryMs ?? 30_000),
    setInterval(
      guarded('purging delete markers', purge),
      Math.max(1_000, options.purgeDeletesAfterMs / 10),
    ),
  ];
  for (const timer of timers) timer.unref();
  guarded('measuring streams', measure)();
  return {
    measure,
    purge,
    stop() {
      for (const timer of timers) clearInterval(timer);
    },
  };
}

/**
 * Removes the delete markers of `stream` (a KV bucket's) older than `olderThanMs`. Each purge
 * stops at the marker's own sequence, so a value written to the key after the marker survives.
 * Resolves with the number of markers purged.
 */
export async function purgeDeleteMarkers(
  backbone: Backbone,
  stream: string,
  olderThanMs: number,
  now: number = Date.now(),
): Promise<number> {
  const info = await backbone.jsm.streams.info(stream);
  if (info.state.messages === 0) return 0;
  const cutoff = BigInt(now - olderThanMs) * 1_000_000n;
  // Headers only: the markers are recognised by their KV-Operation header, values are not needed.
  const consumer = await backbone.js.consumers.get(stream, {
    deliver_policy: DeliverPolicy.All,
    headers_only: true,
  });
  const markers: { subject: string; seq: number }[] = [];
  for (;;) {
    const batch = await consumer.fetch({ max_messages: 1_000, expires: 2_000 });
    let seen = 0;
    let done = false;
    for await (const m of batch) {
      seen += 1;
      const operation = m.headers?.get('KV-Operation');
      if ((operation === 'DEL' || operation === 'PURGE') && m.timestampNanos < cutoff)
        markers.push({ subject: m.subject, seq: m.seq });
      if (m.info.pending === 0 || m.seq >= info.state.last_seq) done = true;
    }
    if (done || seen === 0) break;
  }
  let count = 0;
  for (const marker of markers) {
    const answer = await backbone.jsm.streams.purge(stream, {
      filter: marker.subject,
      seq: marker.seq + 1,
    });
    count += answer.purged;
  }
  return count;
}
