// The active watcher's side of fencing (shared/bus/fencing.ts): it records its term's epoch
// before it writes anything, then follows every write to its cluster's keys (headers only) and
// has the mirror write again any key a deposed term wrote after that, so readers, who refuse
// such writes, find the current value again.
import { DeliverPolicy } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { Backbone } from '../shared/bus/backbone.js';
import { EpochSupersededError, epochOf, recordEpoch, reportFenced } from '../shared/bus/fencing.js';
import { isBackboneUnavailable } from '../shared/bus/unavailable.js';
import {
  decodeToken,
  encodeToken,
  mirrorStream,
  mirrorSubject,
  mirrorSubjectPrefix,
  parseObjectKey,
} from '../shared/bus/subjects.js';

/** A key a deposed term wrote: an object's, or a namespace's name index entry. */
export type FencedKey =
  | { what: 'object'; kind: string; namespace: string; name: string; seq: number }
  | { what: 'names'; kind: string; namespace: string };

/** Which mirror key `key` is (after the cluster), or undefined for keys the watcher does not own. */
export function fencedKeyOf(key: string, seq: number): FencedKey | undefined {
  const tokens = key.split('.');
  if (tokens[1] === '=names' && tokens.length === 4)
    return {
      what: 'names',
      kind: decodeToken(tokens[2] ?? '='),
      namespace: decodeToken(tokens[3] ?? '='),
    };
  if (tokens.length !== 4 || tokens[1]?.startsWith('=') === true) return undefined;
  const ref = parseObjectKey(key);
  return { what: 'object', kind: ref.kind, namespace: ref.namespace, name: ref.name, seq };
}

/**
 * Records the term's epoch for `cluster`, retrying while NATS is unreachable and the term
 * lasts; resolves with the record's stream sequence. Throws EpochSupersededError when a newer
 * term recorded its own.
 */
export async function recordTerm(
  backbone: Backbone,
  cluster: string,
  term: { epoch: number; holder: string },
  leadership: AbortSignal,
  log: Logger,
): Promise<number | undefined> {
  for (let delayMs = 100; !leadership.aborted; delayMs = Math.min(delayMs * 2, 5_000)) {
    try {
      return await recordEpoch(backbone, cluster, term);
    } catch (error) {
      if (error instanceof EpochSupersededError || !isBackboneUnavailable(error)) throw error;
      log.warn({ err: error, retryInMs: delayMs }, 'could not record the watcher epoch; retrying');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
  return undefined;
}

/**
 * Follows the writes to `cluster`'s keys from stream sequence `fromSeq` and hands each key a
 * term older than `epoch` wrote to `repair`. Resolves once the follower runs.
 */
export async function followFencedWrites(
  backbone: Backbone,
  cluster: string,
  epoch: number,
  fromSeq: number,
  repair: (key: FencedKey) => void,
  log: Logger,
): Promise<{ stop(): void }> {
  const consumer = await backbone.js.consumers.get(mirrorStream, {
    filter_subjects: mirrorSubject(`${encodeToken(cluster)}.>`),
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: fromSeq,
    headers_only: true,
  });
  const messages = await consumer.consume();
  void (async () => {
    for await (const m of messages) {
      const written = epochOf(m.headers);
      if (written === undefined || written >= epoch) continue;
      const key = fencedKeyOf(m.subject.slice(mirrorSubjectPrefix.length), m.seq);
      if (key === undefined) continue;
      reportFenced({ cluster, reader: 'watcher' });
      log.warn(
        { key: m.subject.slice(mirrorSubjectPrefix.length), epoch: written, current: epoch },
        'a deposed watcher wrote to the mirror; writing the key again',
      );
      repair(key);
    }
  })().catch((error: unknown) =>
    log.warn({ err: error }, 'following the mirror for fenced writes stopped'),
  );
  return { stop: () => messages.stop() };
}
