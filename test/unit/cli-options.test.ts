import t from 'tap';
import { commands } from '../../cli/commands.js';
import { ConfigError, option, parseCommandLine } from '../../cli/options.js';

const options = {
  port: option.integer({
    flag: 'port',
    env: 'T_PORT',
    default: 8080,
    min: 0,
    max: 65535,
    doc: 'port',
  }),
  url: option.optionalUrl({ flag: 'nats-url', env: 'T_NATS', schemes: ['nats'], doc: 'nats' }),
  mode: option.choice({
    flag: 'output',
    short: 'o',
    values: ['json', 'text'],
    default: 'text',
    doc: 'out',
  }),
  force: option.switch({ flag: 'force', env: 'T_FORCE', doc: 'force' }),
  catalogs: option.list({ flag: 'catalog', env: 'T_CATALOGS', doc: 'catalogs' }),
  file: option.requiredText({ flag: 'file', doc: 'file' }),
};

t.test('cli options - defaults apply when neither flag nor env var is set', (t) => {
  const { config } = parseCommandLine(options, ['--file', 'x'], {});
  t.same(config, {
    port: 8080,
    url: undefined,
    mode: 'text',
    force: false,
    catalogs: [],
    file: 'x',
  });
  t.ok(Object.isFrozen(config), 'config is frozen');
  t.end();
});

t.test('cli options - a flag wins over the environment, which wins over the default', (t) => {
  const env = { T_PORT: '81', T_NATS: 'nats://env:4222', T_FORCE: '1', T_CATALOGS: 'a,b' };
  const fromEnv = parseCommandLine(options, ['--file', 'x'], env).config;
  t.equal(fromEnv.port, 81);
  t.equal(fromEnv.url, 'nats://env:4222');
  t.equal(fromEnv.force, true);
  t.same(fromEnv.catalogs, ['a', 'b']);
  const fromFlags = parseCommandLine(
    options,
    ['--file', 'x', '--port', '82', '--catalog', 'c', '--catalog', 'd', '-o', 'json'],
    env,
  ).config;
  t.equal(fromFlags.port, 82);
  t.same(fromFlags.catalogs, ['c', 'd']);
  t.equal(fromFlags.mode, 'json');
  t.end();
});

t.test('cli options - a bad value names the flag or env var and why', (t) => {
  const error = t.throws(() => parseCommandLine(options, ['--file', 'x', '--port', 'abc'], {}));
  t.type(error, ConfigError);
  t.match((error as ConfigError).issues, [{ source: '--port', message: /"abc".*whole number/ }]);
  const fromEnv = t.throws(() => parseCommandLine(options, ['--file', 'x'], { T_PORT: '70000' }));
  t.match((fromEnv as ConfigError).issues, [
    { source: 'T_PORT (environment)', message: /at most 65535/ },
  ]);
  const scheme = t.throws(() =>
    parseCommandLine(options, ['--file', 'x', '--nats-url', 'http://a'], {}),
  );
  t.match((scheme as ConfigError).message, /--nats-url: .*must use nats:\/\//);
  t.end();
});

t.test('cli options - every bad option is reported at once', (t) => {
  const error = t.throws(() =>
    parseCommandLine(options, ['--port=-1', '-o', 'xml'], {}),
  ) as ConfigError;
  t.same(
    error.issues.map((i) => i.source),
    ['--port', '--output', '--file'],
  );
  t.match(error.issues[2]?.message, /is required/);
  t.end();
});

t.test('cli options - unknown flags are refused by name', (t) => {
  const error = t.throws(() => parseCommandLine(options, ['--prot', '1'], {})) as ConfigError;
  t.match(error.message, /Unknown option '--prot'/);
  t.end();
});

t.test('cli options - --help skips validation of missing required options', (t) => {
  const parsed = parseCommandLine(options, ['--help'], {});
  t.equal(parsed.help, true);
  t.end();
});

t.test('cli options - olmq run takes the API request limits by flag or environment', (t) => {
  const run = commands.run.options;
  const { config } = parseCommandLine(run, ['--kube-api-qps', '500'], {
    OLMQ_KUBE_API_BURST: '900',
  });
  t.equal(config.kubeApiQps, 500);
  t.equal(config.kubeApiBurst, 900);
  t.equal(parseCommandLine(run, [], {}).config.kubeApiQps, 200, 'default');
  const error = t.throws(() => parseCommandLine(run, ['--kube-api-qps', '0'], {}));
  t.match(String(error), /--kube-api-qps/);
  t.end();
});
