// The processes a benchmark starts (devcluster, watcher, function replicas), as in production:
// started and awaited until ready, measured from /proc, and stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../shared/kube/client.js';
import { ensureOlmApi } from '../../shared/kube/olm-api.js';

/** The built olmq CLI. */
export const olmq = join(import.meta.dirname, '..', '..', 'cli', 'main.js');

const children: ChildProcess[] = [];

/**
 * Starts `node args…` and resolves once a line of its output matches `readyPattern`; `onLine`
 * sees every line (to read what the process logs, such as its metrics URL). With
 * OLMQ_BENCH_PROFILE_DIR set, the process writes a CPU profile there when it stops gracefully.
 */
export function launch(
  args: string[],
  readyPattern: RegExp,
  env: NodeJS.ProcessEnv = {},
  onLine: (line: string) => void = () => undefined,
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
    const seen = (line: string): void => {
      onLine(line);
      if (readyPattern.test(line)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    createInterface({ input: child.stdout }).on('line', seen);
    createInterface({ input: child.stderr }).on('line', seen);
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

/** The URL of the /metrics page a process logged (`"metrics":"http://…"`), if this line has it. */
export function metricsUrlIn(line: string): string | undefined {
  const url = /"metrics":"(http:[^"]+)"/.exec(line)?.[1];
  return url === undefined ? undefined : `${url.replace(/\/metrics$/, '')}/metrics`;
}

// Extra node options for the watcher alone (e.g. --heapsnapshot-signal=SIGUSR2), to see where
// its memory goes without changing the other processes.
function watcherNodeOptions(): NodeJS.ProcessEnv {
  const extra = process.env['OLMQ_BENCH_WATCHER_NODE_OPTIONS'];
  return extra === undefined ? {} : { NODE_OPTIONS: extra };
}

/**
 * The cluster side of a process benchmark: `olmq devcluster` (pod-ready delay 0) writing its
 * kubeconfig into `dir`, the OLM API and the olmq-system namespace through an admin client,
 * and `olmq watcher` mirroring into the NATS server at `natsUrl`, each ready.
 */
export async function launchCluster(
  dir: string,
  natsUrl: string,
): Promise<{
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  admin: KubeClient;
  devcluster: ChildProcess;
  watcher: ChildProcess;
  /** The watcher's /metrics page. */
  watcherMetrics: string;
}> {
  const kubeconfigPath = join(dir, 'kubeconfig');
  // prettier-ignore
  const devcluster = await launch([olmq, 'devcluster', '--kubeconfig', kubeconfigPath,
    '--pod-ready-delay', '0', '--log-level', 'warn'], /ready/);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const admin = await KubeClient.fromKubeConfig('c1', kubeConfig, { qps: 100_000, burst: 100_000 });
  await ensureOlmApi(admin);
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olmq-system' } });
  let watcherMetrics: string | undefined;
  // prettier-ignore
  const watcher = await launch([olmq, 'watcher', '--kubeconfig', kubeconfigPath, '--cluster', 'c1',
    '--nats-url', natsUrl, '--metrics-port', '0', '--log-level', 'info'], /mirror synced/,
    watcherNodeOptions(),
    (line) => (watcherMetrics ??= metricsUrlIn(line)));
  // It logs its endpoint as it starts serving it, which may come just after the first sync.
  const deadline = Date.now() + 30_000;
  while (watcherMetrics === undefined && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  if (watcherMetrics === undefined) throw new Error('olmq watcher logged no metrics URL');
  return { kubeconfigPath, kubeConfig, admin, devcluster, watcher, watcherMetrics };
}
