// A durable consumer's messages that keep coming through NATS failovers.
//
// nats.js's consume() is meant to recover by itself after a reconnect (it checks the consumer
// and pulls again), but on a 3-node cluster whose server we were connected to was SIGKILLed
// mid-burst, some consumes ended or stopped pulling for good: the server showed messages
// pending, no pull request waiting and nothing in flight, and the function waited for ever
// (bench/chaos-nats.ts). So the consume is watched from outside, by what the server says:
// - an iterator that ends (or throws) while nobody stopped it is opened again;
// - while the loop is waiting for a message and none came for a check period, the consumer's
//   state is read; messages pending with no pull request waiting, twice in a row, is a stall:
//   the consume is stopped and opened again (a fresh pull, a fresh heartbeat monitor).
// Messages the stopped consume had buffered but not handed out come back after ack_wait;
// work is keyed and level-triggered, so a redelivery is harmless.
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { Backbone } from './backbone.js';

/** Tunables of superviseConsumer. */
export interface SuperviseOptions {
  /** How often a quiet consume is compared with the consumer's state on the server. */
  checkEveryMs: number;
  /** Checks in a row that must find it stalled before it is opened again. */
  stalledChecks: number;
  /** Delay before opening again after opening failed (e.g. during a leader election). */
  retryMs: number;
}

export const defaultSuperviseOptions: SuperviseOptions = {
  checkEveryMs: 5_000,
  stalledChecks: 2,
  retryMs: 1_000,
};

/** The messages of one durable consumer, across re-opened consumes. */
export interface SupervisedMessages extends AsyncIterable<JsMsg> {
  /** Ends the iteration (buffered messages are redelivered after ack_wait). */
  stop(): void;
  /** How often the consume was opened again after it ended or stalled. */
  readonly reopened: number;
}

/**
 * Supervises the consume `first` of durable `consumer`; `reopen` opens a new consume of it.
 * Iterate the result once.
 */
export function superviseConsumer(
  backbone: Pick<Backbone, 'jsm'>,
  consumer: { stream: string; name: string },
  first: ConsumerMessages,
  reopen: () => Promise<ConsumerMessages>,
  log: Logger,
  options: Partial<SuperviseOptions> = {},
): SupervisedMessages {
  const { checkEveryMs, stalledChecks, retryMs } = { ...defaultSuperviseOptions, ...options };
  const where = { stream: consumer.stream, consumer: consumer.name };
  let current: ConsumerMessages | undefined = first;
  let stopped = false;
  let reopened = 0;
  // Whether the loop is waiting for the consume (not busy with what it was given), and since
  // when it was last given something.
  let awaitingNext = false;
  let lastDelivery = Date.now();
  let stalls = 0;
  let checking = false;
  // Set when the check stopped the consume on purpose (logged there, not again as an end).
  let restarting = false;
  let wake: () => void = () => undefined;

  const check = async (): Promise<void> => {
    if (stopped || checking) return;
    if (!awaitingNext || Date.now() - lastDelivery < checkEveryMs) {
      stalls = 0;
      return;
    }
    checking = true;
    try {
      const info = await backbone.jsm.consumers.info(consumer.stream, consumer.name);
      const stalled = info.num_pending > 0 && info.num_waiting === 0 && awaitingNext;
      stalls = stalled ? stalls + 1 : 0;
      if (stalls >= stalledChecks && !stopped) {
        stalls = 0;
        log.warn(
          { ...where, pending: info.num_pending },
          'consumer stalled (messages pending, no pull waiting); opening it again',
        );
        restarting = true;
        current?.stop();
      }
    } catch {
      // NATS unreachable or the consumer's leader in election: nothing to conclude yet.
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), checkEveryMs);
  timer.unref();

  async function* messages(): AsyncGenerator<JsMsg> {
    let opened: ConsumerMessages | undefined = first;
    while (!stopped) {
      if (opened === undefined) {
        try {
          opened = await reopen();
        } catch (error) {
          if (stopped) break;
          log.warn({ ...where, err: error }, 'could not open the consumer; retrying');
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, retryMs);
            wake = () => {
              clearTimeout(t);
              resolve();
            };
          });
          continue;
        }
        if (stopped) {
          opened.stop();
          break;
        }
        reopened++;
      }
      current = opened;
      lastDelivery = Date.now();
      const it = opened[Symbol.asyncIterator]();
      try {
        for (;;) {
          awaitingNext = true;
          const next = await it.next();
          awaitingNext = false;
          if (next.done === true) break;
          lastDelivery = Date.now();
          yield next.value;
        }
        if (!stopped && !restarting) log.warn(where, 'consumer ended; opening it again');
      } catch (error) {
        if (!stopped) log.warn({ ...where, err: error }, 'consumer failed; opening it again');
      } finally {
        awaitingNext = false;
      }
      restarting = false;
      opened = undefined;
    }
    clearInterval(timer);
  }

  const iterable = messages();
  return {
    [Symbol.asyncIterator]: () => iterable,
    stop() {
      stopped = true;
      clearInterval(timer);
      current?.stop();
      wake();
    },
    get reopened() {
      return reopened;
    },
  };
}
