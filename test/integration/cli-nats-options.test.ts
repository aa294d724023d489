// Bad NATS and address options, run through the real olmq binary: every command that connects
// exits 2 naming the flag or environment variable (regression: `olmq up --nats-url notaurl`
// printed `olmq: Invalid URL` and exited 1).
import t from 'tap';
import { runOlmq } from '../harness/cli.js';

const olmq = (args: string[], env: Record<string, string> = {}) =>
  runOlmq(args, { ...process.env, NATS_URL: '', ...env });

const connecting = [['up'], ['run', 'install'], ['watcher'], ['packageserver']];

t.test(
  'cli nats - a --nats-url that is no URL exits 2 naming the flag, for every command',
  async (t) => {
    for (const words of connecting) {
      const { code, stderr } = await olmq([...words, '--nats-url', 'notaurl']);
      t.equal(code, 2, words.join(' '));
      t.match(stderr, `olmq ${words[0]}`, 'names the command');
      t.match(stderr, /--nats-url: invalid value "notaurl": must be a URL/);
      t.notMatch(stderr, /^olmq: Invalid URL/m);
    }
  },
);

t.test('cli nats - a bad NATS_URL server list exits 2 naming the variable', async (t) => {
  for (const words of connecting) {
    const { code, stderr } = await olmq(words, { NATS_URL: 'nats://127.0.0.1:4222,http://x' });
    t.equal(code, 2, words.join(' '));
    t.match(
      stderr,
      /NATS_URL \(environment\): invalid value ".*": server 2 "http:\/\/x" must use nats:\/\//,
    );
  }
});

t.test(
  'cli nats - missing credential files and lone halves exit 2 naming the option',
  async (t) => {
    const creds = await olmq(['run', 'plan', '--nats-creds', '/nonexistent/a.creds']);
    t.equal(creds.code, 2);
    t.match(
      creds.stderr,
      /--nats-creds: invalid value "\/nonexistent\/a.creds": no such file or directory/,
    );
    const nkey = await olmq(['watcher'], { NATS_NKEY: '/nonexistent/seed' });
    t.equal(nkey.code, 2);
    t.match(nkey.stderr, /NATS_NKEY \(environment\): .*no such file or directory/);
    const user = await olmq(['packageserver', '--nats-user', 'olmq-packageserver']);
    t.equal(user.code, 2);
    t.match(user.stderr, /olmq packageserver: --nats-password: is required with --nats-user/);
    const cert = await olmq(['up', '--nats-tls-cert', 'package.json']);
    t.equal(cert.code, 2);
    t.match(cert.stderr, /olmq up: --nats-tls-cert, --nats-tls-key: go together/);
  },
);

t.test('cli nats - stream options and durations are validated', async (t) => {
  const replicas = await olmq(['run', 'install'], { OLMQ_STREAM_REPLICAS: 'three' });
  t.equal(replicas.code, 2);
  t.match(
    replicas.stderr,
    /OLMQ_STREAM_REPLICAS \(environment\): invalid value "three": must be a whole number/,
  );
  const purge = await olmq(['watcher', '--purge-deletes-after', 'soon']);
  t.equal(purge.code, 2);
  t.match(purge.stderr, /--purge-deletes-after: invalid value "soon": must be a duration/);
});

t.test('cli nats - listen addresses and serving files are validated', async (t) => {
  const host = await olmq(['devcluster', '--host', 'not a host']);
  t.equal(host.code, 2);
  t.match(
    host.stderr,
    /olmq devcluster: --host: invalid value "not a host": must be an IP address or a host name/,
  );
  const ps = await olmq(['packageserver'], {
    OLMQ_PACKAGESERVER_TLS_CERT_FILE: '/nonexistent/tls.crt',
  });
  t.equal(ps.code, 2);
  t.match(
    ps.stderr,
    /OLMQ_PACKAGESERVER_TLS_CERT_FILE \(environment\): .*no such file or directory/,
  );
});
