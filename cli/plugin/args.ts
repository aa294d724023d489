// Command-line parsing of `kubectl olmq`: kubectl hands a plugin its arguments unchanged, so the
// plugin reads kubectl's global flags itself (--kubeconfig, --context, -n, -A, -o) beside each
// command's own. Errors name the flag (exit 2).
import { UsageError, type OutputFormat } from './types.js';

/** One flag a command accepts. */
export interface FlagSpec {
  /** Long name without dashes, e.g. "channel". */
  name: string;
  /** One-letter alias, e.g. "n". */
  short?: string;
  /** boolean flags take no value ("--wait", "--wait=false"). */
  kind: 'string' | 'boolean';
  /** One line for the help text. */
  doc: string;
}

/** Flags every command accepts, as kubectl's. */
export const globalFlags: readonly FlagSpec[] = [
  {
    name: 'kubeconfig',
    kind: 'string',
    doc: 'Path to the kubeconfig file (default: KUBECONFIG, ~/.kube/config)',
  },
  { name: 'context', kind: 'string', doc: 'The kubeconfig context to use' },
  {
    name: 'namespace',
    short: 'n',
    kind: 'string',
    doc: "Namespace (default: the context's, else default)",
  },
  { name: 'all-namespaces', short: 'A', kind: 'boolean', doc: 'List across all namespaces' },
  {
    name: 'output',
    short: 'o',
    kind: 'string',
    doc: 'Output format: json or yaml (default: table)',
  },
  { name: 'help', short: 'h', kind: 'boolean', doc: 'Show help' },
];

/** The parsed command line: positional words and flag values by long name. */
export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | boolean>;
}

/** The global options, read once. */
export interface GlobalOptions {
  kubeconfig: string | undefined;
  context: string | undefined;
  namespace: string | undefined;
  allNamespaces: boolean;
  output: OutputFormat;
  help: boolean;
}

/** Parses `argv` against `specs` (global flags included by the caller). */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): ParsedArgs {
  const byLong = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short as string, s]));
  const positionals: string[] = [];
  const flags = new Map<string, string | boolean>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const long = arg.startsWith('--');
    const body = arg.slice(long ? 2 : 1);
    const eq = body.indexOf('=');
    const key = eq < 0 ? body : body.slice(0, eq);
    const inline = eq < 0 ? undefined : body.slice(eq + 1);
    const spec = long ? byLong.get(key) : byShort.get(key);
    if (spec === undefined) throw new UsageError(`unknown flag: ${arg.split('=')[0] ?? arg}`);
    const shown = long ? `--${spec.name}` : `-${key}`;
    if (spec.kind === 'boolean') {
      if (inline === undefined) flags.set(spec.name, true);
      else if (inline === 'true' || inline === 'false') flags.set(spec.name, inline === 'true');
      else throw new UsageError(`${shown}: expected true or false, got "${inline}"`);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined) throw new UsageError(`${shown}: flag needs an argument`);
      i++;
    }
    flags.set(spec.name, value);
  }
  return { positionals, flags };
}

/** A string flag's value, if given; "" is refused naming the flag. */
export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags.get(name);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '')
    throw new UsageError(`--${name}: must not be empty`);
  return value;
}

/** A boolean flag's value (false when absent). */
export function booleanFlag(args: ParsedArgs, name: string): boolean {
  return args.flags.get(name) === true;
}

/** A flag's value that must be one of `allowed`. */
export function choiceFlag<T extends string>(
  args: ParsedArgs,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = stringFlag(args, name);
  if (value === undefined) return undefined;
  const found = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (found === undefined)
    throw new UsageError(`--${name}: "${value}" is not one of ${allowed.join(', ')}`);
  return found;
}

/** A duration flag ("90s", "5m", "1h", "500ms", or plain seconds) in milliseconds. */
export function durationFlag(args: ParsedArgs, name: string, fallbackMs: number): number {
  const value = stringFlag(args, name);
  if (value === undefined) return fallbackMs;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value);
  if (match === null)
    throw new UsageError(`--${name}: "${value}" is not a duration (e.g. 90s, 5m, 1h)`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] ?? 1_000;
  return Number(match[1]) * unit;
}

/** The global options of a parsed command line. */
export function globalOptions(args: ParsedArgs): GlobalOptions {
  const output = choiceFlag(args, 'output', ['json', 'yaml', 'table'] as const) ?? 'table';
  return {
    kubeconfig: stringFlag(args, 'kubeconfig'),
    context: stringFlag(args, 'context'),
    namespace: stringFlag(args, 'namespace'),
    allNamespaces: booleanFlag(args, 'all-namespaces'),
    output,
    help: booleanFlag(args, 'help'),
  };
}

/** The positional arguments after the command words, exactly `names` of them. */
export function operands(args: ParsedArgs, skip: number, names: readonly string[]): string[] {
  const rest = args.positionals.slice(skip);
  if (rest.length < names.length)
    throw new UsageError(`${names[rest.length] ?? 'argument'} is required`);
  if (rest.length > names.length)
    throw new UsageError(`unexpected argument "${rest[names.length] ?? ''}"`);
  return rest;
}
