// Full objects read from the API, cached by uid and resourceVersion (content identity), for
// the few fields the mirror trims. Bounded; entries are never stale, only evicted.
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';

/** A bounded cache of full objects keyed by uid@resourceVersion. */
export class FullObjectCache<T extends KubeObject> {
  private readonly entries = new Map<string, Promise<T | undefined>>();
  constructor(private readonly capacity: number) {}

  /** The full form of `mirrored` (same uid and resourceVersion), from the API on a miss. */
  get(client: KubeClient, mirrored: T): Promise<T | undefined> {
    const key = `${client.cluster}/${mirrored.metadata.uid ?? ''}@${mirrored.metadata.resourceVersion ?? ''}`;
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const read = client
      .get<T>({
        apiVersion: mirrored.apiVersion,
        kind: mirrored.kind,
        namespace: mirrored.metadata.namespace,
        name: mirrored.metadata.name,
      })
      .then(
        // The API may be ahead of the mirror; either way the object read is the newer truth.
        (full) => full ?? undefined,
        (error: unknown) => {
          this.entries.delete(key);
          throw error;
        },
      );
    this.entries.set(key, read);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return read;
  }
}
