// Object storage of the devcluster: objects by resource/namespace/name, one cluster-wide
// resourceVersion, and a bounded event log for watches that resume from a resourceVersion.
import type { JsonObject } from '../../shared/kube/json.js';
import type { ChangeEvent, ChangeListener, EventsSince, Journal } from './types.js';

interface Bucket {
  objects: Map<string, JsonObject>;
  /** Sorted "namespace/name" keys, rebuilt lazily after creates and deletes. */
  sorted: string[] | undefined;
}

function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function metadataOf(object: JsonObject): JsonObject {
  return object['metadata'] as JsonObject;
}

/**
 * Events kept for watches resuming from a resourceVersion. Older resumes get 410 Expired and
 * clients re-list, as with kube's watch cache; the bound keeps a long-running server's memory flat.
 */
export const defaultEventLogSize = 25_000;

/** In-memory object store with a global resourceVersion and a ring of recent events. */
export class ObjectStore {
  private readonly buckets = new Map<string, Bucket>();
  private readonly uids = new Map<string, { key: string; namespace: string; name: string }>();
  private readonly listeners = new Set<ChangeListener>();
  private readonly ring: (ChangeEvent | undefined)[];
  private ringStart = 0;
  private ringLength = 0;
  private rv: number;
  /** Events with rv at or below this are no longer available (watch answers 410 Expired). */
  private expiredThrough: number;
  journal: Journal | undefined;

  constructor(options: { eventLogSize?: number; initialResourceVersion?: number } = {}) {
    this.ring = new Array<ChangeEvent | undefined>(options.eventLogSize ?? defaultEventLogSize);
    this.rv = options.initialResourceVersion ?? 1;
    this.expiredThrough = this.rv - 1;
  }

  /** The latest committed resourceVersion. */
  currentResourceVersion(): number {
    return this.rv;
  }

  /** One object, or undefined. */
  get(key: string, namespace: string, name: string): JsonObject | undefined {
    return this.buckets.get(key)?.objects.get(objectKey(namespace, name));
  }

  /** Locates an object by uid (for owner references). */
  byUid(uid: string): { key: string; namespace: string; name: string } | undefined {
    return this.uids.get(uid);
  }

  /** Objects of a resource in namespace/name order, optionally within one namespace. */
  list(key: string, namespace?: string): JsonObject[] {
    const bucket = this.buckets.get(key);
    if (!bucket) return [];
    bucket.sorted ??= [...bucket.objects.keys()].sort();
    const out: JsonObject[] = [];
    const prefix = namespace === undefined ? undefined : `${namespace}/`;
    for (const k of bucket.sorted) {
      if (prefix !== undefined && !k.startsWith(prefix)) continue;
      const object = bucket.objects.get(k);
      if (object) out.push(object);
    }
    return out;
  }

  /** Number of objects of a resource. */
  count(key: string): number {
    return this.buckets.get(key)?.objects.size ?? 0;
  }

  /** Storage keys that hold objects. */
  keys(): string[] {
    return [...this.buckets.keys()].filter((k) => (this.buckets.get(k)?.objects.size ?? 0) > 0);
  }

  /**
   * Stores an object (create or replace), assigning the next resourceVersion to
   * metadata.resourceVersion. The object must be fresh: the store keeps it as is.
   */
  put(key: string, object: JsonObject): JsonObject {
    const metadata = metadataOf(object);
    const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';
    const name = metadata['name'] as string;
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = { objects: new Map(), sorted: undefined }));
    const k = objectKey(namespace, name);
    const previous = bucket.objects.get(k);
    const rv = ++this.rv;
    metadata['resourceVersion'] = String(rv);
    bucket.objects.set(k, object);
    if (!previous) bucket.sorted = undefined;
    const uid = metadata['uid'];
    if (typeof uid === 'string') this.uids.set(uid, { key, namespace, name });
    const event: ChangeEvent = previous
      ? { rv, type: 'MODIFIED', key, namespace, name, object, previous }
      : { rv, type: 'ADDED', key, namespace, name, object };
    this.commit(event);
    return object;
  }

  /** Removes an object; the DELETED event carries a copy with the deletion's resourceVersion. */
  remove(key: string, namespace: string, name: string): JsonObject | undefined {
    const bucket = this.buckets.get(key);
    const k = objectKey(namespace, name);
    const previous = bucket?.objects.get(k);
    if (!bucket || !previous) return undefined;
    bucket.objects.delete(k);
    bucket.sorted = undefined;
    const uid = metadataOf(previous)['uid'];
    if (typeof uid === 'string') this.uids.delete(uid);
    const rv = ++this.rv;
    const object: JsonObject = {
      ...previous,
      metadata: { ...metadataOf(previous), resourceVersion: String(rv) },
    };
    this.commit({ rv, type: 'DELETED', key, namespace, name, object, previous });
    return object;
  }

  /** Loads an object recovered from disk without emitting events. */
  restore(key: string, object: JsonObject): void {
    const metadata = metadataOf(object);
    const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';
    const name = metadata['name'] as string;
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = { objects: new Map(), sorted: undefined }));
    bucket.objects.set(objectKey(namespace, name), object);
    bucket.sorted = undefined;
    const uid = metadata['uid'];
    if (typeof uid === 'string') this.uids.set(uid, { key, namespace, name });
    const rv = Number(metadata['resourceVersion']);
    if (rv > this.rv) this.rv = rv;
  }

  /** Drops a recovered object without emitting events. */
  restoreRemoval(key: string, namespace: string, name: string, rv: number): void {
    const bucket = this.buckets.get(key);
    const previous = bucket?.objects.get(objectKey(namespace, name));
    if (bucket && previous) {
      bucket.objects.delete(objectKey(namespace, name));
      bucket.sorted = undefined;
      const uid = metadataOf(previous)['uid'];
      if (typeof uid === 'string') this.uids.delete(uid);
    }
    if (rv > this.rv) this.rv = rv;
  }

  /** After recovery: history before now is unknown, so older watches must re-list. */
  sealHistory(): void {
    this.expiredThrough = this.rv - 1;
  }

  /** Makes every resourceVersion up to now too old (fault injection: 410 on the next watch). */
  expireHistory(): void {
    this.expiredThrough = this.rv;
    this.ringStart = 0;
    this.ringLength = 0;
    this.ring.fill(undefined);
  }

  /** Events of one resource after `rv`, or the oldest still-known version when `rv` is too old. */
  eventsSince(rv: number, key: string | undefined): EventsSince {
    if (rv < this.expiredThrough) return { ok: false, oldest: this.expiredThrough + 1 };
    const events: ChangeEvent[] = [];
    for (let i = 0; i < this.ringLength; i++) {
      const event = this.ring[(this.ringStart + i) % this.ring.length];
      if (event && event.rv > rv && (key === undefined || event.key === key)) events.push(event);
    }
    return { ok: true, events };
  }

  /** Whether history back to `rv` is still known. */
  isExpired(rv: number): boolean {
    return rv < this.expiredThrough;
  }

  /** Registers a listener for every future change; returns the unsubscribe function. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once every change committed so far is durable (immediately without a journal). */
  async flushed(): Promise<void> {
    if (this.journal) await this.journal.flushed();
  }

  private commit(event: ChangeEvent): void {
    const capacity = this.ring.length;
    if (this.ringLength === capacity) {
      const dropped = this.ring[this.ringStart];
      if (dropped) this.expiredThrough = dropped.rv;
      this.ring[this.ringStart] = event;
      this.ringStart = (this.ringStart + 1) % capacity;
    } else {
      this.ring[(this.ringStart + this.ringLength) % capacity] = event;
      this.ringLength++;
    }
    this.journal?.append(event);
    for (const listener of this.listeners) listener(event);
  }
}
