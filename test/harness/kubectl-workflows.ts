// What the kubectl workflow suites share: one devcluster per kubectl version, kubectl runs that
// must succeed, and a long-running kubectl (get -w) read line by line.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Test } from 'tap';
import { kubectl, kubectlMissing, startCluster, type ClusterFixture } from './devcluster.js';
import { kubectlMinors } from './kubectl-versions.js';
import { repoRoot } from './repo.js';

/** Runs kubectl and returns its stdout; a non-zero exit fails with kubectl's stderr. */
export async function run(
  fixture: ClusterFixture,
  args: readonly string[],
  input?: string,
): Promise<string> {
  const result = await kubectl(fixture, args, input);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** Runs kubectl and parses its `-o json` output. */
export async function runJson<T>(fixture: ClusterFixture, args: readonly string[]): Promise<T> {
  return JSON.parse(await run(fixture, [...args, '-o', 'json'])) as T;
}

/** The path of one of the repository's CRDs (crds/operators.coreos.com_<plural>.yaml). */
export function olmCrd(plural: string): string {
  return join(repoRoot, 'crds', `operators.coreos.com_${plural}.yaml`);
}

/** The path of the devcluster suites' Widget CRD (scale and status subresources). */
export const widgetsCrdPath = join(repoRoot, 'test', 'fixtures', 'devcluster', 'widgets-crd.yaml');

/**
 * Declares, for every kubectl on the image, one test starting a devcluster reporting that minor
 * version and running `body` with it; fails loudly when kubectl or its versions are missing.
 */
export function forEachKubectl(
  t: Test,
  title: (minor: number) => string,
  body: (t: Test, fixture: ClusterFixture, minor: number) => Promise<void>,
  podReadyDelayMs = 0,
): void {
  const missing = kubectlMissing();
  const minors = kubectlMinors();
  if (missing !== undefined) t.fail(missing);
  else if (minors.length === 0) t.fail('no kubectl.1.N binaries beside kubectl on PATH');
  for (const minor of missing === undefined ? minors : []) {
    void t.test(title(minor), async (t) => {
      const fixture = await startCluster({ kubernetesVersion: `v1.${minor}.0`, podReadyDelayMs });
      t.teardown(() => fixture.close());
      await body(t, fixture, minor);
    });
  }
}

/** A kubectl left running (such as `get -w`), read one output line at a time. */
export interface KubectlStream {
  /** The next line of stdout, or a failure naming `what` after `timeoutMs`. */
  nextLine(what: string, timeoutMs?: number): Promise<string>;
  /** Ends the child and waits for it to exit. */
  stop(): Promise<void>;
}

/** Starts kubectl as a child process with the fixture's kubeconfig. */
export function startKubectl(fixture: ClusterFixture, args: readonly string[]): KubectlStream {
  const child = spawn('kubectl', [...args], {
    env: {
      ...process.env,
      KUBECONFIG: fixture.kubeconfigPath,
      KUBECACHEDIR: join(fixture.dir, 'cache'),
      HOME: fixture.dir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  createInterface({ input: child.stdout }).on('line', (line) => {
    const waiter = waiters.shift();
    if (waiter) waiter(line);
    else lines.push(line);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    nextLine: (what, timeoutMs = 10_000) => {
      const ready = lines.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          const index = waiters.indexOf(take);
          if (index >= 0) waiters.splice(index, 1);
          reject(
            new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr: ${stderr}`),
          );
        }, timeoutMs);
        const take = (line: string): void => {
          clearTimeout(timer);
          resolve(line);
        };
        waiters.push(take);
      });
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
