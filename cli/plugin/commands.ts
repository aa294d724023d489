// The commands of `kubectl olmq`, one table (words, flags, help, handler), and the run of one
// command line with its exit code: 0 done, 1 failed or not found, 2 bad usage (naming the flag).
import {
  choiceFlag,
  durationFlag,
  globalFlags,
  globalOptions,
  parseArgs,
  type FlagSpec,
  type GlobalOptions,
  type ParsedArgs,
} from './args.js';
import { processPrinter, type Printer } from './output.js';
import type { Session } from './session.js';
import { KubeApiError } from '../../shared/kube/errors.js';
import { CommandFailedError, NotFoundError, pluginExit, UsageError } from './types.js';

/** One command: its words, usage, flags and what it runs (returning an exit code or nothing). */
interface Command {
  words: readonly string[];
  usage: string;
  doc: string;
  flags: readonly FlagSpec[];
  /** Checks of flags that need no cluster, made before connecting to one. */
  validate?(args: ParsedArgs): void;
  /** Commands that span contexts open their own sessions. */
  session: boolean;
  run(
    session: Session | undefined,
    args: ParsedArgs,
    global: GlobalOptions,
    printer: Printer,
  ): Promise<number | void>;
}

const flag = (name: string, doc: string, kind: 'string' | 'boolean' = 'string'): FlagSpec => ({
  name,
  doc,
  kind,
});
const waitFlags = [
  flag('wait', 'Wait until done, showing progress on stderr', 'boolean'),
  flag('timeout', 'How long --wait waits (e.g. 90s, 5m; default 5m)'),
];
const need = (session: Session | undefined): Session => {
  if (session === undefined) throw new Error('command needs a session');
  return session;
};

/** Every command, in help order. */
export const commands: readonly Command[] = [
  {
    words: ['catalog', 'add'],
    usage: 'catalog add NAME ADDRESS_OR_IMAGE',
    doc: 'Add a CatalogSource (host:port: a registry address; else an image)',
    session: true,
    flags: [
      flag('display-name', 'Display name of the catalog'),
      flag('publisher', 'Publisher of the catalog'),
      ...waitFlags,
    ],
    run: async (s, a, g, p) => (await import('./catalog.js')).catalogAdd(need(s), a, g, p),
  },
  {
    words: ['catalog', 'list'],
    usage: 'catalog list [-A]',
    doc: 'List CatalogSources',
    session: true,
    flags: [],
    run: async (s, _a, g, p) => (await import('./catalog.js')).catalogList(need(s), g, p),
  },
  {
    words: ['catalog', 'remove'],
    usage: 'catalog remove NAME',
    doc: 'Remove a CatalogSource',
    session: true,
    flags: [],
    run: async (s, a, _g, p) => (await import('./catalog.js')).catalogRemove(need(s), a, p),
  },
  {
    words: ['install'],
    usage: 'install PACKAGE',
    doc: 'Install an operator: a Subscription (and an OperatorGroup when asked)',
    session: true,
    flags: [
      flag('channel', "Channel to subscribe to (default: the package's default channel)"),
      flag('version', 'Version to install (the Subscription starts at it)'),
      flag('approval', 'InstallPlan approval: Automatic or Manual (default Automatic)'),
      flag(
        'create-operator-group',
        'Create an OperatorGroup when the namespace has none',
        'boolean',
      ),
      flag('catalog', 'The catalog to install from, when several serve the package'),
      ...waitFlags,
    ],
    validate: (a) => {
      choiceFlag(a, 'approval', ['Automatic', 'Manual']);
      durationFlag(a, 'timeout', 0);
    },
    run: async (s, a, g, p) => (await import('./install.js')).install(need(s), a, g, p),
  },
  {
    words: ['upgrade'],
    usage: 'upgrade PACKAGE',
    doc: 'Approve the pending InstallPlan, or switch channel (--channel)',
    session: true,
    flags: [flag('channel', 'Channel to switch to'), ...waitFlags],
    run: async (s, a, g, p) => (await import('./install.js')).upgrade(need(s), a, g, p),
  },
  {
    words: ['uninstall'],
    usage: 'uninstall PACKAGE',
    doc: 'Delete the Subscription and its CSV (and CRDs, OperatorGroup when asked)',
    session: true,
    flags: [
      flag('delete-crds', 'Also delete the CRDs the CSV owns (and all their objects)', 'boolean'),
      flag(
        'delete-operator-groups',
        'Also delete the OperatorGroup when no other Subscription uses it',
        'boolean',
      ),
      flag('delete-all', 'Both of the above', 'boolean'),
    ],
    run: async (s, a, g, p) => (await import('./install.js')).uninstall(need(s), a, g, p),
  },
  {
    words: ['list'],
    usage: 'list [-A]',
    doc: 'List installed operators',
    session: true,
    flags: [],
    run: async (s, _a, g, p) => (await import('./installed.js')).list(need(s), g, p),
  },
  {
    words: ['list-available'],
    usage: 'list-available [PACKAGE]',
    doc: 'List the packages the catalogs offer (PackageManifests)',
    session: true,
    flags: [flag('catalog', 'Only this catalog')],
    run: async (s, a, g, p) => (await import('./packages.js')).listAvailable(need(s), a, g, p),
  },
  {
    words: ['describe'],
    usage: 'describe PACKAGE',
    doc: "A package's channels, versions and description",
    session: true,
    flags: [flag('catalog', 'The catalog, when several serve the package')],
    run: async (s, a, g, p) => (await import('./packages.js')).describePackage(need(s), a, g, p),
  },
  {
    words: ['why'],
    usage: 'why SUBSCRIPTION',
    doc: 'Why a Subscription is not installed: the chain, the cause, the fix',
    session: true,
    flags: [],
    run: async (s, a, g, p) => (await import('./why.js')).why(need(s), a, g, p),
  },
  {
    words: ['preview'],
    usage: 'preview SUBSCRIPTION',
    doc: 'What an approval or a channel switch would install',
    session: true,
    flags: [
      flag('channel', 'Preview switching to this channel'),
      flag('global-catalog-namespace', 'The global catalog namespace (default olm)'),
      flag('timeout', 'How long to wait for each catalog registry (default 15s)'),
    ],
    run: async (s, a, g, p) => (await import('./preview.js')).preview(need(s), a, g, p),
  },
  {
    words: ['fleet', 'status'],
    usage: 'fleet status',
    doc: "Each package's version per cluster, drift from the channel head, failures",
    session: false,
    flags: [
      flag('contexts', 'Comma-separated contexts (default: every context of the kubeconfig)'),
    ],
    run: async (_s, a, g, p) => (await import('./fleet.js')).fleetStatus(a, g, p),
  },
];

function help(command?: Command): string {
  if (command !== undefined) {
    const flags = [...command.flags, ...globalFlags].map(
      (f) =>
        `  ${f.short === undefined ? '    ' : `-${f.short}, `}--${f.name}${f.kind === 'string' ? ' VALUE' : ''}`.padEnd(
          40,
        ) + f.doc,
    );
    return `${command.doc}.\n\nUsage:\n  kubectl olmq ${command.usage} [flags]\n\nFlags:\n${flags.join('\n')}\n`;
  }
  const lines = commands.map((c) => `  ${c.usage.padEnd(38)}${c.doc}`);
  return `kubectl olmq: manage operators on an olmq (or OLM) cluster.\n\nCommands:\n${lines.join('\n')}\n\nGlobal flags:\n${globalFlags.map((f) => `  ${f.short === undefined ? '    ' : `-${f.short}, `}--${f.name}`.padEnd(40) + f.doc).join('\n')}\n\nRun "kubectl olmq COMMAND --help" for a command's flags.\n`;
}

// Flags that take a value, in any command: their values are not command words.
const valued = new Set(
  [...globalFlags, ...commands.flatMap((c) => c.flags)]
    .filter((f) => f.kind === 'string')
    .flatMap((f) => [`--${f.name}`, ...(f.short === undefined ? [] : [`-${f.short}`])]),
);

/** The words of a command line, flags and their values left out. */
function commandWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') break;
    if (!arg.startsWith('-')) words.push(arg);
    else if (valued.has(arg)) i++;
  }
  return words;
}

/** Finds the command the words name. */
function commandOf(words: readonly string[]): Command | undefined {
  return commands
    .filter((c) => c.words.every((w, i) => words[i] === w))
    .sort((a, b) => b.words.length - a.words.length)[0];
}

/** Runs the plugin on `argv` (without node and script); returns the exit code. */
export async function runPlugin(
  argv: readonly string[],
  printer: Printer = processPrinter(),
): Promise<number> {
  try {
    // Find the command from the leading words, then parse with its flags.
    const loose = commandWords(argv);
    const command = commandOf(loose);
    if (command === undefined) {
      if (
        argv.length === 0 ||
        argv.includes('--help') ||
        argv.includes('-h') ||
        loose[0] === 'help'
      ) {
        printer.out(help());
        return pluginExit.ok;
      }
      throw new UsageError(
        `unknown command "${loose.slice(0, 2).join(' ')}" (see kubectl olmq --help)`,
      );
    }
    const args = parseArgs(argv, [...command.flags, ...globalFlags]);
    const global = globalOptions(args);
    if (global.help) {
      printer.out(help(command));
      return pluginExit.ok;
    }
    // Words must lead: `kubectl olmq -n x install p` is fine, the words stay in order.
    if (!command.words.every((w, i) => args.positionals[i] === w))
      throw new UsageError(
        `unknown command "${args.positionals.slice(0, 2).join(' ')}" (see kubectl olmq --help)`,
      );
    // Handlers load on use: a command pays only for its own imports (the gRPC client is preview's).
    command.validate?.(args);
    const session = command.session
      ? await (await import('./session.js')).openSession(global)
      : undefined;
    try {
      return (await command.run(session, args, global, printer)) ?? pluginExit.ok;
    } finally {
      session?.client.close();
    }
  } catch (error) {
    if (error instanceof UsageError) {
      printer.progress(`error: ${error.message}\n`);
      return pluginExit.usage;
    }
    if (error instanceof NotFoundError || error instanceof CommandFailedError) {
      printer.progress(`error: ${error.message}\n`);
      return pluginExit.failed;
    }
    if (error instanceof KubeApiError) {
      // As kubectl words API errors: "Error from server (Reason): message".
      printer.progress(`Error from server (${error.reason}): ${error.message}\n`);
      return pluginExit.failed;
    }
    printer.progress(`error: ${(error as Error).message}\n`);
    return pluginExit.failed;
  }
}
