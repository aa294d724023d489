// Test fixture: a real Prometheus (Debian's package) scraping given targets every second, on a
// free port with a temp TSDB, stopped and removed when the test ends; and promtool.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { waitFor } from './wait.js';

const exec = promisify(execFile);

/** Runs promtool; its exit code and output. */
export async function promtool(args: readonly string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await exec('promtool', args);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT')
      throw new Error('promtool is not on PATH (Debian package prometheus)', { cause: error });
    return {
      code: typeof e.code === 'number' ? e.code : 1,
      output: `${e.stdout ?? ''}${e.stderr ?? ''}`,
    };
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        resolve(typeof address === 'object' && address !== null ? address.port : 0),
      );
    });
  });
}

/** A running Prometheus: its URL and a query helper. */
export interface PrometheusFixture {
  readonly url: string;
  /** GET /api/v1/<path>; throws unless Prometheus answers status "success". */
  api<T = unknown>(path: string, params?: Record<string, string>): Promise<T>;
}

/** Starts Prometheus scraping `targets` (host:port of /metrics) as job `job`. */
export async function prometheusFor(
  t: Test,
  job: string,
  targets: readonly string[],
): Promise<PrometheusFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [{ job_name: job, static_configs: [{ targets }] }],
    }),
  );
  const port = await freePort();
  const child = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  t.teardown(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'Prometheus ready',
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${log}`);
      return (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true;
    },
    60_000,
    100,
  );
  return {
    url,
    async api<T>(path: string, params: Record<string, string> = {}): Promise<T> {
      const query = new URLSearchParams(params).toString();
      const response = await fetch(`${url}/api/v1/${path}${query === '' ? '' : `?${query}`}`);
      const body = (await response.json()) as { status: string; data: T; error?: string };
      if (body.status !== 'success')
        throw new Error(`${path} ${query}: ${body.error ?? body.status}`);
      return body.data;
    },
  };
}
