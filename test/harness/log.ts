// A pino logger whose JSON lines tests can read back and assert on. With OLMQ_TEST_LOG_FILE set,
// the lines are also appended to that file, to read after a failing run.
import { appendFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A logger capturing its lines, parsed. */
export function capturingLogger(level: pino.Level = 'debug'): {
  log: Logger;
  lines: Record<string, unknown>[];
} {
  const lines: Record<string, unknown>[] = [];
  const copyTo = process.env.OLMQ_TEST_LOG_FILE;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (copyTo !== undefined && copyTo !== '') appendFileSync(copyTo, chunk);
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}
