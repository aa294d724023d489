import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { configurationReference } from '../../cli/reference.js';
import { runOlmq } from '../harness/cli.js';
import { repoRoot } from '../harness/repo.js';

/** Runs the built olmq CLI with `env` added to this process's environment. */
const olmq = (args: string[], env: Record<string, string> = {}) =>
  runOlmq(args, { ...process.env, ...env });

t.test('cli - --help lists every command and exits 0', async (t) => {
  const { code, stdout } = await olmq(['--help']);
  t.equal(code, 0);
  for (const word of [
    'up',
    'devcluster',
    'watcher',
    'run',
    'resolve',
    'registry serve',
    'version',
  ]) {
    t.match(stdout, new RegExp(`\\n  ${word} `), `lists ${word}`);
  }
});

t.test('cli - every command has --help with its options and env vars', async (t) => {
  const { code, stdout } = await olmq(['run', '--help']);
  t.equal(code, 0);
  t.match(stdout, /Usage: olmq run <function> \[options\]/);
  t.match(stdout, /--concurrency N .*env OLMQ_CONCURRENCY; default 4/);
  t.match(stdout, /--nats-url URLS .*env NATS_URL/);
});

t.test('cli - the watcher refuses a kubeconfig it cannot read, naming the file', async (t) => {
  const { code, stderr } = await olmq(['watcher', '--kubeconfig', '/nonexistent/kubeconfig']);
  t.equal(code, 2);
  t.match(stderr, /olmq watcher: kubeconfig \/nonexistent\/kubeconfig does not exist/);
});

t.test('cli - run refuses a bad kubeconfig file in its pool directory, naming it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-cli-pool-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'broken.yaml'), 'not: a kubeconfig: [');
  const { code, stderr } = await olmq(['run', 'plan', '--kubeconfig', dir]);
  t.equal(code, 2);
  t.match(stderr, /olmq run plan: cannot read kubeconfig \S*broken\.yaml/);
});

t.test('cli - a bad flag value exits 2 naming the flag and the reason', async (t) => {
  const { code, stderr } = await olmq(['devcluster', '--port', 'abc']);
  t.equal(code, 2);
  t.match(stderr, /olmq devcluster: --port: invalid value "abc": must be a whole number/);
});

t.test('cli - a bad env var value exits 2 naming the variable', async (t) => {
  const { code, stderr } = await olmq(['up'], { NATS_URL: 'http://localhost:4222' });
  t.equal(code, 2);
  t.match(
    stderr,
    /NATS_URL \(environment\): invalid value "http:\/\/localhost:4222": must use nats:\/\//,
  );
});

t.test('cli - an unknown command or function exits 2', async (t) => {
  t.equal((await olmq(['frobnicate'])).code, 2);
  const { code, stderr } = await olmq(['run', 'nope']);
  t.equal(code, 2);
  t.match(
    stderr,
    /unknown <function> "nope" \(one of: catalog, resolve, plan, install, rbac, copy-csv, operator\)/,
  );
});

t.test('cli - run with bad options exits 2 naming the option', async (t) => {
  const zero = await olmq(['run', 'install', '--concurrency', '0']);
  t.equal(zero.code, 2);
  t.match(zero.stderr, /olmq run: --concurrency: invalid value "0": must be at least 1/);
  const env = await olmq(['run', 'install'], { OLMQ_CONCURRENCY: 'many' });
  t.equal(env.code, 2);
  t.match(
    env.stderr,
    /OLMQ_CONCURRENCY \(environment\): invalid value "many": must be a whole number/,
  );
  const none = await olmq(['run']);
  t.equal(none.code, 2);
  t.match(none.stderr, /olmq run: takes <function>, got \[\]/);
  const two = await olmq(['run', 'install', 'plan']);
  t.equal(two.code, 2);
});

t.test('cli - version prints the package version', async (t) => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  const { code, stdout } = await olmq(['version']);
  t.equal(code, 0);
  t.match(stdout, `olmq ${manifest.version}`);
});

t.test('cli - docs/configuration.md is generated from the current options', (t) => {
  const onDisk = readFileSync(join(repoRoot, 'docs', 'configuration.md'), 'utf8');
  t.equal(
    onDisk,
    configurationReference(),
    'run `npm run gen:docs` after changing cli/commands.ts',
  );
  t.end();
});
