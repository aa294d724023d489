// The watcher's name index (namesKey entries, of every cluster, kind and namespace) followed
// live by one consumer per connection. Listing a namespace through the index then costs a
// freshness round of the view (mirror-view.ts: one direct get when nothing is new) instead of
// a read of its entry, and the listings a reconcile makes at once (resolve lists four kinds of
// a namespace) share one round. The entries are names only: small even for a large cluster.
import { followMirror, mirroredValue, type MirrorSource } from './mirror-view.js';
import type { BusPipe } from './pipe.js';
import { allNamesFilter, mirrorSubjectPrefix, namesKey } from './subjects.js';

/** A name index entry as the view holds it: its names, or `tooMany` when not listed. */
export type NameIndexEntry = string[] | 'tooMany';

export interface NameIndexView {
  /** Resolves once the view holds every entry the mirror had when it was called. */
  current(): Promise<void>;
  /** The entry of `kind` in `namespace`, or undefined when there is none. */
  entry(cluster: string, kind: string, namespace: string): NameIndexEntry | undefined;
  stop(): void;
}

async function openNameIndexView(mirror: MirrorSource): Promise<NameIndexView> {
  const entries = new Map<string, NameIndexEntry>();
  const follower = await followMirror(
    mirror,
    allNamesFilter,
    async (m) => {
      const key = m.subject.slice(mirrorSubjectPrefix.length);
      const value = await mirroredValue<unknown>(mirror, m);
      if (value === 'deleted') entries.delete(key);
      // A fenced entry (undefined) keeps what the view had: the active watcher repairs it.
      else if (value !== undefined) entries.set(key, Array.isArray(value) ? value : 'tooMany');
    },
    { what: 'name index' },
  );
  return {
    current: () => follower.current(),
    entry: (cluster, kind, namespace) => entries.get(namesKey(cluster, kind, namespace)),
    stop: () => follower.stop(),
  };
}

// One view per connection (its pipe), opened on first use and again after it failed.
const views = new WeakMap<BusPipe, Promise<NameIndexView>>();

/**
 * The name index view of `mirror`'s connection, current: every entry written before the call
 * is in it. A view that cannot catch up is dropped (the next call opens a new one) and the
 * error thrown, for the caller to read the entry itself.
 */
export async function currentNameIndex(mirror: MirrorSource): Promise<NameIndexView> {
  let opened = views.get(mirror.pipe);
  if (opened === undefined) views.set(mirror.pipe, (opened = openNameIndexView(mirror)));
  try {
    const view = await opened;
    await view.current();
    return view;
  } catch (error) {
    if (views.get(mirror.pipe) === opened) views.delete(mirror.pipe);
    void opened.then((v) => v.stop()).catch(() => undefined);
    throw error;
  }
}
