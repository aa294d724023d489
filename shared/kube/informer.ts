// An informer on our own client: list, then watch from the list's resourceVersion, keeping the
// objects in a cache and telling handlers what was added, updated and deleted.
//
// Why not client-node's: it watches over HTTP/1.1 and re-lists every time a watch ends. This
// one watches over the client's HTTP/2 connection (a stream beside the requests), parses the
// events as their lines arrive, resumes an ended watch from the last resourceVersion it saw
// (bookmarks keep it current), and lists again only when the server says it is too old (410).
// A watch that stays connected but goes quiet (no event, not even a bookmark, within
// `stallTimeoutMs`) is taken for stalled and resumed; every `resyncMs` it lists again, and
// handlers hear only of what differs from the cache.
import { isGone } from './errors.js';
import { statusCodes, type Status } from './status.js';
import type { KubeClient, KubeObject, WatchEvent, WatchStream } from './client.js';

/** What an informer tells its handlers. */
export interface InformerHandlers {
  add(object: KubeObject): void;
  update(object: KubeObject): void;
  delete(object: KubeObject): void;
  /** The list or the watch failed; the informer has stopped until start() is called again. */
  error(error: unknown): void;
  /** A quiet watch was given up as stalled and resumed. */
  stalled?(): void;
  /** A periodic resync listed again (handlers heard of what differed). */
  resynced?(): void;
}

/** Tunables of an informer. */
export interface InformerOptions {
  labelSelector?: string;
  /** Each watch asks the server to end it after about this long (then it resumes). */
  watchSeconds?: number;
  /**
   * A watch with no event or bookmark for this long is stalled: it is ended and resumed.
   * kube-apiserver sends a bookmark about every minute. Default 150 s; 0 never.
   */
  stallTimeoutMs?: number;
  /** Lists again this often, telling handlers what differs from the cache. Default 0: never. */
  resyncMs?: number;
  /**
   * What the cache keeps of each object (list() and get() return it); default all of it. It
   * must keep metadata.name, namespace and resourceVersion, which the informer compares.
   */
  keep?: (object: KubeObject) => KubeObject;
}

/** Default InformerOptions.stallTimeoutMs. */
export const defaultStallTimeoutMs = 150_000;

const keyOf = (object: KubeObject): string =>
  `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;

/** Thrown inside the watch loop when the server reported 410 Gone in the stream. */
class GoneInStream extends Error {}

/** Lists and watches one kind through a KubeClient. */
export class Informer {
  private readonly cache = new Map<string, KubeObject>();
  private resourceVersion = '';
  private watch: WatchStream | undefined;
  /** Bumped by start() and stop(): a loop of an older run sees it and ends. */
  private run = 0;
  /** When the current watch last heard from the server (ms since the epoch). */
  private lastHeard = 0;
  private watchdog: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  /** Keys the watch changed while a resync lists (its list is older for them). */
  private touched: Set<string> | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly kind: { apiVersion: string; kind: string },
    private readonly handlers: InformerHandlers,
    private readonly options: InformerOptions = {},
  ) {}

  /** The objects as last seen (what `keep` keeps of them). */
  list(): KubeObject[] {
    return [...this.cache.values()];
  }

  /** One object as last seen, as kept ("" namespace for cluster-scoped ones). */
  get(namespace: string, name: string): KubeObject | undefined {
    return this.cache.get(`${namespace}/${name}`);
  }

  /**
   * Lists (handlers hear of every difference from the cache) and starts watching. Resolves
   * once the watch runs; a failure goes to the error handler, and start() may be called again.
   */
  async start(): Promise<void> {
    const run = ++this.run;
    this.watch?.stop();
    let watch: WatchStream;
    try {
      await this.relist(run);
      if (run !== this.run) return;
      watch = await this.openWatch(run);
    } catch (error) {
      if (run === this.run) this.handlers.error(error);
      return;
    }
    if (run !== this.run) return watch.stop(); // stopped (or started again) meanwhile
    this.watch = watch;
    this.keepWatch(run);
    void this.follow(run, watch);
  }

  /** Stops watching; the cache stays as it was. */
  stop(): void {
    this.run++;
    this.watch?.stop();
    this.watch = undefined;
    this.halt();
  }

  // The watch loop gave up (until start() again): no stall checks or resyncs meanwhile.
  private halt(): void {
    clearInterval(this.watchdog);
    clearInterval(this.resyncTimer);
  }

  // The stall watchdog and the periodic resync of run `run`.
  private keepWatch(run: number): void {
    this.halt();
    const stallMs = this.options.stallTimeoutMs ?? defaultStallTimeoutMs;
    if (stallMs > 0) {
      this.watchdog = setInterval(
        () => {
          if (run !== this.run || Date.now() - this.lastHeard < stallMs) return;
          this.lastHeard = Date.now();
          this.handlers.stalled?.();
          this.watch?.stop(); // follow() resumes it from the last resourceVersion
        },
        Math.max(50, Math.floor(stallMs / 4)),
      );
      this.watchdog.unref();
    }
    const resyncMs = this.options.resyncMs ?? 0;
    if (resyncMs > 0) {
      this.resyncTimer = setInterval(() => void this.resync(run), resyncMs);
      this.resyncTimer.unref();
    }
  }

  // Lists again; the watch goes on (events it brings are newer, or the same).
  private async resync(run: number): Promise<void> {
    try {
      await this.relist(run, true);
      if (run === this.run) this.handlers.resynced?.();
    } catch {
      // The watch is still running; the next resync tries again.
    }
  }

  // Watches on: each watch the server ends is resumed from the last resourceVersion; 410 Gone
  // (in the stream, or refusing the resumed watch) lists again first.
  private async follow(run: number, first: WatchStream): Promise<void> {
    let current = first;
    for (;;) {
      try {
        await current.ended;
        if (run !== this.run) return;
        current = await this.openWatch(run).catch(async (error: unknown) => {
          if (!isGone(error)) throw error;
          await this.relist(run);
          return this.openWatch(run);
        });
      } catch (error) {
        if (run !== this.run) return;
        if (!(error instanceof GoneInStream)) {
          this.halt();
          this.handlers.error(error);
          return;
        }
        try {
          await this.relist(run);
          current = await this.openWatch(run);
        } catch (relistError) {
          if (run === this.run) {
            this.halt();
            this.handlers.error(relistError);
          }
          return;
        }
      }
      if (run !== this.run) {
        current.stop();
        return;
      }
      this.watch = current;
    }
  }

  private async openWatch(run: number): Promise<WatchStream> {
    let gone: ((error: Error) => void) | undefined;
    this.lastHeard = Date.now();
    const stream = await this.client.watch(
      this.kind,
      {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        // Spread the watches' ends, as client-go does.
        timeoutSeconds: Math.round((this.options.watchSeconds ?? 300) * (1 + Math.random())),
        ...(this.options.labelSelector === undefined
          ? {}
          : { labelSelector: this.options.labelSelector }),
      },
      (event) => {
        if (run !== this.run) return;
        this.lastHeard = Date.now();
        if (event.type === 'ERROR') {
          gone?.(eventError(event));
          return;
        }
        this.apply(event);
      },
    );
    // An ERROR event ends the watch: with GoneInStream for 410 (list again), else the Status.
    const ended = new Promise<void>((resolve, reject) => {
      gone = (error) => {
        stream.stop();
        reject(error);
      };
      stream.ended.then(resolve, reject);
    });
    return { ended, stop: () => stream.stop() };
  }

  private apply(event: WatchEvent): void {
    const object = event.object;
    const version = object.metadata.resourceVersion;
    if (version !== undefined && version !== '') this.resourceVersion = version;
    if (event.type === 'BOOKMARK') return;
    const key = keyOf(object);
    this.touched?.add(key);
    if (event.type === 'DELETED') {
      this.cache.delete(key);
      this.handlers.delete(object);
      return;
    }
    const known = this.cache.has(key);
    this.cache.set(key, this.kept(object));
    if (known) this.handlers.update(object);
    else this.handlers.add(object);
  }

  private kept(object: KubeObject): KubeObject {
    return this.options.keep === undefined ? object : this.options.keep(object);
  }

  // Lists and tells the handlers how the list differs from the cache: objects new, changed
  // (another resourceVersion) and gone. A resync keeps the watch's resourceVersion: the watch
  // runs on from there, and may already be past the list.
  private async relist(run: number, resync = false): Promise<void> {
    // Objects the watch brings while a resync's list is under way are newer than the list.
    const touched = new Set<string>();
    if (resync) this.touched = touched;
    let listed: Awaited<ReturnType<KubeClient['list']>>;
    try {
      listed = await this.client.list(
        this.kind,
        this.options.labelSelector === undefined
          ? {}
          : { labelSelector: this.options.labelSelector },
      );
    } finally {
      if (this.touched === touched) this.touched = undefined;
    }
    if (run !== this.run) return;
    const before = new Map(this.cache);
    for (const object of listed.items) {
      const key = keyOf(object);
      const old = before.get(key);
      before.delete(key);
      if (touched.has(key)) continue;
      this.cache.set(key, this.kept(object));
      if (old === undefined) this.handlers.add(object);
      else if (old.metadata.resourceVersion !== object.metadata.resourceVersion)
        this.handlers.update(object);
    }
    for (const [key, vanished] of before) {
      if (touched.has(key)) continue;
      this.cache.delete(key);
      this.handlers.delete(vanished);
    }
    if (!resync) this.resourceVersion = listed.resourceVersion;
  }
}

function eventError(event: WatchEvent): Error {
  const status = event.object as unknown as Partial<Status>;
  if (status.code === statusCodes.Gone)
    return new GoneInStream(status.message ?? 'resourceVersion too old');
  return new Error(`watch error ${status.code ?? '?'}: ${status.message ?? 'unknown'}`);
}
