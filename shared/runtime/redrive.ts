// The host's redriver: every redriveScanMs it looks at its queue's dead letters and gives each
// one that is due another go — a work letter's item is published again, a trigger letter's
// trigger re-run on the object as mirrored now. A letter is due redriveDelayMs after it was
// written (doubling with each redrive that died again), or at its notBefore (`olmq dlq
// redrive`). Every replica of a queue scans; a letter is redriven once whoever does it (the
// work item's message id names the letter) and removed.
import type { Logger } from 'pino';
import {
  listDeadLetters,
  redriveWorkLetter,
  removeDeadLetter,
  type DeadLetter,
  type StoredDeadLetter,
} from '../bus/dead-letters.js';
import { objectKey, type ObjectRef } from '../bus/subjects.js';
import { publishWork } from '../bus/work-queue.js';
import { giveUpOnChange, type FailureHost } from './dead-work.js';
import { redriveDelayMs } from './host-options.js';
import type { Trigger } from './types.js';

/** What the redriver needs of its host. */
export interface RedriveHost extends FailureHost {
  triggers: readonly Trigger[];
  log: Logger;
  /** Whether the host serves `cluster`: a pool redrives only its own clusters' letters. */
  serves?: (cluster: string) => boolean;
}

/** When `letter` is due for a redrive (ms since the epoch). */
export function redriveDueAt(letter: DeadLetter, host: Pick<RedriveHost, 'options'>): number {
  if (letter.notBefore !== undefined) return Date.parse(letter.notBefore);
  return Date.parse(letter.at) + redriveDelayMs(letter.redrives, host.options);
}

/** Starts scanning; returns a stop function that waits for a scan in progress. */
export function startRedriver(host: RedriveHost): () => Promise<void> {
  let scanning: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (scanning !== undefined) return;
    scanning = redriveDue(host)
      .then(() => undefined)
      .catch((error: unknown) => host.log.warn({ err: error }, 'dead letter scan failed'))
      .finally(() => (scanning = undefined));
  }, host.options.redriveScanMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await scanning;
  };
}

/** Redrives every letter of the host's queue that is due; returns how many it redrove. */
export async function redriveDue(host: RedriveHost): Promise<number> {
  const now = host.options.now().getTime();
  let redriven = 0;
  for (const stored of await listDeadLetters(host.backbone, { fn: host.queue })) {
    if (redriveDueAt(stored.letter, host) > now) continue;
    if (host.serves?.(stored.letter.cluster) === false) continue;
    const { letter } = stored;
    const log = host.log.child({ cluster: letter.cluster, key: letter.key.join('/') });
    if (letter.origin === 'work') await redriveWorkLetter(host.backbone, stored);
    else await rerunTrigger(host, stored, log);
    redriven++;
    host.metrics.redriven.inc({
      cluster: letter.cluster,
      function: host.queue,
      cause: 'schedule',
    });
    log.info({ reason: letter.reason, redrives: letter.redrives }, 'dead letter redriven');
  }
  return redriven;
}

// A trigger letter: map the object's current state to work again, as the change would have
// been. If the trigger fails again, a new letter (one more redrive) replaces this one.
async function rerunTrigger(host: RedriveHost, stored: StoredDeadLetter, log: Logger) {
  const { letter } = stored;
  const [kind = '', namespace = '', name = ''] = letter.key;
  const ref: ObjectRef = { cluster: letter.cluster, kind, namespace, name };
  const trigger = host.triggers.find((t) => t.kind === kind);
  try {
    if (trigger === undefined) throw new Error(`the ${host.queue} function has no ${kind} trigger`);
    const entry = await host.backbone.objects.get(objectKey(ref));
    const object = entry !== null && entry.operation === 'PUT' ? entry.json<unknown>() : undefined;
    const items = await trigger.workKeys({ ref, object, touches: () => true, differs: () => true });
    await Promise.all(
      items.map((item, i) =>
        publishWork(
          host.backbone,
          { queue: item.queue, cluster: ref.cluster, key: item.key },
          `redrive:${host.queue}:${stored.seq}#${i}`,
        ),
      ),
    );
  } catch (error) {
    await giveUpOnChange(host, ref, {
      error,
      failures: letter.failures,
      redrives: letter.redrives + 1,
      log,
    });
  }
  await removeDeadLetter(host.backbone, stored.seq);
}
