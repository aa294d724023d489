// `kubectl olmq` command lines: kubectl's global flags beside each command's, values given
// either way, errors naming the flag; tables printed as kubectl prints them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  choiceFlag,
  durationFlag,
  globalFlags,
  globalOptions,
  parseArgs,
  type FlagSpec,
} from '../../cli/plugin/args.js';
import { isRegistryAddress } from '../../cli/plugin/catalog.js';
import { runPlugin } from '../../cli/plugin/commands.js';
import { processPrinter, styles, table } from '../../cli/plugin/output.js';
import { age } from '../../cli/plugin/progress.js';
import { UsageError } from '../../cli/plugin/types.js';
import { repoRoot } from '../harness/repo.js';

const specs: FlagSpec[] = [
  ...globalFlags,
  { name: 'channel', kind: 'string', doc: '' },
  { name: 'wait', kind: 'boolean', doc: '' },
  { name: 'timeout', kind: 'string', doc: '' },
];

t.test('plugin args - long, short and = forms; positionals in order', (t) => {
  const args = parseArgs(['install', '-n', 'team', 'etcd', '--channel=alpha', '--wait'], specs);
  t.same(args.positionals, ['install', 'etcd']);
  t.equal(args.flags.get('namespace'), 'team');
  t.equal(args.flags.get('channel'), 'alpha');
  t.equal(args.flags.get('wait'), true);
  const global = globalOptions(parseArgs(['-o', 'json', '--context=c2', '-A'], specs));
  t.same(global, {
    kubeconfig: undefined,
    context: 'c2',
    namespace: undefined,
    allNamespaces: true,
    output: 'json',
    help: false,
  });
  t.end();
});

t.test('plugin args - errors name the flag', (t) => {
  t.throws(() => parseArgs(['--bogus'], specs), new UsageError('unknown flag: --bogus'));
  t.throws(
    () => parseArgs(['--channel'], specs),
    new UsageError('--channel: flag needs an argument'),
  );
  t.throws(
    () => parseArgs(['--wait=maybe'], specs),
    new UsageError('--wait: expected true or false, got "maybe"'),
  );
  t.throws(
    () => globalOptions(parseArgs(['-o', 'wide'], specs)),
    new UsageError('--output: "wide" is not one of json, yaml, table'),
  );
  t.throws(
    () => choiceFlag(parseArgs(['--channel', 'x'], specs), 'channel', ['a', 'b']),
    new UsageError('--channel: "x" is not one of a, b'),
  );
  t.throws(
    () => durationFlag(parseArgs(['--timeout', 'soon'], specs), 'timeout', 1),
    new UsageError('--timeout: "soon" is not a duration (e.g. 90s, 5m, 1h)'),
  );
  t.equal(durationFlag(parseArgs(['--timeout', '2m'], specs), 'timeout', 1), 120_000);
  t.equal(durationFlag(parseArgs(['--timeout', '45'], specs), 'timeout', 1), 45_000);
  t.equal(durationFlag(parseArgs([], specs), 'timeout', 7), 7);
  t.end();
});

t.test(
  'plugin args - a flag value is never taken for a command word; usage errors exit 2',
  async (t) => {
    const err: string[] = [];
    const printer = {
      out: () => undefined,
      progress: (s: string) => void err.push(s),
      colour: false,
    };
    t.equal(await runPlugin(['--kubeconfig', '/nonexistent/kc', 'list'], printer), 2);
    t.match(err.join(''), /^error: --kubeconfig: cannot read \/nonexistent\/kc/);
    err.length = 0;
    t.equal(await runPlugin(['catalog', 'frob'], printer), 2);
    t.match(err.join(''), /unknown command "catalog frob"/);
    const out: string[] = [];
    t.equal(
      await runPlugin(['install', '--help'], { ...printer, out: (s) => void out.push(s) }),
      0,
    );
    t.match(out.join(''), /kubectl olmq install PACKAGE \[flags\][\s\S]*--approval VALUE/);
  },
);

t.test(
  'plugin output - kubectl tables: upper-case headers, aligned, <none> for empty cells',
  (t) => {
    t.equal(
      table(
        ['name', 'display name'],
        [
          ['a', ''],
          ['longer', 'x'],
        ],
      ),
      'NAME     DISPLAY NAME\na        <none>\nlonger   x\n',
    );
    t.end();
  },
);

t.test('plugin catalog - host:port is a registry address, anything else an image', (t) => {
  t.ok(isRegistryAddress('127.0.0.1:50051'));
  t.ok(isRegistryAddress('catalog.olm.svc:50051'));
  t.ok(isRegistryAddress('[::1]:50051'));
  t.notOk(isRegistryAddress('quay.io/operatorhubio/catalog:latest'));
  t.notOk(isRegistryAddress('localhost:5000/catalog:v1'));
  t.end();
});

t.test('plugin output - ages as kubectl shows them', (t) => {
  const now = Date.parse('2026-01-02T00:00:00Z');
  t.equal(age('2026-01-01T23:59:30Z', now), '30s');
  t.equal(age('2026-01-01T23:50:00Z', now), '10m');
  t.equal(age('2026-01-01T20:00:00Z', now), '4h');
  t.equal(age('2025-12-20T00:00:00Z', now), '13d');
  t.equal(age(undefined, now), '');
  t.end();
});

t.test('plugin package - the bin kubectl-olmq is the compiled plugin, runnable as is', (t) => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  t.equal(manifest.bin['kubectl-olmq'], './dist/cli/plugin/main.js');
  const main = readFileSync(join(repoRoot, 'dist', 'cli', 'plugin', 'main.js'), 'utf8');
  t.match(main, /^#!\/usr\/bin\/env node\n/, 'kubectl execs it directly');
  t.end();
});

t.test(
  'plugin output - colour only when asked: escape codes on a terminal, plain otherwise',
  (t) => {
    t.equal(styles(false).red('FAILED'), 'FAILED');
    t.equal(styles(true).red('FAILED'), '\u001b[31mFAILED\u001b[0m');
    const saved = process.env['NO_COLOR'];
    process.env['NO_COLOR'] = '1';
    t.equal(processPrinter().colour, false, 'NO_COLOR wins even on a terminal');
    if (saved === undefined) delete process.env['NO_COLOR'];
    else process.env['NO_COLOR'] = saved;
    t.end();
  },
);
