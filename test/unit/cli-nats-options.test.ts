import t from 'tap';
import { commands } from '../../cli/commands.js';
import { backboneOptionsOf, natsSettingsProblems } from '../../cli/nats-options.js';
import { ConfigError, parseCommandLine, parseDuration } from '../../cli/options.js';

const run = commands.run.options;
const issuesOf = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const error = t.throws(() => parseCommandLine(run, argv, env));
  if (!(error instanceof ConfigError)) throw new Error('expected a ConfigError');
  return error.issues;
};

t.test('cli nats options - --nats-url takes a comma-separated server list', (t) => {
  const { config } = parseCommandLine(
    run,
    ['--nats-url', 'nats://a:4222,tls://b:4222, nats://c:4222'],
    {},
  );
  t.same(config.natsUrl, ['nats://a:4222', 'tls://b:4222', 'nats://c:4222']);
  t.same(parseCommandLine(run, [], {}).config.natsUrl, ['nats://127.0.0.1:4222'], 'default');
  t.end();
});

t.test('cli nats options - a bad server of the list is named with its position', (t) => {
  t.match(issuesOf(['--nats-url', 'nats://a:4222,notaurl']), [
    { source: '--nats-url', message: /server 2 "notaurl" must be a URL/ },
  ]);
  t.match(issuesOf([], { NATS_URL: 'nats://a:1,' }), [
    { source: 'NATS_URL (environment)', message: /server 2 "" must not be empty/ },
  ]);
  t.match(issuesOf(['--nats-url', 'notaurl']), [
    { source: '--nats-url', message: /"notaurl": must be a URL/ },
  ]);
  t.end();
});

t.test('cli nats options - credential and TLS files must exist', (t) => {
  t.match(issuesOf(['--nats-creds', '/nonexistent/olmq.creds']), [
    { source: '--nats-creds', message: /no such file or directory/ },
  ]);
  t.match(issuesOf([], { NATS_CA: '/' }), [
    { source: 'NATS_CA (environment)', message: /must be a file/ },
  ]);
  t.end();
});

t.test('cli nats options - combinations are checked together', (t) => {
  const base = {
    natsUrl: undefined,
    natsUser: undefined,
    natsPassword: undefined,
    natsToken: undefined,
    natsNkey: undefined,
    natsCreds: undefined,
    natsCa: undefined,
    natsCert: undefined,
    natsKey: undefined,
  };
  t.same(natsSettingsProblems(base), []);
  t.match(natsSettingsProblems({ ...base, natsUser: 'u' }), [
    { source: '--nats-password', message: /required with --nats-user/ },
  ]);
  t.match(natsSettingsProblems({ ...base, natsToken: 't', natsCreds: 'c' }), [
    { source: '--nats-token, --nats-creds', message: /choose one way/ },
  ]);
  t.match(natsSettingsProblems({ ...base, natsCert: 'c' }), [
    { source: '--nats-tls-cert, --nats-tls-key', message: /go together/ },
  ]);
  t.end();
});

t.test('cli nats options - stream replicas and placement reach the backbone options', (t) => {
  const { config } = parseCommandLine(run, ['--stream-replicas', '3'], {
    OLMQ_STREAM_TAGS: 'ssd,eu',
  });
  t.same(backboneOptionsOf(config), {
    replicas: 3,
    placement: { cluster: '', tags: ['ssd', 'eu'] },
  });
  t.same(backboneOptionsOf(parseCommandLine(run, [], {}).config), {}, 'absent: keep existing');
  t.match(issuesOf(['--stream-replicas', '7']), [
    { source: '--stream-replicas', message: /at most 5/ },
  ]);
  t.end();
});

t.test('cli nats options - durations', (t) => {
  t.equal(parseDuration('90s'), 90_000);
  t.equal(parseDuration('1h30m'), 5_400_000);
  t.equal(parseDuration('7d'), 604_800_000);
  t.equal(parseDuration('5'), undefined);
  t.equal(parseDuration('1x'), undefined);
  const watcher = commands.watcher.options;
  t.equal(parseCommandLine(watcher, [], {}).config.purgeDeletesAfter, 3_600_000, 'default 1h');
  const error = t.throws(() => parseCommandLine(watcher, ['--purge-deletes-after', '10s'], {}));
  t.match(String(error), /--purge-deletes-after: invalid value "10s": must be between 1m and 30d/);
  t.end();
});

t.test('cli nats options - listen addresses must be IP addresses or host names', (t) => {
  const devcluster = commands.devcluster.options;
  t.equal(parseCommandLine(devcluster, ['--host', '0.0.0.0'], {}).config.host, '0.0.0.0');
  t.equal(parseCommandLine(devcluster, ['--host', '::1'], {}).config.host, '::1');
  t.equal(
    parseCommandLine(devcluster, ['--host', 'my-host.local'], {}).config.host,
    'my-host.local',
  );
  const error = t.throws(() => parseCommandLine(devcluster, ['--host', 'http://x'], {}));
  t.match(
    String(error),
    /--host: invalid value "http:\/\/x": must be an IP address or a host name/,
  );
  t.end();
});
