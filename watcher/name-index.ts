// The names of one kind's mirrored objects per namespace, kept in the mirror beside them
// (namesKey), so a function lists a namespace with one read instead of a scan of every key
// (shared/bus/mirror-read.ts). Cluster-scoped objects are not indexed.
//
// Order makes it safe. A name is published into its entry before the object's first put, through
// the same pipe (shared/bus/pipe.ts) into the same stream, so a reconcile triggered by that put finds the
// name; a name is removed only after the object's deletion is published. If an entry's
// publish fails, objects it announced may have landed without their names: once the entry
// lands again they are published again (`reannounce`), so their triggers run once more.
//
// A namespace holding more than `nameIndexLimit` objects of the kind is marked as too many to
// list instead (readers then scan its keys): republishing a growing list at every new name costs
// the square of the count.
import type { Logger } from 'pino';
import type { Backbone } from '../shared/bus/backbone.js';
import { epochHeaders } from '../shared/bus/fencing.js';
import { readNameIndex } from '../shared/bus/mirror-read.js';
import { indexedKey, mirrorSubject, namesKey, tooManyNames } from '../shared/bus/subjects.js';

/** Most names an index entry lists; a namespace with more is marked tooManyNames. */
export const nameIndexLimit = 256;

/** What the index of one kind in one cluster needs. */
export interface NameIndexContext {
  cluster: string;
  kind: string;
  backbone: Backbone;
  log: Logger;
  /** The watcher term's Lease epoch, carried by every entry written (shared/bus/fencing.ts). */
  epoch: number;
  /** Whether the term's lease is still current: nothing is written once it is not. */
  current: () => boolean;
  /** Publishes the current state of an object again, so its triggers run once more. */
  reannounce(namespace: string, name: string): void;
}

interface Entry {
  names: Set<string>;
  /** False while the names are unknown (an earlier watcher left the entry marked too many). */
  known: boolean;
  /** The entry's newest publish marked it tooManyNames. */
  marked: boolean;
  /** Sequence of the entry's newest publish. */
  seq: number;
  /** Names announced by publishes that failed: published again once the entry lands. */
  unannounced: Set<string>;
}

const newEntry = (names: Iterable<string> = [], known = true): Entry => ({
  names: new Set(names),
  known,
  marked: !known,
  seq: 0,
  unannounced: new Set(),
});

/** The name index of one kind in one cluster; the active watcher is its only writer. */
export class NameIndex {
  readonly #context: NameIndexContext;
  readonly #entries = new Map<string, Entry>();
  /** Namespaces whose entry must be published again after a failure. */
  readonly #dirty = new Set<string>();
  #retryTimer: NodeJS.Timeout | undefined;
  #retryDelayMs = 100;
  #stopped = false;
  /** No converge yet in this term: it writes every entry, over any a deposed term left. */
  #firstConverge = true;

  constructor(context: NameIndexContext) {
    this.#context = context;
  }

  /** Takes over the entries an earlier watcher left, then marks the kind indexed. */
  async open(): Promise<void> {
    const { backbone, cluster, kind } = this.#context;
    for (const [namespace, names] of await readNameIndex(backbone, cluster, kind)) {
      if (!this.#entries.has(namespace))
        this.#entries.set(namespace, names === undefined ? newEntry([], false) : newEntry(names));
    }
    await backbone.objects.put(indexedKey(cluster, kind), '{}');
  }

  /** Call before an object's put is published: announces its name if the entry lacks it. */
  add(namespace: string, name: string): void {
    if (namespace === '') return;
    let entry = this.#entries.get(namespace);
    if (entry === undefined) this.#entries.set(namespace, (entry = newEntry()));
    if (entry.names.has(name)) return;
    entry.names.add(name);
    this.#publish(namespace, entry, name);
  }

  /** Call after an object's deletion is published. */
  remove(namespace: string, name: string): void {
    const entry = this.#entries.get(namespace);
    if (entry === undefined || !entry.names.delete(name)) return;
    this.#publish(namespace, entry, undefined);
  }

  /** After a (re)list: the index holds exactly the names of `live`. */
  converge(live: Iterable<{ namespace: string; name: string }>): void {
    const byNamespace = new Map<string, Set<string>>();
    for (const { namespace, name } of live) {
      if (namespace === '') continue;
      let names = byNamespace.get(namespace);
      if (names === undefined) byNamespace.set(namespace, (names = new Set()));
      names.add(name);
    }
    const everyEntry = this.#firstConverge;
    this.#firstConverge = false;
    for (const [namespace, entry] of this.#entries) {
      const names = byNamespace.get(namespace) ?? new Set<string>();
      const stale = [...entry.names].filter((n) => !names.has(n));
      if (!entry.known) {
        entry.names = new Set(names);
        entry.known = true;
      } else if (stale.length === 0 && !everyEntry) continue;
      for (const name of stale) entry.names.delete(name);
      this.#publish(namespace, entry, undefined, true);
    }
    for (const [namespace, names] of byNamespace)
      for (const name of names) this.add(namespace, name);
  }

  /** Writes the entry of `namespace` again (or its deletion), over a deposed term's write. */
  repair(namespace: string): void {
    let entry = this.#entries.get(namespace);
    if (entry === undefined) this.#entries.set(namespace, (entry = newEntry()));
    this.#publish(namespace, entry, undefined, true);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
  }

  #publish(namespace: string, entry: Entry, announced: string | undefined, again = false): void {
    const { backbone, cluster, kind } = this.#context;
    if (!entry.known) return; // marked too many, which holds until the names are known
    if (!this.#context.current()) return; // past the renew deadline: a standby may lead
    const tooMany = entry.names.size > nameIndexLimit;
    // Marked already: readers scan the namespace, so a new name needs no announcing.
    if (tooMany && entry.marked && !again) return;
    entry.marked = tooMany;
    const seq = ++entry.seq;
    const subject = mirrorSubject(namesKey(cluster, kind, namespace));
    let published: Promise<unknown>;
    const h = epochHeaders(this.#context.epoch);
    if (tooMany) {
      published = backbone.pipe.publish(subject, tooManyNames, { headers: h });
    } else if (entry.names.size === 0) {
      h.set('KV-Operation', 'DEL');
      published = backbone.pipe.publish(subject, undefined, { headers: h });
    } else {
      published = backbone.pipe.publish(subject, JSON.stringify([...entry.names]), { headers: h });
    }
    published.then(
      () => {
        // A newer publish carries the entry; or this watcher stopped (a standby leads now).
        if (seq !== entry.seq || this.#stopped) return;
        this.#retryDelayMs = 100;
        const names = [...entry.unannounced].filter((n) => entry.names.has(n));
        entry.unannounced.clear();
        for (const name of names) this.#context.reannounce(namespace, name);
        if (entry.names.size === 0 && this.#entries.get(namespace) === entry)
          this.#entries.delete(namespace);
      },
      (error: unknown) => {
        if (this.#stopped) return;
        if (announced !== undefined) entry.unannounced.add(announced);
        // Even when a newer publish is in flight (it may have landed already): publish again,
        // so the names this one announced are announced again after an entry that landed.
        this.#dirty.add(namespace);
        this.#context.log.warn(
          { err: error, kind, namespace, pending: this.#dirty.size },
          'name index publish failed; will retry',
        );
        this.#scheduleRetry();
      },
    );
  }

  #scheduleRetry(): void {
    if (this.#retryTimer !== undefined || this.#stopped) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#retryDelayMs = Math.min(this.#retryDelayMs * 2, 5_000);
      const dirty = [...this.#dirty];
      this.#dirty.clear();
      for (const namespace of dirty) {
        let entry = this.#entries.get(namespace);
        if (entry === undefined) this.#entries.set(namespace, (entry = newEntry()));
        this.#publish(namespace, entry, undefined, true);
      }
    }, this.#retryDelayMs);
  }
}
