#!/usr/bin/env node
// Entry point of the `olmq` command: picks the subcommand, parses its options (flags + env
// vars, validated once), then runs it. Exit codes are listed in ./commands.ts.
import { commands, exitCodes, olmqVersion, type Command } from './commands.js';
import { ConfigError, describeOptions, parseCommandLine } from './options.js';

const all: Command[] = Object.values(commands);

type CommandName = keyof typeof commands;
/** A command's handler: its parsed config and its positional argument, if it takes one. */
type Handler = (config: never, positional: string) => Promise<number>;

// Handlers load lazily: `olmq --help` should not pay for the Kubernetes client's import.
const handlers: Partial<Record<CommandName, () => Promise<Handler>>> = {
  up: async () => (await import('./up.js')).runUp,
  devcluster: async () => (await import('./devcluster.js')).runDevcluster,
  watcher: async () => (await import('./watcher.js')).runWatcher,
  resolve: async () => (await import('./resolve.js')).runResolve,
  registryServe: async () => (await import('./registry.js')).runRegistryServe,
  run: async () => (await import('./run.js')).runFunction,
  packageserver: async () => (await import('./packageserver.js')).runPackageServer,
  dlqList: async () => (await import('./dlq.js')).runDlqList,
  dlqShow: async () => (await import('./dlq.js')).runDlqShow,
  dlqRedrive: async () => (await import('./dlq.js')).runDlqRedrive,
};

function usage(): string {
  const width = Math.max(...all.map((c) => c.words.join(' ').length)) + 2;
  return [
    'olmq: Operator Lifecycle Manager for Kubernetes, message-driven on NATS JetStream.',
    '',
    'Usage: olmq <command> [options]',
    '',
    'Commands:',
    ...all.map((c) => `  ${c.words.join(' ').padEnd(width)}${c.summary}`),
    '',
    "Run 'olmq <command> --help' for a command's options.",
  ].join('\n');
}

function commandHelp(c: Command): string {
  const name = `olmq ${c.words.join(' ')}`;
  const lines = [
    `${name}: ${c.summary}`,
    '',
    `Usage: ${name}${c.positionals ? ` ${c.positionals.usage}` : ''} [options]`,
  ];
  if (c.positionals) lines.push('', 'Arguments:', `  ${c.positionals.usage}  ${c.positionals.doc}`);
  lines.push('', 'Options:', ...describeOptions(c.options));
  return lines.join('\n');
}

function fail(message: string, code: number): number {
  process.stderr.write(`${message}\n`);
  return code;
}

async function main(argv: string[]): Promise<number> {
  const first = argv[0];
  if (first === undefined) return fail(usage(), exitCodes.usage);
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(`${usage()}\n`);
    return exitCodes.ok;
  }
  if (first === '--version') argv = ['version'];
  const found = all.find((c) => c.words.every((word, i) => argv[i] === word));
  if (found === undefined) {
    const family = all.filter((c) => c.words[0] === first && c.words.length > 1);
    if (family.length > 0) {
      const choices = family.map((c) => c.words.slice(1).join(' ')).join(', ');
      return fail(
        `olmq ${first}: missing or unknown subcommand (available: ${choices}).`,
        exitCodes.usage,
      );
    }
    return fail(
      `olmq: unknown command "${first}". Run 'olmq --help' for the list.`,
      exitCodes.usage,
    );
  }
  const name = `olmq ${found.words.join(' ')}`;
  let parsed;
  try {
    parsed = parseCommandLine(found.options, argv.slice(found.words.length), process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const lines = error.issues.map(
      (i) => `${name}: ${i.source === '' ? '' : `${i.source}: `}${i.message}`,
    );
    return fail(`${lines.join('\n')}\nRun '${name} --help' for usage.`, exitCodes.usage);
  }
  if (parsed.help) {
    process.stdout.write(`${commandHelp(found)}\n`);
    return exitCodes.ok;
  }
  const spec = found.positionals;
  const expected = spec === undefined ? 0 : 1;
  if (
    parsed.positionals.length > expected ||
    (spec?.required === true && parsed.positionals.length < 1)
  ) {
    const what = spec === undefined ? 'takes no arguments' : `takes ${spec.usage}`;
    return fail(
      `${name}: ${what}, got ${JSON.stringify(parsed.positionals)}. Run '${name} --help'.`,
      exitCodes.usage,
    );
  }
  const positional = parsed.positionals[0];
  if (
    spec?.choices !== undefined &&
    positional !== undefined &&
    !spec.choices.includes(positional)
  ) {
    return fail(
      `${name}: unknown ${spec.usage} "${positional}" (one of: ${spec.choices.join(', ')}).`,
      exitCodes.usage,
    );
  }
  if (found === commands.version) {
    process.stdout.write(`olmq ${olmqVersion()} (node ${process.version})\n`);
    return exitCodes.ok;
  }
  const key = (Object.keys(commands) as CommandName[]).find((k) => commands[k] === found);
  const load = key === undefined ? undefined : handlers[key];
  if (load !== undefined) return (await load())(parsed.config as never, positional ?? '');
  return fail(`${name}: no handler`, exitCodes.failed);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // A command has finished its graceful shutdown: do not let a straggling socket or timer of a
    // client library keep the process alive (orchestrators would wait for the kill timeout).
    setTimeout(() => process.exit(code), 2_000).unref();
  },
  (error: unknown) => {
    process.stderr.write(`olmq: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = exitCodes.failed;
  },
);
