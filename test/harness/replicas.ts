// Function replicas as OS processes (`olmq run <function>` of the build, as a Deployment runs
// them) and a killer that SIGKILLs a random one of chosen functions on a schedule and starts a
// new one in its place, as a kubelet restarts a crashed container: for the chaos test and bench.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { olmqBin } from './repo.js';

/** Where every replica connects. */
export interface ReplicaSettings {
  kubeconfigPath: string;
  natsUrl: string;
  /** Default c1. */
  cluster?: string;
  /** More `olmq run` arguments (e.g. --concurrency). */
  extraArgs?: readonly string[];
  /** A directory to append each replica's output to (`<function>-<pid>.log`), to read after a run. */
  logDir?: string;
}

/** One kill the killer made. */
export interface KillRecord {
  fn: string;
  pid: number;
  /** Milliseconds since the killer started. */
  atMs: number;
}

interface Replica {
  fn: string;
  child: ChildProcess;
  ready: boolean;
  /** Set before this harness kills or stops it, so its exit is not a crash. */
  expectedExit: boolean;
}

/** How long a replica may take to say it runs (cold start on a loaded machine). */
const readyTimeoutMs = 120_000;
/** Lines of each replica's output kept to explain a crash. */
const tailLines = 40;

/** The running replicas of some functions; `stop()` ends every one. */
export class FunctionReplicas {
  readonly #settings: ReplicaSettings;
  readonly #replicas: Replica[] = [];
  /** Exits nobody asked for: a replica that crashed by itself, with its last output. */
  readonly crashes: { fn: string; code: number | null; signal: string | null; tail: string[] }[] =
    [];
  #stopping = false;

  constructor(settings: ReplicaSettings) {
    this.#settings = settings;
  }

  /** Starts `count` replicas of `fn` and resolves once each says it runs. */
  async start(fn: string, count = 1): Promise<void> {
    await Promise.all(Array.from({ length: count }, () => this.#launch(fn)));
  }

  /** The ready replicas of the functions named (pids), for choosing a victim. */
  ready(fns: readonly string[]): { fn: string; pid: number }[] {
    return this.#replicas
      .filter((r) => r.ready && fns.includes(r.fn) && r.child.pid !== undefined)
      .map((r) => ({ fn: r.fn, pid: r.child.pid ?? 0 }));
  }

  /**
   * SIGKILLs the replica `pid` (no drain, no acks, leases held) and, once it is gone, starts
   * a new replica of its function; resolves when the new one runs.
   */
  async killAndReplace(pid: number): Promise<void> {
    const victim = this.#replicas.find((r) => r.child.pid === pid);
    if (victim === undefined) throw new Error(`no replica with pid ${pid}`);
    victim.expectedExit = true;
    const gone = exited(victim.child);
    victim.child.kill('SIGKILL');
    await gone;
    this.#replicas.splice(this.#replicas.indexOf(victim), 1);
    if (!this.#stopping) await this.#launch(victim.fn);
  }

  /** Stops every replica with SIGTERM (a graceful drain) and waits for each to exit. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      this.#replicas.splice(0).map(async (r) => {
        r.expectedExit = true;
        const gone = exited(r.child);
        r.child.kill('SIGTERM');
        await gone;
      }),
    );
  }

  #launch(fn: string): Promise<void> {
    const { kubeconfigPath, natsUrl, cluster = 'c1', extraArgs = [], logDir } = this.#settings;
    // prettier-ignore
    const child = spawn(process.execPath, [olmqBin, 'run', fn, '--kubeconfig', kubeconfigPath,
      '--cluster', cluster, '--nats-url', natsUrl, '--metrics-port', '0', '--log-level', 'info',
      ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
    const replica: Replica = { fn, child, ready: false, expectedExit: false };
    this.#replicas.push(replica);
    const tail: string[] = [];
    const logFile = logDir === undefined ? undefined : join(logDir, `${fn}-${child.pid ?? 0}.log`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`olmq run ${fn} not running after ${readyTimeoutMs} ms`)),
        readyTimeoutMs,
      );
      // Both streams are read to the end so that a chatty replica never blocks on a full pipe.
      const onLine = (line: string): void => {
        tail.push(line);
        if (logFile !== undefined) appendFileSync(logFile, `${line}\n`);
        if (tail.length > tailLines) tail.shift();
        if (!replica.ready && line.includes('"function running"')) {
          replica.ready = true;
          clearTimeout(timer);
          resolve();
        }
      };
      createInterface({ input: child.stdout }).on('line', onLine);
      createInterface({ input: child.stderr }).on('line', onLine);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (replica.expectedExit) return resolve();
        this.crashes.push({ fn, code, signal, tail });
        reject(new Error(`olmq run ${fn} exited (${code ?? signal}): ${tail.join('\n')}`));
      });
    });
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Settings of a killer. */
export interface KillerOptions {
  /** The functions whose replicas may be killed. */
  functions: readonly string[];
  /** Time between kills. */
  everyMs: number;
  /** Stop after this many kills; default: until stopped. */
  maxKills?: number;
  /** Seed of the victim choice, so a run can be repeated. */
  seed?: number;
}

/** A running killer: its kills so far, and stop (which waits for the replacements to run). */
export interface Killer {
  readonly kills: readonly KillRecord[];
  stop(): Promise<readonly KillRecord[]>;
}

/**
 * Every `everyMs`, SIGKILLs one ready replica of `functions`, chosen at random, and starts its
 * replacement without waiting for it before the next kill.
 */
export function startKiller(replicas: FunctionReplicas, options: KillerOptions): Killer {
  const random = seeded(options.seed ?? 1);
  const kills: KillRecord[] = [];
  const replacements: Promise<void>[] = [];
  const failures: unknown[] = [];
  const started = Date.now();
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped && kills.length < (options.maxKills ?? Infinity)) {
      // The fault schedule itself, not a wait for a condition.
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, options.everyMs);
      });
      if (stopped) break;
      const candidates = replicas.ready(options.functions);
      const victim = candidates[Math.floor(random() * candidates.length)];
      if (victim === undefined) continue;
      kills.push({ ...victim, atMs: Date.now() - started });
      // Kept, not thrown here: a replacement that fails to start fails stop().
      replacements.push(
        replicas.killAndReplace(victim.pid).catch((e: unknown) => void failures.push(e)),
      );
    }
  })();
  return {
    kills,
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await Promise.all(replacements);
      if (failures.length > 0) throw failures[0];
      return kills;
    },
  };
}

/** A small seeded generator (mulberry32) in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
