// Waiting on the cluster with a deadline, telling the user what is awaited on stderr (only when
// the status changes, so a log stays short), and kubectl's AGE column.
import type { Printer } from './output.js';
import { CommandFailedError } from './types.js';

/** One look at what is awaited: done, failed (with why), or still going (with a status). */
export interface Poll<T> {
  done: boolean;
  status: string;
  failed?: string;
  value?: T;
}

/** Polls `look` until done, failing after `timeoutMs` or when it reports a failure. */
export async function pollUntil<T>(
  printer: Printer,
  what: string,
  timeoutMs: number,
  look: () => Promise<Poll<T>>,
  intervalMs = 250,
): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const seen = await look();
    if (seen.failed !== undefined) throw new CommandFailedError(`${what}: ${seen.failed}`);
    if (seen.done) return seen.value;
    if (seen.status !== last) {
      printer.progress(`waiting for ${what}: ${seen.status}\n`);
      last = seen.status;
    }
    if (Date.now() > deadline)
      throw new CommandFailedError(
        `timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what} (last: ${seen.status})`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** kubectl's short age: 5s, 3m, 2h, 4d. */
export function age(timestamp: string | undefined, now = Date.now()): string {
  if (timestamp === undefined) return '';
  const seconds = Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000));
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7_200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3_600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
