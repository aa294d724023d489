// Flow control of one kind's mirror publishes: at most `limit` are unacknowledged at once.
// Without it, a burst of watch events (10,000 namespaces' CSV copies arriving together) put
// every change on the wire at once, each holding its message, its pending request and its
// intent until NATS acknowledged it. Keys waiting for room keep only their newest change, so a
// key changed again while it waits is published once, with its latest value.
//
// Order per key holds: a key waiting here sends nothing directly (its newer changes replace the
// waiting one), and everything leaves through one pipe in the order dispatched.

/** A change to send; `seq` orders the changes of one key. */
export interface WindowItem {
  seq: number;
}

/**
 * Sends one change; returns its publish (settled once acknowledged or failed), or undefined when
 * nothing was sent (the change waits elsewhere, or the term ended).
 */
export type Dispatch<T> = (key: string, item: T) => Promise<unknown> | undefined;

/** Default limit of unacknowledged mirror publishes per kind. */
export const defaultMaxInFlight = 256;

/** Publishes of one kind, at most `limit` unacknowledged at once. */
export class PublishWindow<T extends WindowItem> {
  #inFlight = 0;
  readonly #waiting = new Map<string, T>();
  #stopped = false;

  constructor(
    private readonly limit: number,
    private readonly dispatch: Dispatch<T>,
  ) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`publish window limit must be a positive integer, got ${limit}`);
  }

  /** Sends `item` now if there is room and `key` is not waiting; else it waits (newest kept). */
  submit(key: string, item: T): void {
    if (this.#stopped) return;
    const waiting = this.#waiting.get(key);
    if (waiting !== undefined) {
      // An older change (a retry scheduled before a newer change came) must not replace it.
      if (item.seq >= waiting.seq) this.#waiting.set(key, item);
      return;
    }
    if (this.#inFlight >= this.limit) {
      this.#waiting.set(key, item);
      return;
    }
    this.#start(key, item);
  }

  /** Changes waiting for room (newest per key). */
  waiting(): IterableIterator<T> {
    return this.#waiting.values();
  }

  /** Publishes sent and not yet acknowledged. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Drops what waits; publishes in flight settle on their own. */
  stop(): void {
    this.#stopped = true;
    this.#waiting.clear();
  }

  #start(key: string, item: T): void {
    const sent = this.dispatch(key, item);
    if (sent === undefined) return;
    this.#inFlight++;
    const settled = (): void => {
      this.#inFlight--;
      this.#drain();
    };
    sent.then(settled, settled);
  }

  #drain(): void {
    while (!this.#stopped && this.#inFlight < this.limit) {
      const next = this.#waiting.entries().next();
      if (next.done === true) return;
      const [key, item] = next.value;
      this.#waiting.delete(key);
      this.#start(key, item);
    }
  }
}
