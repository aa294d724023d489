// Dead letters: work the function host gave up on, kept in stream OLMQ_DEAD (one per work key,
// the newest) until it is handled — the key reconciled after all (redriven by a change of its
// object, by the host's schedule, or by `olmq dlq redrive`) — or ages out. A letter is a record
// with a schema, checked on write and on read: the CLI and other processes read it.
import { DeliverPolicy } from '@nats-io/jetstream';
import { z } from 'zod';
import type { Backbone } from './backbone.js';
import {
  assets,
  clusterOfDeadLetterSubject,
  deadLetterFilter,
  deadLetterSubject,
  triggerDeadLetterSubject,
  type WorkKey,
} from './subjects.js';
import { bounded, publishWork } from './work-queue.js';

/** Why work was given up on: stable codes (metrics label them, `olmq dlq` shows them). */
export const deadLetterReasons = {
  /** The error said retrying cannot help (bad input that only a person can fix). */
  permanent: 'Permanent',
  /** It failed maxAttempts times in a row. */
  tooManyFailures: 'TooManyFailures',
  /** A trigger could not map an object's change to work, maxAttempts times. */
  triggerFailed: 'TriggerFailed',
} as const;
/** One of deadLetterReasons. */
export type DeadLetterReason = (typeof deadLetterReasons)[keyof typeof deadLetterReasons];

/** What is kept of work given up on. */
export const deadLetterSchema = z.object({
  /** The queue (function definition) that gave up. */
  function: z.string().min(1),
  cluster: z.string().min(1),
  /**
   * `work`: a work item, `key` its words; `trigger`: a change the queue's trigger could not
   * map to work, `key` the object's kind, namespace ("" when cluster-scoped) and name.
   */
  origin: z.enum(['work', 'trigger']).default('work'),
  key: z.array(z.string()),
  reason: z.enum(Object.values(deadLetterReasons)).default(deadLetterReasons.tooManyFailures),
  /** Consecutive failures when it was given up on. */
  failures: z.int().nonnegative(),
  /** The last error's message. */
  error: z.string(),
  /** When, as an RFC 3339 time. */
  at: z.string(),
  /** How often this key was redriven before and died again (spaces the scheduled redrives). */
  redrives: z.int().nonnegative().default(0),
  /** Redrive no earlier than this RFC 3339 time (set by `olmq dlq redrive` for trigger letters). */
  notBefore: z.string().optional(),
});
/** A dead letter as read. */
export type DeadLetter = z.infer<typeof deadLetterSchema>;
/** A dead letter as written (defaults may be left out). */
export type DeadLetterInput = z.input<typeof deadLetterSchema>;

/** A dead letter with its stream sequence, which names it for `show` and `redrive`. */
export interface StoredDeadLetter {
  seq: number;
  letter: DeadLetter;
}

/** A bad dead letter (written by hand or by another version): named, never half-read. */
export class MalformedDeadLetterError extends Error {
  readonly retryable = false;
  constructor(seq: number, detail: string) {
    super(`dead letter ${seq} is malformed: ${detail}`);
    this.name = 'MalformedDeadLetterError';
  }
}

function subjectOf(letter: DeadLetter): string {
  if (letter.origin === 'trigger') {
    const [kind = '', namespace = '', name = ''] = letter.key;
    return triggerDeadLetterSubject(letter.function, {
      cluster: letter.cluster,
      kind,
      namespace,
      name,
    });
  }
  return deadLetterSubject(letter.function, letter.cluster, letter.key);
}

function parseLetter(seq: number, data: Uint8Array): DeadLetter {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(data));
  } catch (error) {
    throw new MalformedDeadLetterError(seq, (error as Error).message);
  }
  const parsed = deadLetterSchema.safeParse(json);
  if (!parsed.success)
    throw new MalformedDeadLetterError(
      seq,
      parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    );
  return parsed.data;
}

/** Publishes a dead letter (checked against the schema) to OLMQ_DEAD. */
export async function publishDeadLetter(backbone: Backbone, entry: DeadLetterInput): Promise<void> {
  const letter = deadLetterSchema.parse({ ...entry, error: bounded(entry.error) });
  await backbone.js.publish(subjectOf(letter), JSON.stringify(letter));
}

/** Which dead letters: all, or those of a function, a cluster, a work key (all its words). */
export interface DeadLetterMatch {
  fn?: string;
  cluster?: string;
  key?: WorkKey;
}

/** How long a listing waits for the letters it counted (one may be removed meanwhile). */
const listExpiresMs = 2_000;

/** The dead letters matching `match`, oldest first; a malformed one throws, naming it. */
export async function listDeadLetters(
  backbone: Backbone,
  match: DeadLetterMatch = {},
): Promise<StoredDeadLetter[]> {
  const filter = deadLetterFilter(match);
  const info = await backbone.jsm.streams.info(assets.deadStream, { subjects_filter: filter });
  const count = Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
  if (count === 0) return [];
  const consumer = await backbone.js.consumers.get(assets.deadStream, {
    filter_subjects: filter,
    deliver_policy: DeliverPolicy.All,
  });
  const found: StoredDeadLetter[] = [];
  const messages = await consumer.fetch({ max_messages: count, expires: listExpiresMs });
  for await (const m of messages) {
    found.push({ seq: m.seq, letter: parseLetter(m.seq, m.data) });
    if (found.length >= count) break;
  }
  return found;
}

/** The dead letter stored at `seq`, or undefined when there is none (handled, or aged out). */
export async function readDeadLetter(
  backbone: Backbone,
  seq: number,
): Promise<StoredDeadLetter | undefined> {
  try {
    const m = await backbone.jsm.streams.getMessage(assets.deadStream, { seq });
    if (m === null) return undefined;
    return { seq, letter: parseLetter(seq, m.data) };
  } catch (error) {
    if (/no message found|message not found/i.test((error as Error).message)) return undefined;
    throw error;
  }
}

/** Removes the dead letter at `seq`; false when it was gone already. */
export async function removeDeadLetter(backbone: Backbone, seq: number): Promise<boolean> {
  try {
    return await backbone.jsm.streams.deleteMessage(assets.deadStream, seq, false);
  } catch (error) {
    if (/no message found|message not found/i.test((error as Error).message)) return false;
    throw error;
  }
}

/** Removes the dead letter of one work key (handled: the key was reconciled after all). */
export async function clearDeadLetter(
  backbone: Backbone,
  item: { queue: string; cluster: string; key: WorkKey },
): Promise<{ purged: number }> {
  const { purged } = await backbone.jsm.streams.purge(assets.deadStream, {
    filter: deadLetterSubject(item.queue, item.cluster, item.key),
  });
  return { purged };
}

/** Dead letters of `queue` per cluster (for the olmq_dead_letters gauge). */
export async function deadLetterCounts(
  backbone: Backbone,
  queue: string,
): Promise<Map<string, number>> {
  const info = await backbone.jsm.streams.info(assets.deadStream, {
    subjects_filter: deadLetterFilter({ fn: queue }),
  });
  const counts = new Map<string, number>();
  for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
    const cluster = clusterOfDeadLetterSubject(subject);
    counts.set(cluster, (counts.get(cluster) ?? 0) + n);
  }
  return counts;
}

/**
 * Asks the host of a trigger letter's function to redrive it at its next scan (a trigger runs
 * only there): rewrites the letter due now. Work letters are redriven at once (redriveWorkLetter).
 */
export async function requestTriggerRedrive(
  backbone: Backbone,
  stored: StoredDeadLetter,
  now: Date,
): Promise<void> {
  await publishDeadLetter(backbone, { ...stored.letter, notBefore: now.toISOString() });
  await removeDeadLetter(backbone, stored.seq);
}

/**
 * Gives a work letter's key another go: publishes its work item (once per letter, whoever asks:
 * the message id names the letter) and removes the letter; if the work dies again, a new letter
 * takes its place. Trigger letters cannot be redriven here: their function's host re-runs the
 * trigger (see FunctionHost), so they are returned false and left alone.
 */
export async function redriveWorkLetter(
  backbone: Backbone,
  stored: StoredDeadLetter,
): Promise<boolean> {
  const { letter } = stored;
  if (letter.origin !== 'work') return false;
  await publishWork(
    backbone,
    { queue: letter.function, cluster: letter.cluster, key: letter.key },
    `redrive:${assets.deadStream}:${stored.seq}`,
  );
  await removeDeadLetter(backbone, stored.seq);
  return true;
}
