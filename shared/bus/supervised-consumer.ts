// A durable consumer's messages that keep coming through NATS failovers.
//
// nats.js's consume() is meant to recover by itself after a reconnect (it checks the consumer
// and pulls again), but on a 3-node cluster some consumes stopped pulling: the server showed
// messages pending, no pull request waiting and nothing in flight. A server we were connected
// to, SIGKILLed mid-burst, left some ended for good (bench/chaos-nats.ts); any server that dies
// takes the pull requests of the consumers it led with it, and the leader elected next has none
// (nats.js notices only after two missed heartbeats, 30 s). So the consume is watched from
// outside, by what the server says:
// - an iterator that ends (or throws) while nobody stopped it is opened again;
// - when a new leader of the consumer is elected (its advisory, consumer-leaders.ts), the
//   consumer's state is read: no pull request waiting, twice in a row, and the consume is
//   opened again (a fresh pull, a fresh heartbeat monitor);
// - as a safety net, while the loop is waiting for a message and none came for a check period,
//   the consumer's state is read; messages pending with no pull request waiting, in looks a
//   moment apart, is a stall: the consume is opened again.
// Messages the stopped consume had buffered but not handed out come back after ack_wait;
// work is keyed and level-triggered, so a redelivery is harmless.
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { Backbone } from './backbone.js';
import { onConsumerLeaderElected } from './consumer-leaders.js';

/** Tunables of superviseConsumer. */
export interface SuperviseOptions {
  /** How often a quiet consume is compared with the consumer's state on the server. */
  checkEveryMs: number;
  /** Looks in a row that must find it stalled before it is opened again. */
  stalledChecks: number;
  /** Time between those looks, so a pull being renewed is not taken for none. */
  confirmGapMs: number;
  /** Delay before opening again after opening failed (e.g. during a leader election). */
  retryMs: number;
}

// After an election the JetStream API may answer nothing for a while (the meta leader may have
// died too): the look at the new leader is tried again, for about this many retry periods.
const leaderLookAttempts = 30;

export const defaultSuperviseOptions: SuperviseOptions = {
  checkEveryMs: 5_000,
  stalledChecks: 2,
  confirmGapMs: 250,
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
  backbone: Pick<Backbone, 'jsm' | 'nc'>,
  consumer: { stream: string; name: string },
  first: ConsumerMessages,
  reopen: () => Promise<ConsumerMessages>,
  log: Logger,
  options: Partial<SuperviseOptions> = {},
): SupervisedMessages {
  const { checkEveryMs, stalledChecks, confirmGapMs, retryMs } = {
    ...defaultSuperviseOptions,
    ...options,
  };
  const where = { stream: consumer.stream, consumer: consumer.name };
  let current: ConsumerMessages | undefined = first;
  let stopped = false;
  let reopened = 0;
  // Whether the loop is waiting for the consume (not busy with what it was given), and since
  // when it was last given something.
  let awaitingNext = false;
  let lastDelivery = Date.now();
  // The looks under way, by what they look for (a periodic one and one after an election).
  const looking = new Set<string>();
  // Set when a look stopped the consume on purpose (logged there, not again as an end).
  let restarting = false;
  let wake: () => void = () => undefined;

  // Reads the consumer's state `stalledChecks` times, `confirmGapMs` apart: its pending count
  // when every look found `stalled`, undefined at once when one did not. When NATS cannot tell
  // (an election, say), the look is tried again `retryMs` later, up to `attempts` times.
  const looksStalled = async (
    stalled: (info: { num_pending: number; num_waiting: number }) => boolean,
    attempts: number,
  ): Promise<{ pending: number } | undefined> => {
    let pending = 0;
    let failures = 0;
    for (let looks = 0; looks < stalledChecks;) {
      if (looks > 0 || failures > 0) {
        const gap = failures > 0 ? retryMs : confirmGapMs;
        await new Promise((resolve) => setTimeout(resolve, gap));
      }
      if (stopped) return undefined;
      try {
        const info = await backbone.jsm.consumers.info(consumer.stream, consumer.name);
        if (!stalled(info)) return undefined;
        pending = info.num_pending;
        looks++;
        failures = 0;
      } catch {
        if (++failures >= attempts) return undefined;
      }
    }
    return { pending };
  };
  const look = async (
    stalled: (info: { num_pending: number; num_waiting: number }) => boolean,
    attempts: number,
    message: string,
  ): Promise<void> => {
    if (stopped || looking.has(message)) return;
    looking.add(message);
    try {
      const found = await looksStalled(stalled, attempts);
      if (found === undefined || stopped || current === undefined) return;
      log.warn({ ...where, pending: found.pending }, message);
      restarting = true;
      current.stop();
    } finally {
      looking.delete(message);
    }
  };
  const check = (): void => {
    if (!awaitingNext || Date.now() - lastDelivery < checkEveryMs) return;
    void look(
      (info) => info.num_pending > 0 && info.num_waiting === 0 && awaitingNext,
      1, // the next period looks again
      'consumer stalled (messages pending, no pull waiting); opening it again',
    );
  };
  const timer = setInterval(check, checkEveryMs);
  timer.unref();
  // A consume always keeps a pull request at the leader; a new one that has none lost it.
  const stopWatchingLeaders = onConsumerLeaderElected(backbone.nc, consumer, () => {
    void look(
      (info) => info.num_waiting === 0 && current !== undefined,
      leaderLookAttempts,
      'consumer has a new leader that holds no pull of ours; opening it again',
    );
  });
  const end = (): void => {
    clearInterval(timer);
    stopWatchingLeaders();
  };

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
      current = undefined;
    }
    end();
  }

  const iterable = messages();
  return {
    [Symbol.asyncIterator]: () => iterable,
    stop() {
      stopped = true;
      end();
      current?.stop();
      wake();
    },
    get reopened() {
      return reopened;
    },
  };
}
