// A pino logger whose JSON lines tests can read back and assert on.
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A logger capturing its lines, parsed. */
export function capturingLogger(level: pino.Level = 'debug'): {
  log: Logger;
  lines: Record<string, unknown>[];
} {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}
