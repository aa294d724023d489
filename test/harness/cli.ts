// The olmq CLI as built, run to completion as a child process the way a user runs it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { olmqBin } from './repo.js';

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
