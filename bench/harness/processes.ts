// The processes a benchmark starts (devcluster, watcher, function replicas), as in production:
// started and awaited until ready, measured from /proc, and stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const children: ChildProcess[] = [];

/**
 * Starts `node args…` and resolves once a line of its output matches `readyPattern`. With
 * OLMQ_BENCH_PROFILE_DIR set, the process writes a CPU profile there when it stops gracefully.
 */
export function launch(
  args: string[],
  readyPattern: RegExp,
  env: NodeJS.ProcessEnv = {},
): Promise<ChildProcess> {
  const profile = process.env['OLMQ_BENCH_PROFILE_DIR'];
  const node = profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`];
  const child = spawn(process.execPath, [...node, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${args.join(' ')} not ready in 120 s`)),
      120_000,
    );
    const onLine = (line: string): void => {
      if (readyPattern.test(line)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/** Stops every launched process with SIGTERM and waits for each to exit. */
export async function stopAll(): Promise<void> {
  await Promise.all(
    children.splice(0).map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
          child.removeAllListeners('exit');
          child.once('exit', resolve);
          child.kill('SIGTERM');
        }),
    ),
  );
}

/** Kills every launched process at once (a benchmark that failed). */
export function killAll(): void {
  for (const child of children.splice(0)) child.kill('SIGKILL');
}

/** Peak RSS (VmHWM) and CPU seconds so far of a process, from /proc. */
export function processStats(pid: number): { peakRssMb: number; cpuSeconds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(stat[11] ?? 0) + Number(stat[12] ?? 0);
  return { peakRssMb: Math.round(hwm / 1024), cpuSeconds: ticks / 100 };
}
