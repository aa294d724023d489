// Structured JSON logs (pino) on stderr, so a command's stdout carries only its own output
// (e.g. `olmq resolve -o json`).
import { pino, type Logger } from 'pino';

/** Log levels accepted by --log-level. */
export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** One of logLevels. */
export type LogLevel = (typeof logLevels)[number];

/** A pino logger writing JSON lines to stderr; `name` is the process role (up, watcher, ...). */
export function createLogger(name: string, level: LogLevel): Logger {
  return pino(
    { name, level, base: { pid: process.pid } },
    pino.destination({ fd: 2, sync: false }),
  );
}
