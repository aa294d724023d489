// The olmq CLI as built, run as a child process the way a user runs it: to completion, or (a
// server command) until it says it is ready, stopped with SIGTERM at the end of the test.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { olmqBin } from './repo.js';
import { waitFor } from './wait.js';

const exec = promisify(execFile);

/** How one olmq run exited and what it printed. */
export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `olmq ...args` with `env` (default: this process's environment). */
export async function runOlmq(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<CliOutcome> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [olmqBin, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Starts `olmq <args>` and resolves once a stdout line matches `ready`. */
export async function startOlmq(
  t: Test,
  args: readonly string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; output: () => string; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [olmqBin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OLMQ_LOG_LEVEL: 'warn' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  );
  const match = await waitFor(
    `olmq ${args[0] ?? ''} to be ready`,
    () => {
      if (child.exitCode !== null) {
        throw new Error(`olmq ${args.join(' ')} exited ${child.exitCode}: ${stderr}`);
      }
      return ready.exec(stdout) ?? undefined;
    },
    120_000,
    50,
  );
  return { child, output: () => stdout + stderr, match };
}
