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
  type Placement,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { BusPipe } from './pipe.js';
import { assets, bodySubjects, deadLetterSubjects, kvStream, workSubjects } from './subjects.js';

/** Names of olmq's JetStream streams and KV buckets (subjects.ts describes the layout). */
export { assets };

/** Where JetStream places a stream: a cluster of a super-cluster ("" for any), servers with given tags. */
export type { Placement };

/** Size limits of the backbone's assets, in bytes. Writes beyond them are refused or drop the oldest. */
export interface BackboneLimits {
  /** The object mirror: a cluster's OLM objects, trimmed (refuses writes when full). */
  objectsBytes: number;
  /** Pending work items (one per key; the oldest are dropped when full). */
  workBytes: number;
  /** Dead-lettered work (the oldest are dropped when full). */
  deadBytes: number;
  /** Leases and failure counts (small entries, one per key being worked or failing). */
  leasesBytes: number;
  attemptsBytes: number;
  /** Catalog indexes and contents by digest (the object store). */
  catalogsBytes: number;
}

/** Tunables of the backbone layout. */
export interface BackboneOptions {
  /** How long a work lease lives without renewal; a crashed replica's keys free up after it. */
  leaseTtlMs: number;
  /**
   * JetStream replicas of every stream and bucket (1 on a single server, 3 on a cluster). When
   * set, existing assets are changed to it; when undefined, new ones get 1 and existing ones
   * keep theirs, so a process started without the option never shrinks a cluster's R3.
   */
  replicas: number | undefined;
  /** Where new assets are placed; undefined lets JetStream choose. */
  placement: Placement | undefined;
  /** How long dead-lettered work is kept. */
  deadLetterMaxAgeMs: number;
  limits: BackboneLimits;
}

const MiB = 1024 * 1024;

/** Defaults of BackboneOptions. */
export const defaultBackboneOptions: BackboneOptions = {
  leaseTtlMs: 15_000,
  replicas: undefined,
  placement: undefined,
  deadLetterMaxAgeMs: 7 * 24 * 3600_000,
  limits: {
    objectsBytes: 2048 * MiB,
    workBytes: 1024 * MiB,
    deadBytes: 256 * MiB,
    leasesBytes: 64 * MiB,
    attemptsBytes: 64 * MiB,
    catalogsBytes: 8192 * MiB,
  },
};

/** The replicas a new asset gets. */
export const newAssetReplicas = (options: BackboneOptions): number => options.replicas ?? 1;

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
  /**
   * A function process's live copy of the mirror (mirror-copy.ts): its reads of the mirror
   * are answered from it where it keeps the kind. Absent elsewhere (the watcher, the CLI).
   */
  copy?: MirrorCopy;
}

/** A live mirror entry: its key and its value (JSON text). */
export interface MirroredEntry {
  key: string;
  text: string;
}

/** A live copy of the mirror, per cluster (implemented by mirror-copy.ts). */
export interface MirrorCopy {
  /**
   * Resolves once the copy of `cluster` has applied mirror sequence `seq` (a change of the
   * cluster seen by another consumer), or without one, every change the mirror had (a round
   * trip). The first call of a cluster starts following it.
   */
  reached(cluster: string, seq?: number): Promise<void>;
  /**
   * Resolves true once the copy of `cluster` has applied one more change of the mirror, false
   * after `withinMs` without one (or when it does not follow the cluster): for a load waiting a
   * moment for its own write to come back rather than reading the API.
   */
  changed(cluster: string, withinMs: number): Promise<boolean>;
  /**
   * The value of the live entry of `key` (an object key), null when there is none; undefined
   * when the copy does not keep its kind (yet): read it from NATS.
   */
  text(key: string): string | null | undefined;
  /**
   * The live entries of `kind` in `cluster`, in `namespace` ("" for cluster-scoped ones; every
   * namespace when undefined), optionally only those named `name`; undefined when the copy does
   * not keep the kind (yet).
   */
  entries(
    cluster: string,
    kind: string,
    namespace?: string,
    name?: string,
  ): MirroredEntry[] | undefined;
  stop(): void;
}

const nanos = (ms: number): number => ms * 1_000_000;

/**
 * Creates (or finds) every stream and bucket, and returns handles on them. An existing asset is
 * changed only where it differs from what `overrides` ask (replicas when given, limits), so
 * processes that only use the backbone need no right to change it.
 */
export async function openBackbone(
  nc: NatsConnection,
  overrides: Partial<BackboneOptions> = {},
): Promise<Backbone> {
  const options: BackboneOptions = {
    ...defaultBackboneOptions,
    ...overrides,
    limits: { ...defaultBackboneOptions.limits, ...overrides.limits },
  };
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const kvm = new Kvm(js);
  const replicas = newAssetReplicas(options);
  const placement = options.placement === undefined ? {} : { placement: options.placement };
  const { limits } = options;
  const bucket = (name: string, maxBytes: number, ttl?: number): Promise<KV> =>
    kvm.create(name, {
      history: 1,
      replicas,
      storage: StorageType.File,
      max_bytes: maxBytes,
      ...(ttl === undefined ? {} : { ttl }),
      ...placement,
    });
  const [objects, leases, attempts] = await Promise.all([
    bucket(assets.objects, limits.objectsBytes),
    bucket(assets.leases, limits.leasesBytes, options.leaseTtlMs),
    bucket(assets.attempts, limits.attemptsBytes, 24 * 3600_000),
  ]);
  // A bucket that existed keeps its config through kvm.create: bring its replicas and limits in line.
  await Promise.all([
    alignStream(jsm, kvStream(assets.objects), options, limits.objectsBytes),
    alignStream(jsm, kvStream(assets.leases), options, limits.leasesBytes),
    alignStream(jsm, kvStream(assets.attempts), options, limits.attemptsBytes),
  ]);
  await ensureStream(jsm, options, {
    name: assets.workStream,
    subjects: [workSubjects],
    retention: RetentionPolicy.Workqueue,
    max_msgs_per_subject: 1,
    max_bytes: limits.workBytes,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(120_000),
    storage: StorageType.File,
    num_replicas: replicas,
    ...placement,
  });
  await ensureStream(jsm, options, {
    name: assets.deadStream,
    subjects: [deadLetterSubjects],
    retention: RetentionPolicy.Limits,
    max_msgs_per_subject: 1, // a key's newest letter says all there is to know
    max_age: nanos(options.deadLetterMaxAgeMs),
    max_bytes: limits.deadBytes,
    discard: DiscardPolicy.Old,
    storage: StorageType.File,
    num_replicas: replicas,
    ...placement,
  });
  await ensureStream(jsm, options, {
    name: assets.bodyStream,
    subjects: [bodySubjects],
    retention: RetentionPolicy.Limits,
    // Readers fetch chunks by sequence with direct gets, like KV reads.
    allow_direct: true,
    // Mirror values too large for a publish: they count toward the mirror's limit.
    max_bytes: limits.objectsBytes,
    storage: StorageType.File,
    num_replicas: replicas,
    ...placement,
  });
  return { nc, js, jsm, objects, leases, attempts, pipe: new BusPipe(nc), options };
}

/**
 * Changes an existing stream's replicas (when asked for) and byte limit where they differ from
 * `options`; a stream that matches is left alone (no update request at all).
 */
export async function alignStream(
  jsm: JetStreamManager,
  name: string,
  options: BackboneOptions,
  maxBytes: number,
): Promise<void> {
  const { config } = await jsm.streams.info(name);
  const change: Partial<StreamConfig> = {};
  if (options.replicas !== undefined && config.num_replicas !== options.replicas)
    change.num_replicas = options.replicas;
  if (config.max_bytes !== maxBytes) change.max_bytes = maxBytes;
  if (Object.keys(change).length > 0) await jsm.streams.update(name, change);
}

async function ensureStream(
  jsm: JetStreamManager,
  options: BackboneOptions,
  config: Partial<StreamConfig> & { name: string },
) {
  try {
    const { config: existing } = await jsm.streams.info(config.name);
    const { num_replicas: _replicas, placement: _placement, ...wanted } = config;
    const differs = Object.entries(wanted).some(
      ([field, value]) =>
        JSON.stringify(existing[field as keyof StreamConfig]) !== JSON.stringify(value),
    );
    if (differs) await jsm.streams.update(config.name, wanted);
    await alignStream(jsm, config.name, options, config.max_bytes ?? -1);
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
