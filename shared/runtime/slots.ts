// How many reconciles of one host run at once: a slot is taken before a reconcile starts and
// given back when it ends; takers beyond the limit wait in arrival order.

/** A counting semaphore of `size` slots. */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Resolves once a slot is this caller's. */
  take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Gives a slot back: to the longest waiter, if any. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
