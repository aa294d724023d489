// How many reconciles a host runs at once: a counting semaphore, first come first served.

/** `size` slots; acquire waits while none is free. */
export class Slots {
  private free: number;
  private readonly waiters: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Resolves once a slot is ours. */
  acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Hands our slot to the longest waiter, or frees it. */
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.free++;
  }
}
