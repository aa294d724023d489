// Command-line options declared once as data: flag, environment variable, zod schema and a doc
// line. The same declarations drive parsing, `--help` and docs/configuration.md, so the three
// never disagree. Flags win over environment variables, which win over defaults.
import { statSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { z } from 'zod';

/** The raw text of an option as given: a flag's value, a switch, or a repeated flag's values. */
type Raw = string | boolean | string[] | undefined;

/** One option of a command. `T` is the parsed value's type. */
export interface Option<T> {
  /** Long flag without dashes, e.g. "nats-url". */
  readonly flag: string;
  /** One-letter alias, e.g. "o". */
  readonly short?: string;
  /** Environment variable read when the flag is absent. */
  readonly env?: string;
  /** One line for --help and the configuration reference. */
  readonly doc: string;
  /** Placeholder of the value in usage lines, e.g. "URL"; empty for switches. */
  readonly placeholder: string;
  /** A value (`--port 80`), a switch (`--force`) or a repeatable value (`--catalog a --catalog b`). */
  readonly kind: 'value' | 'switch' | 'repeated';
  /** The default as shown to people, if any. */
  readonly defaultText?: string;
  /** Validates and converts the raw value (undefined when neither flag nor env var is set). */
  readonly schema: z.ZodType<T, Raw>;
}

/** A command's options by config key. */
export type Options = Record<string, Option<unknown>>;

/** The frozen, typed configuration a set of options parses to. */
export type ConfigOf<O extends Options> = { readonly [K in keyof O]: z.output<O[K]['schema']> };

interface Common {
  flag: string;
  short?: string;
  env?: string;
  doc: string;
  placeholder?: string;
}

function make<T>(
  common: Common,
  kind: Option<T>['kind'],
  schema: z.ZodType<T, Raw>,
  defaultText?: string,
): Option<T> {
  return {
    ...common,
    kind,
    schema,
    placeholder: kind === 'switch' ? '' : (common.placeholder ?? 'VALUE'),
    ...(defaultText === undefined ? {} : { defaultText }),
  };
}

const text = z.string().min(1, 'must not be empty');

// One check per issue, and never a throw: `new URL` on text that is no URL throws, which would
// escape zod and end the process with a bare "Invalid URL" instead of naming the option.
function urlSchema(schemes: readonly string[]) {
  return z.string().superRefine((value, ctx) => {
    const problem = urlProblem(value, schemes);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem, input: value });
  });
}

function urlProblem(value: string, schemes: readonly string[]): string | undefined {
  if (!URL.canParse(value)) return `must be a URL, e.g. ${schemes[0] ?? 'nats'}://127.0.0.1:4222`;
  const url = new URL(value);
  if (!schemes.includes(url.protocol.replace(/:$/, '')))
    return `must use ${schemes.map((s) => `${s}://`).join(' or ')}`;
  if (url.hostname === '') return 'must name a host';
  return undefined;
}

// A comma-separated server list, as NATS clients take it: every entry a URL of `schemes`.
function urlListSchema(schemes: readonly string[]) {
  return z.string().transform((value, ctx): string[] => {
    const urls = value.split(',').map((u) => u.trim());
    for (const [i, url] of urls.entries()) {
      const problem = url === '' ? 'must not be empty' : urlProblem(url, schemes);
      if (problem !== undefined)
        ctx.addIssue({
          code: 'custom',
          message: urls.length > 1 ? `server ${i + 1} "${url}" ${problem}` : problem,
          input: value,
        });
    }
    return urls;
  });
}

/** What a path option must name: an existing file or directory. */
type PathKind = 'file' | 'directory' | 'file or directory';

function pathProblem(value: string, kind: PathKind): string | undefined {
  let stat;
  try {
    stat = statSync(value);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'no such file or directory' : `cannot be read (${code ?? 'error'})`;
  }
  if (kind === 'file' && !stat.isFile()) return 'must be a file';
  if (kind === 'directory' && !stat.isDirectory()) return 'must be a directory';
  return undefined;
}

const existingPath = (kind: PathKind) =>
  text.superRefine((value, ctx) => {
    const problem = pathProblem(value, kind);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem, input: value });
  });

// RFC 1123 host names, or an IP address.
const hostNamePattern =
  /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

const hostSchema = text.refine(
  (value) => isIP(value) !== 0 || hostNamePattern.test(value),
  'must be an IP address or a host name',
);

const durationUnits: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Milliseconds of a duration like `90s`, `15m`, `1h30m`, `7d`; undefined when malformed. */
export function parseDuration(value: string): number | undefined {
  if (!/^(\d+(ms|s|m|h|d))+$/.test(value)) return undefined;
  let total = 0;
  for (const [, amount = '', unit = ''] of value.matchAll(/(\d+)(ms|s|m|h|d)/g))
    total += Number(amount) * (durationUnits[unit] ?? 0);
  return total;
}

/** Constructors for the option types olmq uses. */
export const option = {
  /** Free text, required unless a default is given. */
  text(common: Common & { default: string }): Option<string> {
    return make(common, 'value', text.optional().default(common.default), common.default);
  },
  /** Free text that may be absent. */
  optionalText(common: Common): Option<string | undefined> {
    return make(common, 'value', text.optional());
  },
  /** Free text that must be given. */
  requiredText(common: Common): Option<string> {
    return make(common, 'value', z.string({ error: 'is required' }).min(1, 'must not be empty'));
  },
  /** A whole number within [min, max]. */
  integer(common: Common & { default: number; min: number; max: number }): Option<number> {
    const schema = z
      .string()
      .regex(/^-?\d+$/, 'must be a whole number')
      .transform(Number)
      .pipe(
        z
          .number()
          .min(common.min, `must be at least ${common.min}`)
          .max(common.max, `must be at most ${common.max}`),
      )
      .optional()
      .transform((value) => value ?? common.default);
    return make(common, 'value', schema, String(common.default));
  },
  /** A whole number within [min, max] that may be absent. */
  optionalInteger(common: Common & { min: number; max: number }): Option<number | undefined> {
    const schema = z
      .string()
      .regex(/^-?\d+$/, 'must be a whole number')
      .transform(Number)
      .pipe(
        z
          .number()
          .min(common.min, `must be at least ${common.min}`)
          .max(common.max, `must be at most ${common.max}`),
      )
      .optional();
    return make(common, 'value', schema);
  },
  /** One of a fixed set of words. */
  choice<const V extends readonly [string, ...string[]]>(
    common: Common & { values: V; default: V[number] },
  ): Option<V[number]> {
    const schema = z
      .enum(common.values, { error: `must be one of: ${common.values.join(', ')}` })
      .optional()
      .transform((value) => value ?? common.default);
    return make(common, 'value', schema, common.default);
  },
  /** A URL with one of the given schemes, defaulting to `default`. */
  url(common: Common & { schemes: readonly string[]; default: string }): Option<string> {
    const schema = urlSchema(common.schemes)
      .optional()
      .transform((value) => value ?? common.default);
    return make(common, 'value', schema, common.default);
  },
  /** A URL with one of the given schemes that may be absent. */
  optionalUrl(common: Common & { schemes: readonly string[] }): Option<string | undefined> {
    return make(common, 'value', urlSchema(common.schemes).optional());
  },
  /** A comma-separated list of URLs with the given schemes (NATS's server-list convention). */
  urlList(common: Common & { schemes: readonly string[]; default: string }): Option<string[]> {
    const schema = urlListSchema(common.schemes)
      .optional()
      .transform((value) => value ?? [common.default]);
    return make(common, 'value', schema, common.default);
  },
  /** Like urlList, but may be absent. */
  optionalUrlList(common: Common & { schemes: readonly string[] }): Option<string[] | undefined> {
    return make(common, 'value', urlListSchema(common.schemes).optional());
  },
  /** The path of an existing file or directory, which may be absent. */
  optionalPath(common: Common & { kind: PathKind }): Option<string | undefined> {
    return make(common, 'value', existingPath(common.kind).optional());
  },
  /** The path of an existing file or directory, which must be given. */
  requiredPath(common: Common & { kind: PathKind }): Option<string> {
    const schema = z.string({ error: 'is required' }).pipe(existingPath(common.kind));
    return make(common, 'value', schema);
  },
  /** An address to listen on or connect to: an IP address or a host name. */
  host(common: Common & { default: string }): Option<string> {
    return make(common, 'value', hostSchema.optional().default(common.default), common.default);
  },
  /** A duration (`30s`, `15m`, `1h30m`, `7d`) within [min, max], in milliseconds. */
  duration(common: Common & { default: string; minMs: number; maxMs: number }): Option<number> {
    const schema = z
      .string()
      .transform((value, ctx) => {
        const ms = parseDuration(value);
        if (ms === undefined)
          ctx.addIssue({
            code: 'custom',
            message: 'must be a duration like 30s, 15m, 1h30m or 7d',
            input: value,
          });
        else if (ms < common.minMs || ms > common.maxMs)
          ctx.addIssue({
            code: 'custom',
            message: `must be between ${formatDuration(common.minMs)} and ${formatDuration(common.maxMs)}`,
            input: value,
          });
        return ms ?? 0;
      })
      .optional()
      .transform((value) => value ?? parseDuration(common.default) ?? 0);
    return make(common, 'value', schema, common.default);
  },
  /** An on/off switch; as an environment variable: true/false/1/0. */
  switch(common: Common): Option<boolean> {
    const schema = z
      .union([z.boolean(), z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' })])
      .optional()
      .transform((value) => value === true || value === 'true' || value === '1');
    return make(common, 'switch', schema, 'false');
  },
  /**
   * A repeatable value whose every occurrence is parsed by `item` (e.g. `NAME=DIR,priority=N`);
   * no environment variable, since the values may themselves contain commas.
   */
  repeatedParsed<T>(common: Omit<Common, 'env'>, item: z.ZodType<T, string>): Option<T[]> {
    const schema = z
      .array(z.string())
      .optional()
      .transform((value) => value ?? [])
      .pipe(z.array(item));
    return make(common, 'repeated', schema as unknown as z.ZodType<T[], Raw>);
  },
  /** A repeatable value; as an environment variable: comma-separated. */
  list(common: Common): Option<string[]> {
    const schema = z
      .union([z.array(text), text.transform((value) => value.split(',').filter((v) => v !== ''))])
      .optional()
      .transform((value) => value ?? []);
    return make(common, 'repeated', schema);
  },
};

/** A duration in the largest unit that divides it, as options take it. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = durationUnits[unit] ?? 1;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Where a bad value came from, in the words a person typed. */
export interface ConfigIssue {
  /** `--port` or `OLMQ_PORT (environment)`; empty for problems not tied to one option. */
  source: string;
  message: string;
}

/** The command line or environment holds values that cannot be used. Exit code 2. */
export class ConfigError extends Error {
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(
      issues.map((i) => (i.source === '' ? i.message : `${i.source}: ${i.message}`)).join('\n'),
    );
    this.name = 'ConfigError';
  }
}

/** Parsed command line: the typed config, positional words, and whether --help was asked. */
export interface ParsedCommandLine<O extends Options> {
  config: ConfigOf<O>;
  positionals: string[];
  help: boolean;
}

/** Parses argv (after the command words) and env against the options; throws ConfigError. */
export function parseCommandLine<O extends Options>(
  options: O,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): ParsedCommandLine<O> {
  const spec: NonNullable<Parameters<typeof parseArgs>[0]>['options'] = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const o of Object.values(options)) {
    spec[o.flag] = {
      type: o.kind === 'switch' ? 'boolean' : 'string',
      ...(o.kind === 'repeated' ? { multiple: true } : {}),
      ...(o.short === undefined ? {} : { short: o.short }),
    };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: spec, allowPositionals: true, strict: true });
  } catch (error) {
    // node:util's first sentence already names the flag ("Unknown option '--prot'").
    const message = (error as Error).message.split('. To specify')[0] ?? '';
    throw new ConfigError([{ source: '', message }]);
  }
  const values = parsed.values as Record<string, Raw>;
  const help = values.help === true;
  const issues: ConfigIssue[] = [];
  const config: Record<string, unknown> = {};
  for (const [key, o] of Object.entries(options)) {
    const fromFlag = values[o.flag];
    const fromEnv = o.env === undefined ? undefined : env[o.env];
    const useEnv = fromFlag === undefined && fromEnv !== undefined && fromEnv !== '';
    const raw = useEnv ? fromEnv : fromFlag;
    const result = o.schema.safeParse(raw);
    if (result.success) {
      config[key] = result.data;
    } else if (!help) {
      const source = useEnv ? `${o.env} (environment)` : `--${o.flag}`;
      const shown = typeof raw === 'string' ? ` "${raw}"` : '';
      for (const issue of result.error.issues) {
        issues.push({
          source,
          message: `${raw === undefined ? '' : `invalid value${shown}: `}${issue.message}`,
        });
      }
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return { config: Object.freeze(config) as ConfigOf<O>, positionals: parsed.positionals, help };
}

/** The option lines of --help: flag, env var, default, doc. */
export function describeOptions(options: Options): string[] {
  const rows = Object.values(options).map((o) => {
    const flag = `${o.short === undefined ? '    ' : `-${o.short}, `}--${o.flag}${o.placeholder === '' ? '' : ` ${o.placeholder}`}`;
    const extras = [
      o.env === undefined ? '' : `env ${o.env}`,
      o.defaultText === undefined ? '' : `default ${o.defaultText}`,
      o.kind === 'repeated' ? 'repeatable' : '',
    ].filter((e) => e !== '');
    return { flag, doc: `${o.doc}${extras.length > 0 ? ` (${extras.join('; ')})` : ''}` };
  });
  rows.push({ flag: '-h, --help', doc: 'Show this help.' });
  const width = Math.max(...rows.map((r) => r.flag.length)) + 2;
  return rows.map((r) => `  ${r.flag.padEnd(width)}${r.doc}`);
}
