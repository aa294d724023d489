// Follow-ups a host published with a basis (WorkItem.basis), so one about the same basis as the
// last it published for that key is not sent again. Remembered only once published: a pass that
// failed before its follow-ups went out sends them when it is tried again.
import type { WorkItem } from './types.js';

/** The basis of the last follow-up published per (cluster, queue, key), the oldest forgotten. */
export class PublishedFollowUps {
  private readonly bases = new Map<string, string>();

  /** @param limit How many keys are remembered; a forgotten one is published again. */
  constructor(private readonly limit = 10_000) {}

  private static keyOf(cluster: string, item: WorkItem): string {
    return [cluster, item.queue, ...item.key].join('\u0000');
  }

  /** The items still to publish: those without a basis, or whose basis differs from the last. */
  unsent(cluster: string, items: readonly WorkItem[] | undefined): WorkItem[] | undefined {
    return items?.filter(
      (item) =>
        item.basis === undefined ||
        this.bases.get(PublishedFollowUps.keyOf(cluster, item)) !== item.basis,
    );
  }

  /** Remembers the bases of `items`, just published. */
  published(cluster: string, items: readonly WorkItem[] | undefined): void {
    for (const item of items ?? []) {
      if (item.basis === undefined) continue;
      const key = PublishedFollowUps.keyOf(cluster, item);
      this.bases.delete(key);
      this.bases.set(key, item.basis);
    }
    for (const oldest of this.bases.keys()) {
      if (this.bases.size <= this.limit) break;
      this.bases.delete(oldest);
    }
  }
}
