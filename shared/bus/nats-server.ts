// A local nats-server child process with JetStream, for `olmq up` (when no NATS_URL is given)
// and for tests. The port is chosen by the server (-p -1) and read back from its log, never
// guessed, so parallel test files cannot collide.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How to start a local nats-server. */
export interface NatsServerOptions {
  /** Executable to run; default `nats-server` from PATH. */
  binary?: string;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Client port; default: a free port chosen by the server. */
  port?: number;
  /** JetStream store directory; default: a fresh temp dir, removed by stop(). */
  storeDir?: string;
  /** Also serve the HTTP monitoring endpoint (/varz, /jsz) on a free port. */
  monitoring?: boolean;
  /** How long to wait for "Server is ready"; default 10 s. */
  startTimeoutMs?: number;
  /** A configuration file (users, TLS, ...); the options above still win over it. */
  configFile?: string;
  /** More command-line arguments, e.g. a server name and cluster routes. */
  extraArgs?: readonly string[];
}

/** A running nats-server. */
export interface NatsServer {
  /** nats://host:port */
  readonly url: string;
  readonly port: number;
  /** http://host:port of the monitoring endpoint, when enabled. */
  readonly monitorUrl: string | undefined;
  readonly storeDir: string;
  readonly pid: number;
  /** Stops the server gracefully (SIGTERM, then SIGKILL) and removes a temp store dir. */
  stop(): Promise<void>;
  /** Kills the process abruptly (SIGKILL), keeping the store; for crash tests. */
  kill(): Promise<void>;
  /** Stops the server if it runs and starts it again on the same port and store dir. */
  restart(): Promise<NatsServer>;
}

/** nats-server is not installed where we looked. */
export class NatsServerNotFoundError extends Error {
  constructor(readonly binary: string) {
    super(
      `nats-server not found (tried "${binary}"). Install it (Debian: apt-get install nats-server; ` +
        '`npm start`/`npm test` do this automatically as root) or point NATS_URL at a server with JetStream.',
    );
    this.name = 'NatsServerNotFoundError';
  }
}

/** nats-server exited or stayed silent before it was ready. */
export class NatsServerStartError extends Error {
  constructor(
    message: string,
    readonly log: string,
  ) {
    super(`${message}\n--- nats-server log (tail) ---\n${log.split('\n').slice(-15).join('\n')}`);
    this.name = 'NatsServerStartError';
  }
}

const listeningPattern = /Listening for client connections on (\S+):(\d+)/;
const monitorPattern = /Starting http monitor on (\S+):(\d+)/;

/** Starts nats-server with JetStream and resolves once it accepts clients. */
export function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  return launch(options, options.storeDir === undefined);
}

// `ownStore`: the store dir is ours to delete on stop(), also after restarts.
async function launch(options: NatsServerOptions, ownStore: boolean): Promise<NatsServer> {
  const binary = options.binary ?? 'nats-server';
  const host = options.host ?? '127.0.0.1';
  const storeDir = options.storeDir ?? (await mkdtemp(join(tmpdir(), 'olmq-nats-')));
  const args = ['-a', host, '-p', String(options.port ?? -1), '-js', '-sd', storeDir];
  if (options.monitoring === true) args.push('-m', '-1');
  if (options.configFile !== undefined) args.push('-c', options.configFile);
  args.push(...(options.extraArgs ?? []));

  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const ready = await new Promise<{ port: number; monitorPort: number | undefined }>(
    (resolve, reject) => {
      let port: number | undefined;
      let monitorPort: number | undefined;
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new NatsServerStartError(
            `nats-server did not become ready within ${options.startTimeoutMs ?? 10_000} ms`,
            log,
          ),
        );
      }, options.startTimeoutMs ?? 10_000);
      const settle = (): void => {
        clearTimeout(timer);
        child.stderr?.removeAllListeners('data');
        child.removeAllListeners('exit');
        child.removeAllListeners('error');
      };
      child.once('error', (error: NodeJS.ErrnoException) => {
        settle();
        reject(
          error.code === 'ENOENT'
            ? new NatsServerNotFoundError(binary)
            : new NatsServerStartError(`could not start nats-server: ${error.message}`, log),
        );
      });
      child.once('exit', (code, signal) => {
        settle();
        reject(
          new NatsServerStartError(
            `nats-server exited before it was ready (${signal ?? `exit code ${code}`})`,
            log,
          ),
        );
      });
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        log += chunk;
        port ??= Number(listeningPattern.exec(log)?.[2] ?? Number.NaN) || undefined;
        monitorPort ??= Number(monitorPattern.exec(log)?.[2] ?? Number.NaN) || undefined;
        if (port !== undefined && log.includes('Server is ready')) {
          settle();
          resolve({ port, monitorPort });
        }
      });
    },
  );
  // Keep draining stderr so a chatty server never blocks on a full pipe.
  child.stderr?.resume();

  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  return {
    url: `nats://${host}:${ready.port}`,
    port: ready.port,
    monitorUrl: ready.monitorPort === undefined ? undefined : `http://${host}:${ready.monitorPort}`,
    storeDir,
    pid: pidOf(child),
    async stop() {
      await terminate('SIGTERM');
      if (ownStore) await rm(storeDir, { recursive: true, force: true });
    },
    kill: () => terminate('SIGKILL'),
    async restart() {
      await terminate('SIGTERM');
      return launch({ ...options, port: ready.port, storeDir }, ownStore);
    },
  };
}

function pidOf(child: ChildProcess): number {
  if (child.pid === undefined) throw new NatsServerStartError('nats-server has no pid', '');
  return child.pid;
}
