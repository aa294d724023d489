// The devcluster's clock: wall time plus an offset tests move forward, so that time-driven
// controllers (CronJob schedules, Job deadlines) can be tested without waiting real minutes.

/** What time-driven controllers read the time from and hear jumps of. */
export interface Clock {
  /** The current (possibly advanced) time. */
  now(): Date;
  /** Calls `listener` after each jump forward; returns the unsubscribe function. */
  onAdvance(listener: () => void): () => void;
}

/** Wall time shifted by the sum of the `advance` calls (the Devcluster's `clock` hook). */
export class AdjustableClock implements Clock {
  private offsetMs = 0;
  private readonly listeners = new Set<() => void>();

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** Moves the clock forward by `ms` and tells the listeners. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`cannot advance the clock by ${ms}`);
    this.offsetMs += ms;
    for (const listener of this.listeners) listener();
  }

  onAdvance(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
