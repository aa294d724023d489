// The ledger of a function's own writes: the resourceVersion each write returned, per cluster,
// namespace, kind and name, so a load can tell whether the watcher's mirror already shows them.
//
// A decision made on the mirror is as good as one made on the API for this function's purposes
// when the mirror is at least as fresh as everything the function itself wrote: other writers'
// changes reach the mirror and wake the key again, and the writes stay conditional on the
// versions the decision saw (a 409 means "decide again"). A load that finds every recorded write
// shown in the mirror (that version or a newer one) may decide on the mirror; else it reads the
// API, as before. Versions are compared as integers (Kubernetes resourceVersions are etcd
// revisions); a version that is not one is shown only by exactly itself, so an API server with
// other versions costs API reads, never a decision on a mirror that lacks a write.
//
// A conflict (a write met a newer object than the decision saw) marks the namespace: its next
// load reads the API, so deciding again does not meet the same lagging mirror.
import type { ObjectRef } from './client.js';
import { StaleDecisionError, type Write, type WriteObserver } from './executor.js';

/** What a write left: the version it returned, or a deletion (with its precondition, if any). */
type Written =
  | { deleted: false; version: string }
  | { deleted: true; version: string | undefined; uid: string | undefined };

/** An object as the mirror holds it (only its name, uid and version are read). */
export interface VersionedObject {
  metadata: {
    name?: string | undefined;
    uid?: string | undefined;
    resourceVersion?: string | undefined;
  };
}

const integer = /^[0-9]{1,30}$/;

// How many of its own versions of one object a function remembers (a plan's create and its
// status write come back as two changes).
const versionsPerObject = 4;

/** Whether version `shown` is `written` or newer; non-integer versions only match themselves. */
export function showsVersion(shown: string | undefined, written: string): boolean {
  if (shown === undefined) return false;
  if (shown === written) return true;
  if (!integer.test(shown) || !integer.test(written)) return false;
  return BigInt(shown) > BigInt(written);
}

function isShown(entry: Written, object: VersionedObject | undefined): boolean {
  if (!entry.deleted) return showsVersion(object?.metadata.resourceVersion, entry.version);
  if (object === undefined) return true;
  // The same name again: another object (a new uid), or a version after the deleted one.
  if (entry.uid !== undefined && object.metadata.uid !== entry.uid) return true;
  return (
    entry.version !== undefined &&
    object.metadata.resourceVersion !== entry.version &&
    showsVersion(object.metadata.resourceVersion, entry.version)
  );
}

/** The reference a write concerns. */
function refOfWrite(write: Write): ObjectRef {
  if ('ref' in write) return write.ref;
  const { metadata } = write.object;
  return {
    apiVersion: write.object.apiVersion,
    kind: write.object.kind,
    namespace: metadata.namespace,
    name: metadata.name,
  };
}

/** Own writes of one function, per cluster and namespace, not yet seen in the mirror. */
export class OwnWrites {
  // scope (cluster, namespace) → `kind/name` → what was written, oldest scopes first.
  private readonly scopes = new Map<string, Map<string, Written>>();
  // Scopes whose next load reads the API: a conflict, or a write forgotten unseen.
  private readonly distrusted = new Set<string>();
  private size = 0;
  // `cluster, namespace, kind/name` → the versions this function's last writes of it returned,
  // kept apart from the ledger (which forgets writes once shown); most recently written last.
  private readonly ownVersions = new Map<string, string[]>();

  /**
   * @param limit How many unseen writes are kept; beyond it the oldest scope is forgotten and
   *   marked to read the API once.
   */
  constructor(private readonly limit = 10_000) {}

  private static scope(cluster: string, namespace: string): string {
    return `${cluster}\u0000${namespace}`;
  }

  // One object's key among the versions this function's writes returned.
  private static object(
    cluster: string,
    ref: { kind: string; namespace: string; name: string },
  ): string {
    return `${OwnWrites.scope(cluster, ref.namespace)}\u0000${ref.kind}/${ref.name}`;
  }

  /**
   * Records what a write to `ref` left in `cluster` (events are not recorded); `made` false: a
   * create found it there already (that version is not this function's).
   */
  wrote(cluster: string, write: Write, version: string | undefined, made = true): void {
    if (write.op === 'event') return;
    const ref = refOfWrite(write);
    const key = OwnWrites.scope(cluster, ref.namespace ?? '');
    this.rememberVersion(
      OwnWrites.object(cluster, {
        kind: ref.kind,
        namespace: ref.namespace ?? '',
        name: ref.name ?? '',
      }),
      write,
      made ? version : undefined,
    );
    if (write.op !== 'delete' && version === undefined) {
      // An answer without a version cannot be checked: the next load reads the API.
      this.distrusted.add(key);
      return;
    }
    const entry: Written =
      write.op === 'delete'
        ? {
            deleted: true,
            version: write.preconditions?.resourceVersion,
            uid: write.preconditions?.uid,
          }
        : { deleted: false, version: version ?? '' };
    let writes = this.scopes.get(key);
    if (writes === undefined) this.scopes.set(key, (writes = new Map<string, Written>()));
    const name = `${ref.kind}/${ref.name ?? ''}`;
    if (!writes.has(name)) this.size++;
    writes.set(name, entry);
    while (this.size > this.limit) this.forgetOldest();
  }

  /**
   * An observer for executeWrites that records into this ledger the writes of `kinds` (those
   * the function's loads check with shownIn; others would never be seen and forgotten).
   */
  observer(cluster: string, kinds: readonly string[]): WriteObserver {
    const recorded = new Set(kinds);
    return (write, version, made) => {
      if (recorded.has(refOfWrite(write).kind)) this.wrote(cluster, write, version, made);
    };
  }

  /**
   * Runs a pass's writes in `where` with an observer recording those of `kinds` in this ledger.
   * When one met a newer object (a stale decision), deciding again must not meet the same
   * mirror: the namespace's next load reads the API.
   */
  async recording(
    where: { cluster: string; namespace: string },
    kinds: readonly string[],
    write: (observe: WriteObserver) => Promise<void>,
  ): Promise<void> {
    try {
      await write(this.observer(where.cluster, kinds));
    } catch (error) {
      if (error instanceof StaleDecisionError) this.conflicted(where.cluster, where.namespace);
      throw error;
    }
  }

  /** A write in the namespace met a newer object: its next load reads the API. */
  conflicted(cluster: string, namespace: string): void {
    this.distrusted.add(OwnWrites.scope(cluster, namespace));
  }

  /**
   * Whether the mirror's objects (by kind) show every write recorded for those kinds in the
   * namespace, and no conflict is pending. Writes found shown are forgotten.
   */
  shownIn(
    cluster: string,
    namespace: string,
    mirrored: Readonly<Record<string, readonly VersionedObject[]>>,
  ): boolean {
    const key = OwnWrites.scope(cluster, namespace);
    if (this.distrusted.has(key)) return false;
    const writes = this.scopes.get(key);
    if (writes === undefined) return true;
    let all = true;
    for (const [kind, objects] of Object.entries(mirrored)) {
      const byName = new Map(objects.map((o) => [o.metadata.name ?? '', o] as const));
      for (const [name, entry] of writes) {
        const slash = name.indexOf('/');
        if (name.slice(0, slash) !== kind) continue;
        if (isShown(entry, byName.get(name.slice(slash + 1)))) {
          writes.delete(name);
          this.size--;
        } else all = false;
      }
    }
    if (writes.size === 0) this.scopes.delete(key);
    return all;
  }

  /**
   * Whether the mirror's `object` of `ref` (undefined: the mirror lacks it) shows what was
   * written of it, and no conflict is pending in its namespace. A write found shown is
   * forgotten. Other objects' writes do not count: for a load of one object.
   */
  showsObject(
    cluster: string,
    ref: { kind: string; namespace: string; name: string },
    object: VersionedObject | undefined,
  ): boolean {
    const key = OwnWrites.scope(cluster, ref.namespace);
    if (this.distrusted.has(key)) return false;
    const writes = this.scopes.get(key);
    const name = `${ref.kind}/${ref.name}`;
    const entry = writes?.get(name);
    if (writes === undefined || entry === undefined) return true;
    if (!isShown(entry, object)) return false;
    writes.delete(name);
    this.size--;
    if (writes.size === 0) this.scopes.delete(key);
    return true;
  }

  /** Whether the namespace's next load must read the API whatever the mirror shows. */
  distrusts(cluster: string, namespace: string): boolean {
    return this.distrusted.has(OwnWrites.scope(cluster, namespace));
  }

  /** The namespace was read from the API: a pending conflict is settled. */
  readFromApi(cluster: string, namespace: string): void {
    this.distrusted.delete(OwnWrites.scope(cluster, namespace));
  }

  /** How many writes are recorded and not yet seen. */
  get unseen(): number {
    return this.size;
  }

  /**
   * Whether `object`, a change of `ref` as the mirror shows it, is a version one of this
   * function's recent writes of it returned. Such a change needs no pass of its own when the
   * function's writes are conditional and its decisions do all their snapshot allows: the
   * decision that made it saw the version it replaced, and any other writer's change after it
   * is a newer version, which is none of these.
   */
  isOwnWrite(
    ref: { cluster: string; kind: string; namespace: string; name: string },
    object: VersionedObject | undefined,
  ): boolean {
    const version = object?.metadata.resourceVersion;
    if (version === undefined) return false;
    return this.ownVersions.get(OwnWrites.object(ref.cluster, ref))?.includes(version) === true;
  }

  private rememberVersion(key: string, write: Write, version: string | undefined): void {
    const versions = this.ownVersions.get(key) ?? [];
    this.ownVersions.delete(key);
    // A deletion ends the object: a new one of the same name is nobody's echo.
    if (write.op === 'delete' || version === undefined) return;
    this.ownVersions.set(key, [...versions.slice(-(versionsPerObject - 1)), version]);
    for (const oldest of this.ownVersions.keys()) {
      if (this.ownVersions.size <= this.limit) break;
      this.ownVersions.delete(oldest);
    }
  }

  private forgetOldest(): void {
    const oldest = this.scopes.entries().next();
    if (oldest.done === true) return;
    const [key, writes] = oldest.value;
    this.scopes.delete(key);
    this.size -= writes.size;
    this.distrusted.add(key);
  }
}
