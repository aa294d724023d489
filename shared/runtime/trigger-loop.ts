// A trigger's loop: maps the mirror's changes of one kind to work items. See Trigger in types.ts.
import type { JsMsg } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { Backbone } from '../bus/backbone.js';
import { isFenced, reportFenced } from '../bus/fencing.js';
import { BodyMissingError, isBodyRef, textOf } from '../bus/large-values.js';
import {
  partsButComponents,
  partsDiffer,
  partsHeader,
  viewEntry,
  viewSame,
  pickParts,
  type ObjectPart,
} from '../bus/object-parts.js';
import { mirrorSubjectPrefix, parseObjectKey } from '../bus/subjects.js';
import { publishWork } from '../bus/work-queue.js';
import {
  giveUpOnChange,
  unavailableRetryDelayMs,
  unavailableService,
  type FailureHost,
} from './dead-work.js';
import { backoffDelayMs } from './host-options.js';
import { LastSeen } from './last-seen.js';
import type { Trigger } from './types.js';

/** How many objects a trigger naming no parts remembers (about 3 MB). */
const componentsMemory = 20_000;

// Thrown by a change's object getter when the object is a reference not read yet.
const valueNotRead = new Error('the value of a large mirror entry is not read yet');

/**
 * What a trigger's loop needs of its host (FailureHost: its queue names the message ids, and a
 * change that fails maxAttempts times is dead-lettered).
 */
export interface TriggerHost extends FailureHost {
  backbone: Backbone;
  log: Logger;
  /** Aborted when the host stops: changes then go back unhandled. */
  stopping: AbortSignal;
}

// What a trigger remembers of a message it looked at: the parts it asked about (none without a
// signature: unknown) and the views it derived.
function remembered(
  signature: string | undefined,
  asked: ReadonlySet<ObjectPart>,
  views: ReadonlyMap<string, string>,
): string | undefined {
  const entries = [...views].map(([view, value]) => viewEntry(view, value));
  if (signature !== undefined) entries.unshift(pickParts(signature, asked));
  return entries.length > 0 ? entries.join(' ') : undefined;
}

// A failed change comes back after backoff; after maxAttempts deliveries it is dead-lettered
// (the host's redriver re-runs the trigger later) rather than retried for ever.
async function giveUpOrRetry(host: TriggerHost, m: JsMsg, error: unknown): Promise<void> {
  const failures = m.info.deliveryCount;
  const log = host.log.child({ subject: m.subject });
  const unavailable = unavailableService(error);
  if (unavailable !== undefined) {
    // Mapping a change needs NATS (and maybe the API): when one is unreachable the change waits
    // for it, however long, and never counts toward a dead letter.
    const delay = unavailableRetryDelayMs(error, failures, host.options);
    log.warn(
      { err: error, retryInMs: delay },
      `trigger met ${unavailable} unavailable; retrying without counting a failure`,
    );
    host.settle(() => m.nak(delay));
    return;
  }
  if (failures < host.options.maxAttempts) {
    const delay = backoffDelayMs(failures, host.options);
    log.warn({ err: error, failures, retryInMs: delay }, 'trigger failed; retrying with backoff');
    host.settle(() => m.nak(delay));
    return;
  }
  let ref;
  try {
    ref = parseObjectKey(m.subject.slice(mirrorSubjectPrefix.length));
  } catch (malformed) {
    // No object to name (a hand-written mirror key): nothing could ever map it.
    log.error({ err: malformed, cause: error }, 'trigger dropped a change of no object');
    host.settle(() => m.term('malformed mirror key'));
    return;
  }
  try {
    await giveUpOnChange(host, ref, { error, failures, redrives: 0, log });
    host.settle(() => m.term(error instanceof Error ? error.message : String(error)));
  } catch (failure) {
    // Not even the letter could be written (NATS unreachable): the change comes back later.
    log.warn({ err: failure, cause: error }, 'could not dead-letter a failed change; retrying');
    host.settle(() => m.nak(host.options.maxBackoffMs));
  }
}

// Maps changes to work items. Changes are handled concurrently (up to triggerWindow at once):
// work items name keys, not changes, so their order does not matter, and a redelivered
// change republishes with the same message id, which JetStream drops. The id names the
// queue: two definitions triggered by the same change must both get their item.
export async function runTrigger(
  trigger: Trigger,
  messages: AsyncIterable<JsMsg>,
  host: TriggerHost,
): Promise<void> {
  const { backbone, queue, options, stopping, settle } = host;
  const inflight = new Set<Promise<void>>();
  const lastSeen = new LastSeen(options.lastSeenLimit);
  // What a trigger naming no parts last mapped of recent objects, but their component labels:
  // enough to skip an install's labelling, which follows its objects' creation within a second.
  const mapped = new LastSeen(Math.min(options.lastSeenLimit, componentsMemory));
  const handle = async (m: JsMsg): Promise<void> => {
    try {
      const ref = parseObjectKey(m.subject.slice(mirrorSubjectPrefix.length));
      // A deposed watcher's write maps to no work: the active watcher writes the key again,
      // and that change is mapped instead.
      if ((await isFenced(backbone, ref.cluster, m.headers)) !== undefined) {
        reportFenced({ cluster: ref.cluster, reader: 'trigger' });
        settle(() => m.ack());
        return;
      }
      const operation = m.headers?.get('KV-Operation') ?? '';
      const deleted = operation === 'DEL' || operation === 'PURGE';
      const signature =
        m.headers?.has(partsHeader) === true ? m.headers.get(partsHeader) : undefined;
      const seen = lastSeen.get(m.subject);
      // Remembered: the parts asked about, of objects they were asked about (most triggers never
      // ask), so a bucket of 50,000 CSV copies costs no memory here.
      const asked = new Set<ObjectPart>();
      const touches = (parts: readonly ObjectPart[]): boolean => {
        for (const part of parts) asked.add(part);
        return deleted || partsDiffer(seen?.parts, signature, parts);
      };
      const views = new Map<string, string>();
      const differs = (view: string, value: string): boolean => {
        views.set(view, value);
        return deleted || !viewSame(seen?.parts, view, value);
      };
      if (trigger.parts !== undefined && !touches(trigger.parts)) {
        settle(() => m.ack());
        return;
      }
      // A trigger that names no parts reads all but the component labels: a change of those
      // alone (the operator function labelling an install's objects) does not wake it.
      const rest =
        trigger.parts === undefined && signature !== undefined && !deleted
          ? pickParts(signature, partsButComponents)
          : undefined;
      if (rest !== undefined && mapped.same(m.subject, m.seq, rest)) {
        settle(() => m.ack());
        return;
      }
      // Parsed only if the trigger looks at it: most map the key alone. A value too large to
      // publish whole is read only then too: the getter cannot wait, so it stops the mapping,
      // and the mapping (a pure function of the change) runs again once the value is read.
      let parsed: { object: unknown } | undefined;
      const reference = !deleted && isBodyRef(m.headers);
      const change = {
        ref,
        touches,
        differs,
        get object() {
          if (parsed === undefined && reference) throw valueNotRead;
          parsed ??= { object: deleted ? undefined : m.json<unknown>() };
          return parsed.object;
        },
      };
      // What the mapping reads of the mirror is at least as new as the change.
      await backbone.copy?.reached(ref.cluster, m.seq);
      let items;
      try {
        items = await trigger.workKeys(change);
      } catch (error) {
        if (error !== valueNotRead) throw error;
        const text = await textOf(backbone, m).catch((failure: unknown) => {
          if (failure instanceof BodyMissingError) return undefined; // its successor follows
          throw failure;
        });
        if (text === undefined) {
          settle(() => m.ack());
          return;
        }
        parsed = { object: JSON.parse(text) };
        items = await trigger.workKeys(change);
      }
      await Promise.all(
        items.map((item, i) =>
          publishWork(
            backbone,
            { queue: item.queue, cluster: ref.cluster, key: item.key },
            // Per queue: another definition triggered by the same change publishes its own item.
            `${queue}:${m.subject}@${m.seq}#${i}`,
          ),
        ),
      );
      settle(() => m.ack());
      if (rest !== undefined) mapped.look(m.subject, m.seq, rest);
      if (items.length > 0 && host.log.isLevelEnabled('debug'))
        host.log.debug(
          {
            subject: m.subject,
            // From the mirror write to now: how long the change waited for this trigger.
            lagMs: Math.round(Date.now() - m.info.timestampNanos / 1e6),
            work: items.map((item) => `${item.queue} ${item.key.join('/')}`),
          },
          'change mapped to work',
        );
      if (asked.size > 0 || views.size > 0 || seen !== undefined)
        lastSeen.look(m.subject, m.seq, deleted ? undefined : remembered(signature, asked, views));
    } catch (error) {
      await giveUpOrRetry(host, m, error);
    }
  };
  for await (const m of messages) {
    if (stopping.aborted) {
      settle(() => m.nak());
      continue;
    }
    const task = handle(m).finally(() => inflight.delete(task));
    inflight.add(task);
    if (inflight.size >= options.triggerWindow) await Promise.race(inflight);
  }
  // Once the host stops, changes still being mapped (say, a work publish waiting for a NATS
  // server that went away) are not waited for: unacknowledged, they come back to a replica.
  const stopped = new Promise<void>((resolve) => {
    if (stopping.aborted) resolve();
    else stopping.addEventListener('abort', () => resolve(), { once: true });
  });
  await Promise.race([Promise.allSettled([...inflight]), stopped]);
}
