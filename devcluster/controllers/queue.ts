// A keyed work queue for the in-process controllers: a burst of changes to one key yields one
// reconcile, run asynchronously so controllers never re-enter the store's commit.
import type { Logger } from 'pino';

/** Reconciles one key; a thrown error retries the key after a short delay. */
export type Reconcile = (key: string) => void;

/** Coalescing work queue processed on the event loop. */
export class WorkQueue {
  private readonly pending = new Set<string>();
  private scheduled = false;
  private stopped = false;
  private readonly retries = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly name: string,
    private readonly reconcile: Reconcile,
    private readonly logger: Logger,
  ) {}

  /** Queues a key (no-op when already queued). */
  add(key: string): void {
    if (this.stopped) return;
    this.pending.add(key);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  /** Queues a key after a delay (timers do not keep the process alive). */
  addAfter(key: string, delayMs: number): void {
    if (delayMs <= 0) return this.add(key);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** Stops processing and cancels delayed keys. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.pending.clear();
  }

  private drain(): void {
    this.scheduled = false;
    if (this.stopped) return;
    const keys = [...this.pending];
    this.pending.clear();
    for (const key of keys) {
      try {
        this.reconcile(key);
        this.retries.delete(key);
      } catch (error) {
        const attempt = (this.retries.get(key) ?? 0) + 1;
        this.retries.set(key, attempt);
        this.logger.debug(
          { err: error, controller: this.name, key, attempt },
          'reconcile failed; retrying',
        );
        this.addAfter(key, Math.min(1000, 10 * 2 ** Math.min(attempt, 7)));
      }
    }
  }
}
