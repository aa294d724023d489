// Devcluster benchmark: creates/s, updates/s, watch events/s delivered to 10 watchers, list
// latency at 10k objects and the server's peak RSS. Runs the server as a child process (the
// `devcluster` command, in memory unless --data-dir) and prints one JSON object: first over
// HTTP/2 (as kubectl and client-go speak it), then, under `http1`, over HTTP/1.1 (client-node).
// Usage: node dist/bench/devcluster.js [--objects 10000] [--concurrency 64] [--watchers 10]
//   [--sessions 1] [--protocols both|h2|http1] [--data-dir DIR]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

interface Args {
  objects: number;
  concurrency: number;
  watchers: number;
  /** HTTP/2 connections the writes are spread over. */
  sessions: number;
  /** Measures only HTTP/2 or only HTTP/1.1 (to profile one), or both. */
  protocols: 'h2' | 'http1' | 'both';
  dataDir: string | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = {
    objects: 10_000,
    concurrency: 64,
    watchers: 10,
    sessions: 1,
    protocols: 'both',
    dataDir: undefined,
  };
  for (let i = 0; i < argv.length; i += 2) {
    const value = argv[i + 1] ?? '';
    if (argv[i] === '--objects') args.objects = Number(value);
    else if (argv[i] === '--concurrency') args.concurrency = Number(value);
    else if (argv[i] === '--watchers') args.watchers = Number(value);
    else if (argv[i] === '--sessions') args.sessions = Number(value);
    else if (argv[i] === '--protocols' && (value === 'h2' || value === 'http1' || value === 'both'))
      args.protocols = value;
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

interface Answer {
  status: number;
  body: string;
}

/** How the bench talks to the server: one protocol, its connections, its watches. */
interface Transport {
  call(method: string, path: string, body?: string, contentType?: string): Promise<Answer>;
  /** Starts a watch; `onLines` gets the number of event lines of each chunk. */
  watch(path: string, onLines: (lines: number) => void): { close(): void };
  close(): void;
}

function countLines(chunk: Buffer): number {
  let lines = 0;
  for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
  return lines;
}

/** HTTP/1.1 over keep-alive connections, one request per connection at a time (client-node). */
function http1Transport(creds: Credentials, concurrency: number): Transport {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const watchAgent = new Agent({ keepAlive: true });
  const tls = { ca: creds.ca, cert: creds.cert, key: creds.key };
  return {
    call: (method, path, body, contentType = 'application/json') =>
      new Promise((resolve, reject) => {
        const req = httpsRequest(
          `${creds.server}${path}`,
          { method, agent, ...tls, headers: { 'Content-Type': contentType } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                body: Buffer.concat(chunks).toString('utf8'),
              }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    watch: (path, onLines) => {
      const req = httpsRequest(`${creds.server}${path}`, { agent: watchAgent, ...tls }, (res) => {
        res.on('data', (chunk: Buffer) => onLines(countLines(chunk)));
      });
      req.on('error', () => undefined);
      req.end();
      return { close: () => req.destroy() };
    },
    close: () => {
      agent.destroy();
      watchAgent.destroy();
    },
  };
}

/**
 * HTTP/2 as client-go speaks it (ALPN h2): requests multiplexed as concurrent streams over a few
 * connections, client-go's flow-control windows (4 MiB per stream, 1 GiB per connection), and the
 * watches sharing one connection of their own, as the informers of one process do.
 */
async function http2Transport(creds: Credentials, sessions: number): Promise<Transport> {
  const open = async (): Promise<ClientHttp2Session> => {
    const session = http2Connect(creds.server, {
      ca: creds.ca,
      cert: creds.cert,
      key: creds.key,
      settings: { initialWindowSize: 4 << 20 },
    });
    session.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      session.once('connect', () => resolve());
      session.once('error', reject);
    });
    session.setLocalWindowSize(1 << 30);
    return session;
  };
  const pool = await Promise.all(Array.from({ length: sessions }, open));
  const watchSession = await open();
  let next = 0;
  return {
    call: (method, path, body, contentType = 'application/json') =>
      new Promise((resolve, reject) => {
        const session = pool[next++ % pool.length] as ClientHttp2Session;
        const stream = session.request({
          ':method': method,
          ':path': path,
          'content-type': contentType,
        });
        let status = 0;
        const chunks: Buffer[] = [];
        stream.on('response', (headers) => (status = Number(headers[':status'] ?? 0)));
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString('utf8') }));
        stream.on('error', reject);
        stream.end(body);
      }),
    watch: (path, onLines) => {
      const stream = watchSession.request({ ':method': 'GET', ':path': path });
      stream.on('data', (chunk: Buffer) => onLines(countLines(chunk)));
      stream.on('error', () => undefined);
      stream.end();
      return { close: () => stream.close() };
    },
    close: () => {
      for (const session of [...pool, watchSession]) session.destroy();
    },
  };
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

/** Whether a condition holds before a deadline, checked every few milliseconds. */
async function waitUntil(condition: () => boolean, deadlineMs: number): Promise<void> {
  const deadline = performance.now() + deadlineMs;
  while (!condition() && performance.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Writes, live watch delivery, replay and list latency over one transport, in namespace `ns`. */
async function measure(transport: Transport, namespace: string, args: Args, pid: number) {
  const ns = `/api/v1/namespaces/${namespace}/configmaps`;
  const created = await transport.call(
    'POST',
    '/api/v1/namespaces',
    JSON.stringify({ metadata: { name: namespace } }),
  );
  if (created.status !== 201) throw new Error(`namespace: ${created.status} ${created.body}`);

  // Watchers: count delivered events as they stream.
  let delivered = 0;
  let lastDelivery = 0;
  const watches = Array.from({ length: args.watchers }, () =>
    transport.watch(`${ns}?watch=true`, (lines) => {
      delivered += lines;
      lastDelivery = performance.now();
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 200));

  const before = JSON.parse((await transport.call('GET', ns)).body) as {
    metadata: { resourceVersion: string };
  };
  const writeStart = performance.now();
  const cpuBefore = cpuSeconds(pid);
  const timesBefore = cpuTimes(pid);
  const clientCpuBefore = process.cpuUsage();
  const createsPerSecond = await rate(args.objects, args.concurrency, async (i) => {
    const r = await transport.call(
      'POST',
      ns,
      JSON.stringify({
        metadata: { name: `cm-${i}`, labels: { bench: 'yes' } },
        data: { i: String(i) },
      }),
    );
    if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.body}`);
  });
  const cpuAfterCreates = cpuSeconds(pid);
  const updatesPerSecond = await rate(args.objects, args.concurrency, async (i) => {
    const r = await transport.call(
      'PATCH',
      `${ns}/cm-${i}`,
      JSON.stringify({ data: { i: `u${i}` } }),
      'application/merge-patch+json',
    );
    if (r.status !== 200) throw new Error(`update failed: ${r.status} ${r.body}`);
  });
  const expected = args.watchers * args.objects * 2;
  await waitUntil(() => delivered >= expected, 60_000);
  const writeCpu = cpuSeconds(pid) - cpuBefore;
  const timesAfter = cpuTimes(pid);
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const watchEventsPerSecond = delivered / ((lastDelivery - writeStart) / 1000);

  // Replay: 10 new watchers from the resourceVersion before the writes receive every event from
  // the event log; this measures delivery without being limited by the write rate.
  let replayed = 0;
  let replayDone = 0;
  const replayStart = performance.now();
  const replayWatches = Array.from({ length: args.watchers }, () =>
    transport.watch(
      `${ns}?watch=true&resourceVersion=${before.metadata.resourceVersion}`,
      (lines) => {
        replayed += lines;
        replayDone = performance.now();
      },
    ),
  );
  await waitUntil(() => replayed >= expected, 60_000);
  const replayEventsPerSecond = replayed / ((replayDone - replayStart) / 1000);
  for (const w of [...replayWatches, ...watches]) w.close();

  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    const r = await transport.call('GET', ns);
    latencies.push(performance.now() - start);
    if (r.status !== 200) throw new Error('list failed');
  }
  latencies.sort((a, b) => a - b);
  const writes = args.objects * 2;
  return {
    createsPerSecond: Math.round(createsPerSecond),
    updatesPerSecond: Math.round(updatesPerSecond),
    // The server is one thread: writes per second of its CPU is its capacity on an idle core,
    // independent of what else the (shared) machine is doing.
    serverCpuSecondsForWrites: Number(writeCpu.toFixed(2)),
    writesPerServerCpuSecond: Math.round(writes / writeCpu),
    serverCpuMicrosecondsPerWrite: Math.round((writeCpu * 1e6) / writes),
    // Split at the end of the creates (their last watch events may still be on their way).
    serverCpuMicrosecondsPerCreate: Math.round(
      ((cpuAfterCreates - cpuBefore) * 1e6) / args.objects,
    ),
    // Kernel time is mostly TLS sockets' syscalls; user time is the server's own work.
    serverUserCpuSecondsForWrites: Number((timesAfter.user - timesBefore.user).toFixed(2)),
    serverSystemCpuSecondsForWrites: Number((timesAfter.system - timesBefore.system).toFixed(2)),
    // The bench client shares the machine: its cost per write (incl. its watchers) counts too.
    clientCpuMicrosecondsPerWrite: Math.round((clientCpu.user + clientCpu.system) / writes),
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
  };
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
  const pid = child.pid ?? 0;
  const creds = credentials(kubeconfig);

  // HTTP/2 first: what kubectl and client-go speak. Then HTTP/1.1 (client-node) on a namespace
  // of its own, with the first phase's objects still stored.
  let overHttp2: Awaited<ReturnType<typeof measure>> | undefined;
  let overHttp1: Awaited<ReturnType<typeof measure>> | undefined;
  if (args.protocols !== 'http1') {
    const http2 = await http2Transport(creds, args.sessions);
    overHttp2 = await measure(http2, 'bench', args, pid);
    http2.close();
  }
  if (args.protocols !== 'h2') {
    const http1 = http1Transport(creds, args.concurrency);
    overHttp1 = await measure(http1, 'bench-http1', args, pid);
    http1.close();
  }
  const result = {
    objects: args.objects,
    concurrency: args.concurrency,
    durable: args.dataDir !== undefined,
    protocol: 'h2',
    http2Sessions: args.sessions,
    ...overHttp2,
    ...(overHttp1 ? { http1: { protocol: 'http/1.1', ...overHttp1 } } : {}),
    serverPeakRssBytes: peakRssBytes(pid),
    clientPeakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
