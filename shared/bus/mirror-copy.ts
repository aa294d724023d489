// A function process's live copy of the mirror entries its functions read, per cluster: one
// consumer of the cluster's mirror subjects follows every change in stream order, and keeps the
// entries of each kind read so far. A point read or a namespace listing of a kept kind is then
// answered from memory instead of by a direct get per object (most of a reconcile's NATS
// messages before).
//
// Freshness: before a reconcile loads, its host waits until the copy holds every change the
// mirror had (a catch-up round: one direct get of the first message past the copy, shared by
// the reconciles starting together). A trigger mapping a change waits until the copy has
// applied that change, which costs no round trip: the copy follows every subject of the
// cluster. Between those barriers the copy goes on following the mirror, so a read is never
// older than its barrier, as a direct get is never older than its request.
//
// A kind is kept from its first read on: its entries up to that point are filled by a one-off
// scan of the kind while the follower keeps the later ones, and until the fill is done reads of
// the kind go to NATS as before. Only the kinds a process reads take memory. Writers that read
// before writing (hand-off records) read NATS, never the copy.
import { getHeapStatistics } from 'node:v8';
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { isFenced, reportFenced } from './fencing.js';
import type { MirrorCopy, MirroredEntry } from './backbone.js';
import { BodyMissingError, textOf } from './large-values.js';
import {
  MirrorViewLagError,
  followMirror,
  isDeletion,
  type MirrorFollower,
  type MirrorSource,
} from './mirror-view.js';
import {
  clusterScope,
  decodeToken,
  encodeToken,
  mirrorStream,
  mirrorSubjectPrefix,
} from './subjects.js';

// An entry as stored: text undefined for a deletion, kept while its kind is being filled so a
// fill cannot bring back what the follower saw deleted.
interface Stored {
  seq: number;
  text: string | undefined;
}

// One kind of one cluster: namespace token → name token → entry; refused once it outgrew the
// budget (its reads go to NATS for good).
interface KindCopy {
  state: 'filling' | 'filled' | 'refused';
  entries: Map<string, Map<string, Stored>>;
  /** Characters of the values stored. */
  size: number;
}

/** About what an entry costs the heap: its value's characters and its maps' share. */
const sizeOf = (text: string | undefined): number => (text === undefined ? 0 : text.length + 160);

/** The characters of values a process's copy may hold, across clusters (about bytes). */
interface Budget {
  readonly limit: number;
  used: number;
}

// The copy of one cluster.
class ClusterCopy {
  private readonly kinds = new Map<string, KindCopy>();
  /** The highest sequence whose keep-or-skip the follower has decided. */
  private decided: number;
  private readonly fills = new Set<{ stop(): void }>();
  /** Told when the next change is applied (true), or the copy stops (false): changed(). */
  private readonly watchers = new Set<(applied: boolean) => void>();
  private stopped = false;
  // Set by open() before any message can arrive.
  follower!: MirrorFollower;

  private constructor(
    private readonly mirror: MirrorSource,
    private readonly cluster: string,
    private readonly budget: Budget,
    start: number,
  ) {
    this.decided = start - 1;
  }

  static async open(
    mirror: MirrorSource,
    cluster: string,
    options: { catchUpMs: number; budget: Budget },
  ): Promise<ClusterCopy> {
    const { catchUpMs, budget } = options;
    // From the mirror's end: earlier entries come in by each kind's fill.
    const from = (await mirror.jsm.streams.info(mirrorStream)).state.last_seq + 1;
    const copy = new ClusterCopy(mirror, cluster, budget, from);
    copy.follower = await followMirror(
      mirror,
      `${mirrorSubjectPrefix}${encodeToken(cluster)}.>`,
      (m) => copy.follow(m),
      { what: `cluster ${cluster}`, catchUpMs, from },
    );
    return copy;
  }

  /** Whether it follows the mirror still (a copy whose consume ended is stale). */
  get live(): boolean {
    return !this.stopped && !this.follower.ended;
  }

  /** The entries of `kind` (a token) when kept and filled; starts keeping it otherwise. */
  kind(kindToken: string): KindCopy | undefined {
    const kept = this.kinds.get(kindToken);
    if (kept !== undefined) return kept.state === 'filled' ? kept : undefined;
    if (this.stopped) return undefined;
    const copy: KindCopy = { state: 'filling', entries: new Map(), size: 0 };
    this.kinds.set(kindToken, copy);
    void this.fill(kindToken, copy, this.decided).catch(() => {
      // A fill that failed (NATS away) leaves the kind to NATS reads; the next read retries.
      if (this.kinds.get(kindToken) === copy) this.kinds.delete(kindToken);
    });
    return undefined;
  }

  /** Resolves true once the next change is applied, false after `withinMs` without one. */
  changed(withinMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (applied: boolean): void => {
        clearTimeout(timer);
        this.watchers.delete(done);
        resolve(applied);
      };
      const timer = setTimeout(() => done(false), withinMs);
      this.watchers.add(done);
    });
  }

  stop(): void {
    this.stopped = true;
    this.follower.stop();
    for (const fill of this.fills) fill.stop();
    for (const watcher of this.watchers) watcher(false);
  }

  // Applies one message of the cluster, in stream order: at once for a kind not kept.
  private follow(m: JsMsg): Promise<void> | void {
    this.decided = Math.max(this.decided, m.seq);
    const [, kindToken = ''] = m.subject.slice(mirrorSubjectPrefix.length).split('.', 2);
    const copy = this.kinds.get(kindToken);
    if (copy === undefined) return this.wake();
    return this.store(copy, m).then(() => this.wake());
  }

  private wake(): void {
    for (const watcher of this.watchers) watcher(true);
  }

  // Reads every entry of the kind up to `until` (what the follower skipped before keeping it).
  private async fill(kindToken: string, copy: KindCopy, until: number): Promise<void> {
    const filter = `${mirrorSubjectPrefix}${encodeToken(this.cluster)}.${kindToken}.*.*`;
    const first = await this.mirror.jsm.direct.getMessage(mirrorStream, {
      seq: 1,
      next_by_subj: filter,
    });
    if (first !== null && first.seq <= until) {
      const consumer = await this.mirror.js.consumers.get(mirrorStream, {
        filter_subjects: filter,
        deliver_policy: DeliverPolicy.All,
      });
      const messages = await consumer.consume();
      const fill = { stop: () => messages.stop() };
      this.fills.add(fill);
      let complete = false;
      try {
        for await (const m of messages) {
          if (m.seq <= until) await this.store(copy, m);
          // Past `until`, or nothing more of the kind: every entry up to `until` is in.
          if (m.seq > until || m.info.pending === 0) {
            complete = true;
            break;
          }
        }
      } finally {
        messages.stop();
        this.fills.delete(fill);
      }
      // A consume that ended first (stopped, or the connection closed) filled part of the kind.
      if (!complete) throw new Error(`the fill of ${kindToken} ended early`);
    }
    if (copy.state === 'refused') return;
    for (const inNamespace of copy.entries.values())
      for (const [name, entry] of inNamespace)
        if (entry.text === undefined) inNamespace.delete(name);
    copy.state = 'filled';
  }

  // Stores a message's entry unless a later one of its key is stored already.
  private async store(copy: KindCopy, m: JsMsg): Promise<void> {
    const [, , ns = '', name = ''] = m.subject.slice(mirrorSubjectPrefix.length).split('.');
    // A deposed watcher's write keeps what the copy had: the active watcher repairs it.
    if ((await isFenced(this.mirror, this.cluster, m.headers)) !== undefined) {
      reportFenced({ cluster: this.cluster, reader: 'view' });
      return;
    }
    let text: string | undefined;
    if (!isDeletion(m.headers?.get('KV-Operation')) && m.data.length > 0) {
      try {
        text = await textOf(this.mirror, m);
      } catch (error) {
        if (error instanceof BodyMissingError) return; // the key moved on: its successor follows
        throw error;
      }
    }
    if (copy.state === 'refused') return;
    let inNamespace = copy.entries.get(ns);
    const known = inNamespace?.get(name);
    if (known !== undefined && known.seq > m.seq) return;
    if (!this.grown(copy, sizeOf(text) - sizeOf(known?.text))) return;
    if (text === undefined && copy.state === 'filled') {
      inNamespace?.delete(name);
      return;
    }
    if (inNamespace === undefined) copy.entries.set(ns, (inNamespace = new Map<string, Stored>()));
    inNamespace.set(name, { seq: m.seq, text });
  }

  // Counts a kind's growth against the budget; past it, the largest kind of the cluster is
  // refused (its reads go back to NATS), so a kind of many thousand objects (CSV copies in
  // every namespace) cannot take the process's memory. False when `copy` was refused.
  private grown(copy: KindCopy, size: number): boolean {
    copy.size += size;
    this.budget.used += size;
    if (this.budget.used <= this.budget.limit) return true;
    let largest = copy;
    for (const kind of this.kinds.values()) if (kind.size > largest.size) largest = kind;
    largest.state = 'refused';
    largest.entries.clear();
    this.budget.used -= largest.size;
    largest.size = 0;
    return largest !== copy;
  }
}

/** The copy of the mirror a function process keeps (see above). */
export class LiveMirrorCopy implements MirrorCopy {
  /** Per cluster, its copy once open, or the promise of it while it opens. */
  private readonly clusters = new Map<string, ClusterCopy | Promise<ClusterCopy>>();
  private readonly budget: Budget;
  private stopped = false;

  /**
   * `maxBytes`: about how many bytes of entries the copy holds, across clusters (by default an
   * eighth of the heap's limit, at most 64 MiB: the functions' manifests give them 96 MiB);
   * past it, the largest kinds are read from NATS instead.
   */
  constructor(
    private readonly mirror: MirrorSource,
    private readonly options: { catchUpMs?: number; maxBytes?: number } = {},
  ) {
    const byDefault = Math.min(64 * 1024 * 1024, getHeapStatistics().heap_size_limit / 8);
    this.budget = { limit: options.maxBytes ?? byDefault, used: 0 };
  }

  changed(cluster: string, withinMs: number): Promise<boolean> {
    return this.live(cluster)?.changed(withinMs) ?? Promise.resolve(false);
  }

  async reached(cluster: string, seq?: number): Promise<void> {
    const copy = await this.copyOf(cluster);
    try {
      if (seq === undefined) await copy.follower.current();
      else await copy.follower.reached(seq);
    } catch (error) {
      // A copy that could not catch up is stale for good (its consumer may be lost with a NATS
      // server that went away, without its consume ending): the next barrier opens a new one.
      if (error instanceof MirrorViewLagError) this.drop(cluster, copy);
      throw error;
    }
  }

  text(key: string): string | null | undefined {
    const tokens = key.split('.');
    if (tokens.length !== 4) return undefined;
    const [cluster = '', kind = '', ns = '', name = ''] = tokens;
    const copy = this.live(decodeToken(cluster))?.kind(kind);
    if (copy === undefined) return undefined;
    const stored = copy.entries.get(ns)?.get(name);
    return stored?.text ?? null;
  }

  entries(
    cluster: string,
    kind: string,
    namespace?: string,
    name?: string,
  ): MirroredEntry[] | undefined {
    const copy = this.live(cluster)?.kind(encodeToken(kind));
    if (copy === undefined) return undefined;
    const prefix = `${encodeToken(cluster)}.${encodeToken(kind)}`;
    const nsTokens =
      namespace === undefined
        ? [...copy.entries.keys()]
        : [namespace === '' ? clusterScope : encodeToken(namespace)];
    const out: MirroredEntry[] = [];
    for (const ns of nsTokens) {
      const inNamespace = copy.entries.get(ns);
      if (inNamespace === undefined) continue;
      const named =
        name === undefined
          ? [...inNamespace]
          : [[encodeToken(name), inNamespace.get(encodeToken(name))] as const];
      for (const [token, stored] of named)
        if (stored?.text !== undefined)
          out.push({ key: `${prefix}.${ns}.${token}`, text: stored.text });
    }
    return out;
  }

  stop(): void {
    this.stopped = true;
    for (const copy of this.clusters.values()) if (copy instanceof ClusterCopy) copy.stop();
    this.clusters.clear();
  }

  // The open copy of `cluster` if it is live; a stale one is dropped (the next barrier reopens).
  private live(cluster: string): ClusterCopy | undefined {
    const copy = this.clusters.get(cluster);
    if (!(copy instanceof ClusterCopy)) return undefined;
    if (copy.live) return copy;
    this.drop(cluster, copy);
    return undefined;
  }

  private drop(cluster: string, copy: ClusterCopy): void {
    copy.stop();
    if (this.clusters.get(cluster) === copy) this.clusters.delete(cluster);
  }

  // The copy of `cluster`, opened on first use (and again after a failed open or an end).
  private async copyOf(cluster: string): Promise<ClusterCopy> {
    const known = this.live(cluster);
    if (known !== undefined) return known;
    let opening = this.clusters.get(cluster);
    if (!(opening instanceof Promise)) {
      opening = ClusterCopy.open(this.mirror, cluster, {
        catchUpMs: this.options.catchUpMs ?? 10_000,
        budget: this.budget,
      });
      this.clusters.set(cluster, opening);
    }
    try {
      const copy = await opening;
      if (this.stopped) {
        copy.stop();
        throw new Error('the mirror replica is stopped');
      }
      if (this.clusters.get(cluster) === opening) this.clusters.set(cluster, copy);
      return copy;
    } catch (error) {
      if (this.clusters.get(cluster) === opening) this.clusters.delete(cluster);
      throw error;
    }
  }
}
