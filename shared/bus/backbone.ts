// The JetStream assets olmq runs on, declared idempotently by every process that starts:
//
// - KV bucket olmq_objects: the watcher's mirror of cluster state, one entry per object (last
//   value only; deletions are KV delete markers). Its stream doubles as the change feed.
// - stream OLMQ_WORK (work-queue retention, one message per subject): pending work items. A
//   newer item for the same key replaces an older pending one, which is how a burst of
//   changes coalesces into one reconcile of the latest state.
// - KV bucket olmq_leases (entries expire after the lease TTL): which replica works a key.
// - KV bucket olmq_attempts: consecutive failures per work key, for backoff and dead-lettering.
// - stream OLMQ_DEAD: work given up on, one letter per key until handled (dead-letters.ts).
// - stream OLMQ_BODIES: mirror values larger than the max payload, in chunks, referenced from
//   their KV entry (large-values.ts).
//
// Only features of NATS 2.9 are used (one filter subject per consumer, no per-message TTL).
import type { NatsConnection } from '@nats-io/transport-node';
import {
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { BusPipe } from './pipe.js';
import { assets, bodySubjects, deadLetterSubjects, workSubjects } from './subjects.js';

/** Names of olmq's JetStream streams and KV buckets (subjects.ts describes the layout). */
export { assets };

/** Tunables of the backbone layout. */
export interface BackboneOptions {
  /** How long a work lease lives without renewal; a crashed replica's keys free up after it. */
  leaseTtlMs: number;
  /** JetStream replicas per stream (1 on a single server, 3 in production clusters). */
  replicas: number;
  /** How long dead-lettered work is kept. */
  deadLetterMaxAgeMs: number;
}

/** Defaults of BackboneOptions. */
export const defaultBackboneOptions: BackboneOptions = {
  leaseTtlMs: 15_000,
  replicas: 1,
  deadLetterMaxAgeMs: 7 * 24 * 3600_000,
};

/** Handles on the backbone's assets. */
export interface Backbone {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  objects: KV;
  leases: KV;
  attempts: KV;
  /** The hot path's publishes and one-way messages on nc, batched per event-loop turn. */
  pipe: BusPipe;
  options: BackboneOptions;
}

const nanos = (ms: number): number => ms * 1_000_000;

/** Creates (or finds, unchanged) every stream and bucket, and returns handles on them. */
export async function openBackbone(
  nc: NatsConnection,
  overrides: Partial<BackboneOptions> = {},
): Promise<Backbone> {
  const options = { ...defaultBackboneOptions, ...overrides };
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const kvm = new Kvm(js);
  const replicas = options.replicas;
  const [objects, leases, attempts] = await Promise.all([
    kvm.create(assets.objects, { history: 1, replicas, storage: StorageType.File }),
    kvm.create(assets.leases, { history: 1, replicas, ttl: options.leaseTtlMs }),
    kvm.create(assets.attempts, { history: 1, replicas, ttl: 24 * 3600_000 }),
  ]);
  await ensureStream(jsm, {
    name: assets.workStream,
    subjects: [workSubjects],
    retention: RetentionPolicy.Workqueue,
    max_msgs_per_subject: 1,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(120_000),
    storage: StorageType.File,
    num_replicas: replicas,
  });
  await ensureStream(jsm, {
    name: assets.deadStream,
    subjects: [deadLetterSubjects],
    retention: RetentionPolicy.Limits,
    max_msgs_per_subject: 1, // a key's newest letter says all there is to know
    max_age: nanos(options.deadLetterMaxAgeMs),
    storage: StorageType.File,
    num_replicas: replicas,
  });
  await ensureStream(jsm, {
    name: assets.bodyStream,
    subjects: [bodySubjects],
    retention: RetentionPolicy.Limits,
    // Readers fetch chunks by sequence with direct gets, like KV reads.
    allow_direct: true,
    storage: StorageType.File,
    num_replicas: replicas,
  });
  return { nc, js, jsm, objects, leases, attempts, pipe: new BusPipe(nc), options };
}

async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
) {
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch (error) {
    if (!isStreamNotFound(error)) throw error;
    try {
      await jsm.streams.add(config);
    } catch (raced) {
      // Another process created it between our info and add: the same config, so fine.
      if (!/already in use|already exists/i.test((raced as Error).message)) throw raced;
    }
  }
}

function isStreamNotFound(error: unknown): boolean {
  return error instanceof Error && /stream not found/i.test(error.message);
}
