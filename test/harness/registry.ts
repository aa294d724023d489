// Test fixture: a real registry (Debian's docker-registry, distribution 2.8) on a free port
// with a temp store and a config written here; variants with htpasswd auth (bcrypt made with
// perl's crypt, which is libxcrypt's) and TLS (a CA and server certificate made with openssl).
// Stopped and cleaned up when the test ends.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Test } from 'tap';
import { startTokenServer, type TokenServer } from './token-server.js';

/** A running registry. */
export interface TestRegistry {
  /** host:port, as an image reference starts. */
  host: string;
  /** Base URL (http:// or https://). */
  url: string;
  /** PEM of the CA that signed the server certificate (TLS variant). */
  caPem?: string;
  /** The user and password the htpasswd variant accepts. */
  username?: string;
  password?: string;
  /** The token server (token variant). */
  token?: TokenServer;
  /** The store directory (docker/registry/v2/...). */
  storeDir: string;
  /** Overwrites a stored blob's bytes (fault injection: the registry then serves wrong content). */
  corruptBlob(digest: string, bytes: Buffer): Promise<void>;
  stop(): Promise<void>;
}

/** Variants of the registry. */
export interface TestRegistryOptions {
  /** Require basic auth with a generated user (htpasswd). */
  htpasswd?: boolean;
  /** Require Bearer tokens from a token server started alongside (the distribution token spec). */
  token?: boolean;
  /** Serve HTTPS with a generated CA. */
  tls?: boolean;
  /** Address to bind (default 127.0.0.1). */
  bindHost?: string;
}

/** Finds docker-registry, or fails saying how to install it. */
export function registryBinary(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'docker-registry'))) return join(dir, 'docker-registry');
  }
  throw new Error(
    "docker-registry is not on PATH: install Debian's package (apt-get install docker-registry) or run `npm test` (the set-up installs it)",
  );
}

/** Starts a registry for test `t`; stopped and its files removed at t's teardown. */
export async function registryFor(
  t: Test,
  options: TestRegistryOptions = {},
): Promise<TestRegistry> {
  const registry = await startTestRegistry(options);
  t.teardown(() => registry.stop());
  return registry;
}

/** Starts a registry (the caller stops it). */
export async function startTestRegistry(options: TestRegistryOptions = {}): Promise<TestRegistry> {
  const binary = registryBinary();
  // The registry syncs every upload to disk: on a busy machine that is tens of milliseconds a
  // blob, so the store lives in memory (tmpfs) where there is one.
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = await mkdtemp(join(base, 'olmq-registry-'));
  const storeDir = join(dir, 'store');
  const bindHost = options.bindHost ?? '127.0.0.1';
  const lines = [
    'version: 0.1',
    'log:',
    '  level: info',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${storeDir}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: ${bindHost}:0`,
    `  secret: ${randomBytes(16).toString('hex')}`,
  ];
  let caPem: string | undefined;
  if (options.tls === true) {
    caPem = makeCertificates(dir);
    lines.push(
      '  tls:',
      `    certificate: ${join(dir, 'server.crt')}`,
      `    key: ${join(dir, 'server.key')}`,
    );
  }
  let username: string | undefined;
  let password: string | undefined;
  if (options.htpasswd === true) {
    username = 'olmq-test';
    password = randomBytes(9).toString('base64url');
    await writeFile(join(dir, 'htpasswd'), `${username}:${bcrypt(password)}\n`);
    lines.push(
      'auth:',
      '  htpasswd:',
      '    realm: olmq-test',
      `    path: ${join(dir, 'htpasswd')}`,
    );
  }
  let token: TokenServer | undefined;
  if (options.token === true) {
    token = await startTokenServer(dir);
    lines.push(
      'auth:',
      '  token:',
      `    realm: ${token.realm}`,
      `    service: ${token.service}`,
      `    issuer: ${token.issuer}`,
      `    rootcertbundle: ${token.certificateFile}`,
    );
  }
  await writeFile(join(dir, 'config.yml'), `${lines.join('\n')}\n`);
  const child = spawn(binary, ['serve', join(dir, 'config.yml')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let port: number;
  try {
    port = await listeningPort(child);
  } catch (error) {
    child.kill('SIGKILL');
    await token?.stop();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const host = `${bindHost}:${port}`;
  let stopped = false;
  const registry: TestRegistry = {
    host,
    url: `${options.tls === true ? 'https' : 'http'}://${host}`,
    storeDir,
    async corruptBlob(digest, bytes) {
      const hex = digest.split(':')[1] ?? '';
      await writeFile(
        join(storeDir, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data'),
        bytes,
      );
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await token?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  if (caPem !== undefined) registry.caPem = caPem;
  if (token !== undefined) registry.token = token;
  if (username !== undefined && password !== undefined) {
    registry.username = username;
    registry.password = password;
  }
  return registry;
}

/** Reads the port from the registry's `listening on host:port` log line. */
function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(
      () => reject(new Error(`docker-registry did not start within 10 s: ${log.slice(-500)}`)),
      10_000,
    );
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
      const match = /listening on \S*?:(\d+)/.exec(log);
      if (match !== null) {
        clearTimeout(timer);
        // Keep draining stderr so the registry never blocks on a full pipe.
        log = '';
        child.stderr?.removeAllListeners('data');
        child.stderr?.resume();
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`docker-registry exited (${code}) before listening: ${log.slice(-500)}`));
    });
  });
}

/** A bcrypt hash of `password` ($2b$, cost 5: fast enough for tests), by libxcrypt via perl. */
function bcrypt(password: string): string {
  const alphabet = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const salt = [...randomBytes(22)].map((b) => alphabet[b % 64]).join('');
  const result = spawnSync(
    'perl',
    ['-e', 'print crypt($ARGV[0], $ARGV[1])', '--', password, `$2b$05$${salt}`],
    { encoding: 'utf8' },
  );
  if (result.status !== 0 || !result.stdout.startsWith('$2b$'))
    throw new Error(`could not make a bcrypt hash with perl: ${result.stderr || result.stdout}`);
  return result.stdout;
}

/** Makes a CA and a server certificate for 127.0.0.1/localhost in `dir`; returns the CA PEM. */
function makeCertificates(dir: string): string {
  const run = (args: string[]) => {
    const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
  };
  run([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=olmq test CA',
  ]);
  run([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  ]);
  writeFileSync(
    join(dir, 'san.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n',
  );
  run([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  ]);
  return readFileSync(join(dir, 'ca.crt'), 'utf8');
}
