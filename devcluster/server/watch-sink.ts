// How watch lines reach a client: gathered for a couple of milliseconds, then written as one
// chunk per watch. With many writers and watchers, a write per event per watcher would dominate
// the server's time (each write is a trip through node's stream machinery, HTTP/2 and TLS).
import type { ApiResponse } from './transport.js';
import type { WatchSink } from '../storage/types.js';

/** How long watch lines may wait to be coalesced into one socket write. */
export const watchFlushDelayMs = 2;

/** Sinks with lines waiting, flushed together by one timer. */
const dirtySinks = new Set<() => void>();
let flushTimer: NodeJS.Timeout | undefined;

function scheduleFlush(flush: () => void): void {
  dirtySinks.add(flush);
  flushTimer ??= setTimeout(() => {
    flushTimer = undefined;
    const sinks = [...dirtySinks];
    dirtySinks.clear();
    for (const f of sinks) f();
    lastJoined = undefined;
  }, watchFlushDelayMs);
}

/** The lines last joined in this flush, and their bytes: watches of one resource gather the same lines. */
let lastJoined: { lines: readonly Buffer[]; bytes: Buffer } | undefined;

/**
 * The lines as one chunk. Watches of the same resource usually hold the very same line buffers
 * (each event is encoded once for all of them), so the chunk joined for one is reused by the next.
 */
export function joinLines(lines: readonly Buffer[]): Buffer {
  if (lines.length === 1) return lines[0] as Buffer;
  const last = lastJoined;
  if (last !== undefined && sameLines(last.lines, lines)) return last.bytes;
  const bytes = Buffer.concat(lines);
  lastJoined = { lines, bytes };
  return bytes;
}

function sameLines(a: readonly Buffer[], b: readonly Buffer[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A watch sink writing to an answer whose head is sent, flushed every couple of milliseconds. */
export function batchedSink(res: ApiResponse): WatchSink {
  let pending: Buffer[] = [];
  let ended = false;
  const flush = (): void => {
    if (pending.length === 0 || res.ended || res.gone) return;
    const lines = pending;
    pending = [];
    res.write([joinLines(lines)]);
  };
  return {
    write: (line) => {
      if (ended) return;
      pending.push(typeof line === 'string' ? Buffer.from(line) : line);
      if (pending.length === 1) scheduleFlush(flush);
    },
    end: () => {
      if (ended) return;
      ended = true;
      dirtySinks.delete(flush);
      flush();
      res.end();
    },
  };
}
