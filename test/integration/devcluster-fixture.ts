// Test fixture: an in-process devcluster on a random port, its kubeconfig in a temp dir, a
// kubectl runner and a deadline-bound wait.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import {
  startDevcluster,
  type Devcluster,
  type DevclusterOptions,
} from '../../devcluster/index.js';

/** A running devcluster with its temp dir and kubeconfig path. */
export interface ClusterFixture {
  cluster: Devcluster;
  dir: string;
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  close(): Promise<void>;
}

/** Starts a devcluster (pods ready at once unless told otherwise) and writes its kubeconfig. */
export async function startCluster(options: DevclusterOptions = {}): Promise<ClusterFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-devcluster-test-'));
  const cluster = await startDevcluster({ podReadyDelayMs: 0, ...options });
  const kubeconfigPath = join(dir, 'kubeconfig');
  await cluster.writeKubeconfig(kubeconfigPath);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(cluster.kubeconfig());
  return {
    cluster,
    dir,
    kubeconfigPath,
    kubeConfig,
    close: async () => {
      await cluster.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Why kubectl cannot be used, or undefined when it is on PATH. */
export function kubectlMissing(): string | undefined {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'kubectl is not on PATH: the kubectl suite needs the real binary';
  }
}

/** Outcome of one kubectl run. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the fixture (own discovery cache per cluster). */
export function kubectl(
  fixture: ClusterFixture,
  args: readonly string[],
  input?: string,
): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      [...args],
      {
        env: {
          ...process.env,
          KUBECONFIG: fixture.kubeconfigPath,
          KUBECACHEDIR: join(fixture.dir, 'cache'),
          HOME: fixture.dir,
        },
        timeout: 60_000,
        maxBuffer: 32 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Polls `check` until it returns a value other than undefined, failing after `deadlineMs` with `what`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  deadlineMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
