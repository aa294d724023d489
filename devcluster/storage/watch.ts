// Watches: replays the event log from a resourceVersion, then streams live changes, each
// event serialised once per apiVersion and shared by every watcher that receives it.
import type { JsonObject } from '../../shared/kube/json.js';
import { toStatus } from '../../shared/kube/status.js';
import { jsonBytes } from './serialization.js';
import type { ObjectStore } from './store.js';
import type {
  ChangeEvent,
  ChangeType,
  WatchFilter,
  WatchHandle,
  WatchOptions,
  WatchSink,
} from './types.js';

interface Watcher {
  filter: WatchFilter;
  sink: WatchSink;
  apiVersion: string;
  timers: NodeJS.Timeout[];
  closed: boolean;
  /** Highest resourceVersion this watcher has been brought up to (no event at or below it is sent again). */
  seenThrough: number;
  /** Keys of this watcher's lines in ChangeEvent.cache, by event type (built once, not per event). */
  cacheKeys: Record<ChangeType, string>;
}

/** The "too old resource version" ERROR event kube sends before ending a watch. */
export function expiredEventLine(requested: number, oldest: number): string {
  const status = toStatus('Expired', `too old resource version: ${requested} (${oldest})`);
  return `${JSON.stringify({ type: 'ERROR', object: status })}\n`;
}

// The bytes around an object's JSON in a watch line.
const linePrefixes: Record<ChangeType, Buffer> = {
  ADDED: Buffer.from('{"type":"ADDED","object":'),
  MODIFIED: Buffer.from('{"type":"MODIFIED","object":'),
  DELETED: Buffer.from('{"type":"DELETED","object":'),
};
const lineEnd = Buffer.from('}\n');

/** Fans committed changes out to open watches. */
export class WatchHub {
  private readonly byKey = new Map<string, Set<Watcher>>();
  /** With a journal, changes wait here until they are on disk, so watchers never see a change a crash could lose. */
  private pending: ChangeEvent[] = [];
  private waiting = false;

  constructor(private readonly store: ObjectStore) {
    store.subscribe((event) => this.dispatch(event));
  }

  /** Number of open watches (for tests and metrics). */
  size(): number {
    let n = 0;
    for (const set of this.byKey.values()) n += set.size;
    return n;
  }

  /** Opens a watch; the initial state or replay is written synchronously before live events. */
  open(filter: WatchFilter, sink: WatchSink, options: WatchOptions): WatchHandle {
    const { key, apiVersion } = filter;
    // Lines are shared by every watcher of the same form: the object's apiVersion, or a named form.
    const formId = filter.form?.id ?? apiVersion;
    const watcher: Watcher = {
      filter,
      sink,
      apiVersion,
      timers: [],
      closed: false,
      seenThrough: 0,
      cacheKeys: {
        ADDED: `ADDED|${formId}`,
        MODIFIED: `MODIFIED|${formId}`,
        DELETED: `DELETED|${formId}`,
      },
    };
    const handle: WatchHandle = { close: () => this.close(key, watcher) };
    if (options.fromResourceVersion === undefined) {
      for (const object of this.store.list(key, filter.namespace)) {
        if (filter.matches(object)) sink.write(this.line(watcher, 'ADDED', object));
      }
    } else {
      const replay = this.store.eventsSince(options.fromResourceVersion, key);
      if (!replay.ok) {
        sink.write(expiredEventLine(options.fromResourceVersion, replay.oldest));
        sink.end();
        return { close: () => undefined };
      }
      for (const event of replay.events) this.deliver(watcher, event);
    }
    // The list or replay covered everything committed so far, durable or not yet.
    watcher.seenThrough = this.store.currentResourceVersion();
    let set = this.byKey.get(key);
    if (!set) this.byKey.set(key, (set = new Set()));
    set.add(watcher);
    if (options.allowBookmarks) {
      const timer = setInterval(() => this.bookmark(watcher), options.bookmarkIntervalMs);
      timer.unref();
      watcher.timers.push(timer);
    }
    if (options.timeoutSeconds !== undefined && options.timeoutSeconds > 0) {
      const timer = setTimeout(() => {
        if (options.allowBookmarks) this.bookmark(watcher);
        handle.close();
      }, options.timeoutSeconds * 1000);
      timer.unref();
      watcher.timers.push(timer);
    }
    return handle;
  }

  /** Ends every open watch (fault injection: clients see their connections drop). */
  closeAll(): void {
    for (const [key, set] of this.byKey) for (const watcher of [...set]) this.close(key, watcher);
  }

  private close(key: string, watcher: Watcher): void {
    if (watcher.closed) return;
    watcher.closed = true;
    for (const timer of watcher.timers) clearTimeout(timer);
    this.byKey.get(key)?.delete(watcher);
    watcher.sink.end();
  }

  private bookmark(watcher: Watcher): void {
    if (watcher.closed) return;
    const { form } = watcher.filter;
    const bookmark = {
      kind: watcher.filter.kind,
      apiVersion: watcher.apiVersion,
      metadata: { resourceVersion: String(Math.max(watcher.seenThrough, this.deliveredThrough())) },
    };
    const object = form ? form.render(bookmark) : bookmark;
    watcher.sink.write(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
  }

  /** Every change at or below this resourceVersion has been offered to watchers. */
  private deliveredThrough(): number {
    const first = this.pending[0];
    return first === undefined ? this.store.currentResourceVersion() : first.rv - 1;
  }

  private dispatch(event: ChangeEvent): void {
    if (this.store.journal === undefined) {
      this.deliverAll(event);
      return;
    }
    this.pending.push(event);
    if (!this.waiting) this.awaitDurability();
  }

  private awaitDurability(): void {
    const last = this.pending[this.pending.length - 1];
    if (last === undefined) return;
    this.waiting = true;
    const upTo = last.rv;
    this.store.flushed().then(
      () => {
        this.waiting = false;
        const ready = this.pending.filter((e) => e.rv <= upTo);
        this.pending = this.pending.filter((e) => e.rv > upTo);
        for (const event of ready) this.deliverAll(event);
        if (this.pending.length > 0) this.awaitDurability();
      },
      () => {
        // The journal failed: nothing more becomes durable, so nothing more is announced.
        this.waiting = false;
        this.pending = [];
      },
    );
  }

  private deliverAll(event: ChangeEvent): void {
    const set = this.byKey.get(event.key);
    if (!set) return;
    for (const watcher of set) this.deliver(watcher, event);
  }

  private deliver(watcher: Watcher, event: ChangeEvent): void {
    if (event.rv <= watcher.seenThrough) return;
    watcher.seenThrough = event.rv;
    const { filter } = watcher;
    if (filter.namespace !== undefined && event.namespace !== filter.namespace) return;
    const now = filter.matches(event.object);
    let type: ChangeType | undefined;
    if (event.type === 'MODIFIED') {
      const before = event.previous !== undefined && filter.matches(event.previous);
      // An object entering or leaving a selector is an ADDED or DELETED for that watch, as in kube.
      type = now ? (before ? 'MODIFIED' : 'ADDED') : before ? 'DELETED' : undefined;
    } else if (now) {
      type = event.type;
    }
    if (type === undefined) return;
    if (filter.render) {
      watcher.sink.write(
        `${JSON.stringify({ type, object: filter.render(this.present(watcher, event.object)) })}\n`,
      );
      return;
    }
    const cacheKey = watcher.cacheKeys[type];
    // Most events are seen in one form only: that one is kept without a map.
    let line = event.lineKey === cacheKey ? event.line : event.cache?.get(cacheKey);
    if (line === undefined) {
      line = this.line(watcher, type, event.object);
      if (event.lineKey === undefined) {
        event.lineKey = cacheKey;
        event.line = line;
      } else (event.cache ??= new Map()).set(cacheKey, line);
    }
    watcher.sink.write(line);
  }

  private present(watcher: Watcher, object: JsonObject): JsonObject {
    return object['apiVersion'] === watcher.apiVersion
      ? object
      : { ...object, apiVersion: watcher.apiVersion };
  }

  /** An event line, encoded once: every watcher of the event writes the same bytes. */
  private line(watcher: Watcher, type: ChangeType, object: JsonObject): Buffer {
    const { render, form } = watcher.filter;
    const presented = this.present(watcher, object);
    const rendered = render ? render(presented) : form ? form.render(presented) : presented;
    return Buffer.concat([linePrefixes[type], jsonBytes(rendered), lineEnd]);
  }
}
