// Durable storage for --data-dir: an append-only journal of changes, fsync'ed before a write is
// acknowledged (group commit: one fdatasync per batch), plus a snapshot written on compaction.
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { fdatasync, write } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { JsonObject } from '../../shared/kube/json.js';
import type { ObjectStore } from './store.js';
import type { ChangeEvent, Journal } from './types.js';

const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);

/** A journal record: an object stored, or an object removed at a resourceVersion. */
type JournalRecord =
  { t: 'p'; k: string; o: JsonObject } | { t: 'd'; k: string; ns: string; n: string; rv: number };

/** Replays snapshot + journal from `dir` into the store (no events); returns how many records were read. */
export function recoverStore(dir: string, store: ObjectStore): number {
  let records = 0;
  const apply = (line: string): void => {
    if (line.trim() === '') return;
    let record: JournalRecord;
    try {
      record = JSON.parse(line) as JournalRecord;
    } catch {
      // A torn last line from a crash mid-write was never acknowledged: skip it.
      return;
    }
    records++;
    if (record.t === 'p') store.restore(record.k, record.o);
    else store.restoreRemoval(record.k, record.ns, record.n, record.rv);
  };
  const snapshot = join(dir, 'snapshot.jsonl');
  if (existsSync(snapshot))
    for (const line of readFileSync(snapshot, 'utf8').split('\n')) apply(line);
  const journal = join(dir, 'journal.jsonl');
  if (existsSync(journal))
    for (const line of readFileSync(journal, 'utf8').split('\n')) apply(line);
  store.sealHistory();
  return records;
}

/** Writes every stored object as a snapshot (atomically, via rename) and empties the journal. */
function writeSnapshot(dir: string, store: ObjectStore, journalFd: number): void {
  const tmp = join(dir, 'snapshot.jsonl.tmp');
  const fd = openSync(tmp, 'w');
  try {
    for (const key of store.keys()) {
      let chunk = '';
      for (const object of store.list(key)) {
        chunk += `${JSON.stringify({ t: 'p', k: key, o: object })}\n`;
        if (chunk.length > 1 << 20) {
          writeSync(fd, chunk);
          chunk = '';
        }
      }
      if (chunk !== '') writeSync(fd, chunk);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, 'snapshot.jsonl'));
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
  ftruncateSync(journalFd, 0);
  fdatasyncSync(journalFd);
}

/** The append-only journal of a data directory. */
export class FileJournal implements Journal {
  private readonly fd: number;
  private buffer: string[] = [];
  private appended = 0;
  private durable = 0;
  private flushing = false;
  private bytesSinceSnapshot = 0;
  private waiters: { seq: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private failure: unknown;

  constructor(
    private readonly dir: string,
    private readonly store: ObjectStore,
    private readonly compactAfterBytes = 64 * 1024 * 1024,
  ) {
    this.fd = openSync(join(dir, 'journal.jsonl'), 'a');
    // Start from a compact state: everything recovered goes into a fresh snapshot.
    writeSnapshot(dir, store, this.fd);
  }

  append(event: ChangeEvent): void {
    const record: JournalRecord =
      event.type === 'DELETED'
        ? { t: 'd', k: event.key, ns: event.namespace, n: event.name, rv: event.rv }
        : { t: 'p', k: event.key, o: event.object };
    this.buffer.push(`${JSON.stringify(record)}\n`);
    this.appended++;
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => void this.flush());
    }
  }

  flushed(): Promise<void> {
    if (this.failure !== undefined)
      return Promise.reject(
        this.failure instanceof Error
          ? this.failure
          : new Error('journal write failed', { cause: this.failure }),
      );
    if (this.durable >= this.appended) return Promise.resolve();
    return new Promise((resolve, reject) =>
      this.waiters.push({ seq: this.appended, resolve, reject }),
    );
  }

  private async flush(): Promise<void> {
    try {
      while (this.buffer.length > 0) {
        const text = this.buffer.join('');
        const seq = this.appended;
        this.buffer = [];
        const data = Buffer.from(text);
        let offset = 0;
        while (offset < data.length) {
          const { bytesWritten } = await writeAsync(this.fd, data, offset, data.length - offset);
          offset += bytesWritten;
        }
        await fdatasyncAsync(this.fd);
        this.durable = seq;
        this.bytesSinceSnapshot += data.length;
        this.release();
        if (this.bytesSinceSnapshot > this.compactAfterBytes && this.buffer.length === 0) {
          writeSnapshot(this.dir, this.store, this.fd);
          this.bytesSinceSnapshot = 0;
        }
      }
    } catch (error) {
      this.failure = error;
      for (const waiter of this.waiters) waiter.reject(error);
      this.waiters = [];
    } finally {
      this.flushing = false;
    }
  }

  private release(): void {
    const still: typeof this.waiters = [];
    for (const waiter of this.waiters) {
      if (waiter.seq <= this.durable) waiter.resolve();
      else still.push(waiter);
    }
    this.waiters = still;
  }

  /** Flushes what is pending and closes the file. */
  async close(): Promise<void> {
    await this.flushed().catch(() => undefined);
    closeSync(this.fd);
  }
}
