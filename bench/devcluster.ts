// Devcluster benchmark: creates/s, updates/s, watch events/s delivered to 10 watchers, list
// latency at 10k objects and the server's peak RSS. Runs the server as a child process (the
// `devcluster` command, in memory unless --data-dir) and prints one JSON object.
// Usage: node dist/bench/devcluster.js [--objects 10000] [--concurrency 64] [--data-dir DIR]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

interface Args {
  objects: number;
  concurrency: number;
  watchers: number;
  dataDir: string | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { objects: 10_000, concurrency: 64, watchers: 10, dataDir: undefined };
  for (let i = 0; i < argv.length; i += 2) {
    const value = argv[i + 1] ?? '';
    if (argv[i] === '--objects') args.objects = Number(value);
    else if (argv[i] === '--concurrency') args.concurrency = Number(value);
    else if (argv[i] === '--watchers') args.watchers = Number(value);
    else if (argv[i] === '--data-dir') args.dataDir = value;
    else throw new Error(`unknown flag ${String(argv[i])}`);
  }
  return args;
}

interface Credentials {
  server: string;
  ca: string;
  cert: string;
  key: string;
}

function credentials(kubeconfigPath: string): Credentials {
  const config = parse(readFileSync(kubeconfigPath, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  };
  const b = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');
  return {
    server: config.clusters[0]?.cluster.server ?? '',
    ca: b(config.clusters[0]?.cluster['certificate-authority-data']),
    cert: b(config.users[0]?.user['client-certificate-data']),
    key: b(config.users[0]?.user['client-key-data']),
  };
}

function call(
  creds: Credentials,
  agent: Agent,
  method: string,
  path: string,
  body?: string,
  contentType = 'application/json',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${creds.server}${path}`,
      {
        method,
        agent,
        ca: creds.ca,
        cert: creds.cert,
        key: creds.key,
        headers: { 'Content-Type': contentType },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `total` operations with at most `concurrency` in flight; returns operations per second. */
async function rate(
  total: number,
  concurrency: number,
  op: (i: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        await op(i);
      }
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

/** CPU seconds (user, system) the process has used so far, from /proc. */
function cpuTimes(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of /proc/pid/stat, in clock ticks (100 per second on Linux).
  return { user: Number(fields[11] ?? 0) / 100, system: Number(fields[12] ?? 0) / 100 };
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

function peakRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return Number(match?.[1] ?? 0) * 1024;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'olmq-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const olmq = join(import.meta.dirname, '..', 'cli', 'main.js');
  // BENCH_SERVER_NODE_ARGS (e.g. --cpu-prof) lets a profile of the server be taken.
  const nodeArgs = (process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      olmq,
      'devcluster',
      '--kubeconfig',
      kubeconfig,
      ...(args.dataDir ? ['--data-dir', args.dataDir] : []),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      if (c.toString().includes('ready')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`devcluster exited with ${String(code)}`)));
  });
  const creds = credentials(kubeconfig);
  const agent = new Agent({ keepAlive: true, maxSockets: args.concurrency });
  const ns = '/api/v1/namespaces/bench/configmaps';
  await call(
    creds,
    agent,
    'POST',
    '/api/v1/namespaces',
    JSON.stringify({ metadata: { name: 'bench' } }),
  );

  // Watchers: count delivered events as they stream.
  let delivered = 0;
  let lastDelivery = 0;
  const watchAgent = new Agent({ keepAlive: true });
  const watches = Array.from({ length: args.watchers }, () =>
    request(
      `${creds.server}${ns}?watch=true`,
      { agent: watchAgent, ca: creds.ca, cert: creds.cert, key: creds.key },
      (res) => {
        res.on('data', (chunk: Buffer) => {
          for (const byte of chunk) if (byte === 10) delivered++;
          lastDelivery = performance.now();
        });
      },
    ),
  );
  for (const w of watches) {
    w.on('error', () => undefined);
    w.end();
  }
  await new Promise((resolve) => setTimeout(resolve, 200));

  const before = JSON.parse((await call(creds, agent, 'GET', ns)).body) as {
    metadata: { resourceVersion: string };
  };
  const writeStart = performance.now();
  const cpuBefore = cpuSeconds(child.pid ?? 0);
  const timesBefore = cpuTimes(child.pid ?? 0);
  const createsPerSecond = await rate(args.objects, args.concurrency, async (i) => {
    const r = await call(
      creds,
      agent,
      'POST',
      ns,
      JSON.stringify({
        metadata: { name: `cm-${i}`, labels: { bench: 'yes' } },
        data: { i: String(i) },
      }),
    );
    if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.body}`);
  });
  const updatesPerSecond = await rate(args.objects, args.concurrency, async (i) => {
    const r = await call(
      creds,
      agent,
      'PATCH',
      `${ns}/cm-${i}`,
      JSON.stringify({ data: { i: `u${i}` } }),
      'application/merge-patch+json',
    );
    if (r.status !== 200) throw new Error(`update failed: ${r.status} ${r.body}`);
  });
  const expected = args.watchers * args.objects * 2;
  const deliveredDeadline = performance.now() + 60_000;
  while (delivered < expected && performance.now() < deliveredDeadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
  const writeCpu = cpuSeconds(child.pid ?? 0) - cpuBefore;
  const timesAfter = cpuTimes(child.pid ?? 0);
  const deadline = performance.now() + 60_000;
  while (delivered < expected && performance.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
  const watchEventsPerSecond = delivered / ((lastDelivery - writeStart) / 1000);

  // Replay: 10 new watchers from the resourceVersion before the writes receive every event from
  // the event log; this measures delivery without being limited by the write rate.
  let replayed = 0;
  let replayDone = 0;
  const replayStart = performance.now();
  const replayWatches = Array.from({ length: args.watchers }, () =>
    request(
      `${creds.server}${ns}?watch=true&resourceVersion=${before.metadata.resourceVersion}`,
      { agent: watchAgent, ca: creds.ca, cert: creds.cert, key: creds.key },
      (res) => {
        res.on('data', (chunk: Buffer) => {
          for (const byte of chunk) if (byte === 10) replayed++;
          replayDone = performance.now();
        });
      },
    ),
  );
  for (const w of replayWatches) {
    w.on('error', () => undefined);
    w.end();
  }
  const replayDeadline = performance.now() + 60_000;
  while (replayed < expected && performance.now() < replayDeadline)
    await new Promise((resolve) => setTimeout(resolve, 5));
  const replayEventsPerSecond = replayed / ((replayDone - replayStart) / 1000);
  for (const w of replayWatches) w.destroy();

  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    const r = await call(creds, agent, 'GET', ns);
    latencies.push(performance.now() - start);
    if (r.status !== 200) throw new Error('list failed');
  }
  latencies.sort((a, b) => a - b);

  const result = {
    objects: args.objects,
    concurrency: args.concurrency,
    durable: args.dataDir !== undefined,
    createsPerSecond: Math.round(createsPerSecond),
    updatesPerSecond: Math.round(updatesPerSecond),
    // The server is one thread: writes per second of its CPU is its capacity on an idle core,
    // independent of what else the (shared) machine is doing.
    serverCpuSecondsForWrites: Number(writeCpu.toFixed(2)),
    writesPerServerCpuSecond: Math.round((args.objects * 2) / writeCpu),
    // Kernel time is mostly TLS sockets' syscalls; user time is the server's own work.
    serverUserCpuSecondsForWrites: Number((timesAfter.user - timesBefore.user).toFixed(2)),
    serverSystemCpuSecondsForWrites: Number((timesAfter.system - timesBefore.system).toFixed(2)),
    watchers: args.watchers,
    watchEventsDelivered: delivered,
    watchEventsExpected: expected,
    watchEventsPerSecond: Math.round(watchEventsPerSecond),
    replayWatchEventsDelivered: replayed,
    replayWatchEventsPerSecond: Math.round(replayEventsPerSecond),
    listLatencyMs: {
      median: Math.round(latencies[2] ?? 0),
      min: Math.round(latencies[0] ?? 0),
      max: Math.round(latencies[4] ?? 0),
    },
    serverPeakRssBytes: child.pid === undefined ? 0 : peakRssBytes(child.pid),
    clientPeakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  for (const w of watches) w.destroy();
  agent.destroy();
  watchAgent.destroy();
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
