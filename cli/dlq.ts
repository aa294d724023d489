// `olmq dlq list|show|redrive`: the dead letters in JetStream (work given up on, one per key,
// until handled), printed as kubectl prints objects — a table, a description, or JSON — and
// redriven by hand. Redriving a work letter publishes its work item at once; a trigger letter
// (a change its trigger could not map) is made due, and its function's host re-runs the trigger
// at its next scan.
import type { NatsConnection } from '@nats-io/transport-node';
import { openBackbone, type Backbone } from '../shared/bus/backbone.js';
import {
  listDeadLetters,
  readDeadLetter,
  redriveWorkLetter,
  requestTriggerRedrive,
  type DeadLetterMatch,
  type StoredDeadLetter,
} from '../shared/bus/dead-letters.js';
import { createLogger, type LogLevel } from '../shared/runtime/log.js';
import { connectNats } from '../system/nats.js';
import { exitCodes, type CommandConfig } from './commands.js';
import { natsSettingsOf, natsSettingsProblems, type NatsConnectionConfig } from './nats-options.js';

const print = (text: string): void => void process.stdout.write(`${text}\n`);
const complain = (text: string): void => void process.stderr.write(`${text}\n`);

/** A bad argument: said with the command's name, exit 2. */
class UsageError extends Error {}

type DlqConnection = NatsConnectionConfig & { natsUrl: readonly string[]; logLevel: LogLevel };

async function withBackbone<T>(
  name: string,
  config: DlqConnection,
  run: (backbone: Backbone) => Promise<T>,
): Promise<T> {
  const problems = natsSettingsProblems(config);
  if (problems.length > 0)
    throw new UsageError(problems.map((p) => `${p.source}: ${p.message}`).join('; '));
  const settings = natsSettingsOf(config, config.natsUrl, 'olmq-dlq');
  let nc: NatsConnection;
  try {
    nc = await connectNats(settings, 'olmq-dlq', createLogger('dlq', config.logLevel));
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return await run(await openBackbone(nc));
  } finally {
    await nc.close();
  }
}

function matchOf(config: {
  function: string | undefined;
  cluster: string | undefined;
  key: string | undefined;
}): DeadLetterMatch {
  if (config.key !== undefined && config.key.split('/').some((w) => w === ''))
    throw new UsageError(`--key: "${config.key}" has an empty word (words are joined by '/')`);
  return {
    ...(config.function === undefined ? {} : { fn: config.function }),
    ...(config.cluster === undefined ? {} : { cluster: config.cluster }),
    ...(config.key === undefined ? {} : { key: config.key.split('/') }),
  };
}

function idOf(text: string): number {
  if (!/^[1-9]\d*$/.test(text))
    throw new UsageError(`<id>: "${text}" is not a dead letter ID (a positive whole number)`);
  return Number(text);
}

/** kubectl's age: the largest unit, e.g. 45s, 12m, 3h, 6d. */
export function age(at: string, now: Date): string {
  const s = Math.max(0, Math.floor((now.getTime() - Date.parse(at)) / 1000));
  if (Number.isNaN(s)) return '<unknown>';
  if (s < 120) return `${s}s`;
  if (s < 7_200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3_600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

const keyText = (stored: StoredDeadLetter): string =>
  stored.letter.origin === 'trigger'
    ? `${stored.letter.key[0] ?? ''}/${stored.letter.key
        .slice(1)
        .filter((w) => w !== '')
        .join('/')}`
    : stored.letter.key.join('/');

const errorColumnWidth = 80;

/** The letters as a kubectl-style table (columns padded, three spaces apart). */
export function letterTable(letters: readonly StoredDeadLetter[], now: Date): string {
  const header = ['ID', 'FUNCTION', 'CLUSTER', 'ORIGIN', 'KEY', 'REASON', 'FAILURES'].concat([
    'REDRIVES',
    'AGE',
    'ERROR',
  ]);
  const rows = letters.map((s) => {
    const error = s.letter.error.replace(/\s+/g, ' ');
    return [
      String(s.seq),
      s.letter.function,
      s.letter.cluster,
      s.letter.origin,
      keyText(s),
      s.letter.reason,
      String(s.letter.failures),
      String(s.letter.redrives),
      age(s.letter.at, now),
      error.length > errorColumnWidth ? `${error.slice(0, errorColumnWidth - 3)}...` : error,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows]
    .map((cells) =>
      cells
        .map((c, i) => (i === cells.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3)))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}

const asJson = (s: StoredDeadLetter) => ({ id: s.seq, ...s.letter });

function describe(s: StoredDeadLetter): string {
  const l = s.letter;
  const fields: [string, string][] = [
    ['ID', String(s.seq)],
    ['Function', l.function],
    ['Cluster', l.cluster],
    ['Origin', l.origin],
    ['Key', keyText(s)],
    ['Reason', l.reason],
    ['Failures', String(l.failures)],
    ['Redrives', String(l.redrives)],
    ['At', l.at],
    ...(l.notBefore === undefined ? [] : ([['Redrive At', l.notBefore]] as [string, string][])),
    ['Error', l.error],
  ];
  const width = Math.max(...fields.map(([k]) => k.length)) + 2;
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width)}${v}`).join('\n');
}

// Runs a dlq command: usage errors exit 2 naming the argument, the rest exit 1 with the reason.
async function guarded(name: string, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof UsageError) {
      complain(`${name}: ${error.message}\nRun '${name} --help' for usage.`);
      return exitCodes.usage;
    }
    complain(error instanceof Error ? error.message : String(error));
    return exitCodes.failed;
  }
}

/** `olmq dlq list`. */
export function runDlqList(config: CommandConfig<'dlqList'>): Promise<number> {
  const name = 'olmq dlq list';
  return guarded(name, async () => {
    const match = matchOf(config);
    const letters = await withBackbone(name, config, (b) => listDeadLetters(b, match));
    if (config.output === 'json') print(JSON.stringify(letters.map(asJson), null, 2));
    else if (letters.length === 0) complain('No dead letters found.');
    else print(letterTable(letters, new Date()));
    return exitCodes.ok;
  });
}

/** `olmq dlq show <id>`. */
export function runDlqShow(config: CommandConfig<'dlqShow'>, positional: string): Promise<number> {
  const name = 'olmq dlq show';
  return guarded(name, async () => {
    const id = idOf(positional);
    const stored = await withBackbone(name, config, (b) => readDeadLetter(b, id));
    if (stored === undefined) {
      complain(`${name}: no dead letter ${id} (handled, redriven or aged out)`);
      return exitCodes.failed;
    }
    print(config.output === 'json' ? JSON.stringify(asJson(stored), null, 2) : describe(stored));
    return exitCodes.ok;
  });
}

/** `olmq dlq redrive [<id>]`: by ID, or every letter matching the filters, or --all. */
export function runDlqRedrive(
  config: CommandConfig<'dlqRedrive'>,
  positional: string,
): Promise<number> {
  const name = 'olmq dlq redrive';
  return guarded(name, async () => {
    const filtered =
      config.function !== undefined || config.cluster !== undefined || config.key !== undefined;
    const chosen = [positional !== '', filtered, config.all].filter(Boolean).length;
    if (chosen !== 1)
      throw new UsageError(
        chosen === 0
          ? 'say which dead letters to redrive: an <id>, --function, --cluster, --key, or --all'
          : 'give one of: an <id>, filters (--function, --cluster, --key), or --all',
      );
    const id = positional === '' ? undefined : idOf(positional);
    const match = matchOf(config);
    const done = await withBackbone(name, config, async (b) => {
      let letters: StoredDeadLetter[];
      if (id === undefined) letters = await listDeadLetters(b, match);
      else {
        const one = await readDeadLetter(b, id);
        if (one === undefined)
          throw new Error(`${name}: no dead letter ${id} (handled, redriven or aged out)`);
        letters = [one];
      }
      for (const stored of letters) {
        if (!(await redriveWorkLetter(b, stored)))
          await requestTriggerRedrive(b, stored, new Date());
      }
      return letters;
    });
    if (config.output === 'json') print(JSON.stringify(done.map(asJson), null, 2));
    else if (done.length === 0) complain('No dead letters found.');
    else
      for (const s of done)
        print(`dead letter ${s.seq} (${s.letter.function} ${keyText(s)}) redriven`);
    return exitCodes.ok;
  });
}
