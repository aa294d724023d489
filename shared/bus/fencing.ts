// Fencing of the object mirror: only the cluster's current watcher may change it. Each watcher
// term has an epoch, the leaseTransitions of the Lease it won (shared/kube/leader-election.ts),
// which only grows. A new leader records its epoch under epochKey(cluster) before it publishes
// anything, and every mirror write it makes carries the epoch in the header `Olmq-Epoch`. A
// write whose epoch is lower than the recorded one comes from a deposed leader (paused, or cut
// off from the API server but not from NATS) and is refused where the mirror is read: the
// trigger loop maps no work from it, mirror views keep the value they had, point reads fail
// with a retryable error. The current leader follows its cluster's writes and publishes its own
// value again over any such write, so the mirror converges (watcher/fence.ts).
//
// Why readers and not the write itself: JetStream on NATS 2.9 can make a publish conditional
// only on the last sequence of its own subject, not of another key; fencing every write that
// way would cost a read of each key before each write. The epoch header costs nothing extra.
// Writes without the header (records functions put beside the objects, values written before
// fencing existed) are not fenced.
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { z } from 'zod';
import type { Backbone } from './backbone.js';
import type { BusPipe } from './pipe.js';
import { directGetLastSubject, epochKey, mirrorStream, mirrorSubject } from './subjects.js';

/** Header of a mirror write: the Lease epoch of the watcher term that wrote it. */
export const epochHeader = 'Olmq-Epoch';

/** The value of an epoch key: the epoch of the cluster's active watcher, and who it is. */
export const EpochRecordSchema = z.object({
  epoch: z.number().int().nonnegative(),
  holder: z.string(),
});
export type EpochRecord = z.infer<typeof EpochRecordSchema>;

/** A newer watcher term recorded its epoch already: this one is deposed and must not write. */
export class EpochSupersededError extends Error {
  constructor(
    readonly cluster: string,
    readonly epoch: number,
    readonly recorded: EpochRecord,
  ) {
    super(
      `watcher epoch ${epoch} of cluster ${cluster} is superseded by epoch ${recorded.epoch} (${recorded.holder})`,
    );
    this.name = 'EpochSupersededError';
  }
}

/**
 * A mirror entry was written by a deposed watcher; the active one writes it again. Retrying
 * helps (the function host retries it as it does an unreachable service).
 */
export class FencedEntryError extends Error {
  constructor(
    readonly key: string,
    readonly epoch: number,
    readonly recorded: number,
  ) {
    super(
      `mirror entry ${key} was written by a deposed watcher (epoch ${epoch} < ${recorded}); waiting for the active watcher to repair it`,
    );
    this.name = 'FencedEntryError';
  }
}

/** The epoch a mirror message carries, or undefined for a write that is not fenced. */
export function epochOf(headers: MsgHdrs | undefined): number | undefined {
  const text = headers?.get(epochHeader);
  if (text === undefined || text === '') return undefined;
  const epoch = Number(text);
  return Number.isSafeInteger(epoch) && epoch >= 0 ? epoch : undefined;
}

/** Headers of a mirror write of `epoch` (KV-Operation and the like are added by the caller). */
export function epochHeaders(epoch: number): MsgHdrs {
  const h = natsHeaders();
  h.set(epochHeader, String(epoch));
  return h;
}

const decoder = new TextDecoder();

// The recorded epoch and the stream sequence of its message (0 when none is recorded).
async function readEpoch(
  mirror: Pick<Backbone, 'pipe'>,
  cluster: string,
): Promise<{ record: EpochRecord | undefined; seq: number }> {
  const answer = await mirror.pipe.request(
    directGetLastSubject(mirrorStream, mirrorSubject(epochKey(cluster))),
  );
  const status = answer.headers?.code ?? 0;
  if (status === 404) return { record: undefined, seq: 0 };
  if (status !== 0)
    throw new Error(`reading the epoch of ${cluster}: ${answer.headers?.description ?? status}`);
  const seq = Number(answer.headers?.get('Nats-Sequence') ?? 0);
  if (answer.data.length === 0) return { record: undefined, seq };
  const parsed = EpochRecordSchema.safeParse(JSON.parse(decoder.decode(answer.data)));
  return { record: parsed.success ? parsed.data : undefined, seq };
}

/**
 * Records `record` as the cluster's epoch, conditionally on the key's last sequence so two
 * candidates cannot both record theirs; resolves with the record's stream sequence. Throws
 * EpochSupersededError when an epoch as high (of another holder) or higher is recorded.
 */
export async function recordEpoch(
  mirror: Pick<Backbone, 'pipe'>,
  cluster: string,
  record: EpochRecord,
): Promise<number> {
  for (;;) {
    const { record: recorded, seq } = await readEpoch(mirror, cluster);
    if (
      recorded !== undefined &&
      (recorded.epoch > record.epoch ||
        (recorded.epoch === record.epoch && recorded.holder !== record.holder))
    )
      throw new EpochSupersededError(cluster, record.epoch, recorded);
    try {
      const ack = await mirror.pipe.publish(
        mirrorSubject(epochKey(cluster)),
        JSON.stringify(record),
        { expectLastSubjectSequence: seq, headers: epochHeaders(record.epoch) },
      );
      remember(mirror.pipe, cluster, record.epoch);
      return ack.seq;
    } catch (error) {
      // Another candidate wrote meanwhile: read again and judge its record.
      if (!/wrong last sequence/i.test((error as Error).message)) throw error;
    }
  }
}

/** A write refused because a newer watcher term recorded its epoch. */
export interface FencedWrite {
  cluster: string;
  /** Who refused it: trigger, read, view (readers) or watcher (the repair). */
  reader: 'trigger' | 'read' | 'view' | 'watcher';
}

/** Told of every refused write in this process (metrics: olmq_mirror_fenced_writes_total). */
export const fencedWriteListeners = new Set<(write: FencedWrite) => void>();

/** Counts a refused write. */
export function reportFenced(write: FencedWrite): void {
  for (const listener of fencedWriteListeners) listener(write);
}

/** How long a reader trusts the epoch it read before reading it again. */
export const epochRefreshMs = 1_000;

interface Known {
  epoch: number;
  /** When the record was last read (Date.now()), or undefined if only learned from writes. */
  readAt: number | undefined;
  reading: Promise<number> | undefined;
}

// Per connection (pipe): cluster → the highest epoch known. Learned from the epoch key, read
// again at most every epochRefreshMs while entries are read, and from writes carrying a higher
// epoch (which only a newer term can write).
const books = new WeakMap<BusPipe, Map<string, Known>>();

function bookOf(pipe: BusPipe): Map<string, Known> {
  let book = books.get(pipe);
  if (book === undefined) books.set(pipe, (book = new Map<string, Known>()));
  return book;
}

function remember(pipe: BusPipe, cluster: string, epoch: number): void {
  const book = bookOf(pipe);
  const known = book.get(cluster);
  if (known === undefined) book.set(cluster, { epoch, readAt: undefined, reading: undefined });
  else if (epoch > known.epoch) known.epoch = epoch;
}

/** The highest epoch of `cluster` this process knows, reading the record when it is old. */
export async function recordedEpoch(
  mirror: Pick<Backbone, 'pipe'>,
  cluster: string,
): Promise<number> {
  const book = bookOf(mirror.pipe);
  let known = book.get(cluster);
  if (known === undefined)
    book.set(cluster, (known = { epoch: 0, readAt: undefined, reading: undefined }));
  if (known.readAt !== undefined && Date.now() - known.readAt < epochRefreshMs) return known.epoch;
  const entry = known;
  entry.reading ??= readEpoch(mirror, cluster)
    .then(({ record }) => {
      entry.readAt = Date.now();
      if (record !== undefined && record.epoch > entry.epoch) entry.epoch = record.epoch;
      return entry.epoch;
    })
    .finally(() => (entry.reading = undefined));
  return entry.reading;
}

/**
 * Whether a mirror message of `cluster` with `headers` comes from a deposed watcher: its epoch
 * is lower than the recorded one. Unfenced writes (no epoch) never are.
 */
export async function isFenced(
  mirror: Pick<Backbone, 'pipe'>,
  cluster: string,
  headers: MsgHdrs | undefined,
): Promise<{ epoch: number; recorded: number } | undefined> {
  const epoch = epochOf(headers);
  if (epoch === undefined) return undefined;
  const recorded = await recordedEpoch(mirror, cluster);
  if (epoch >= recorded) {
    remember(mirror.pipe, cluster, epoch);
    return undefined;
  }
  return { epoch, recorded };
}
