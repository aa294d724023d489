// The cost counters of a system running as processes: CPU and peak RSS of each from /proc, and
// what each olmq process counts on its /metrics page (reconciles per definition, API requests
// by verb, NATS messages, the watcher's mirror changes); and a settle barrier across them.
import { processStats } from './processes.js';

/** One process of the system; `metrics` is its /metrics page (olmq processes only). */
export interface SystemProcess {
  name: string;
  pid: number;
  metrics?: string;
}

/** What one olmq process's /metrics counts so far. */
export interface ProcessCounters {
  /** olmq_work_processed_total by definition (its `function` label). */
  reconciles: Record<string, number>;
  /** olmq_api_requests_total by verb. */
  requests: Record<string, number>;
  natsIn: number;
  natsOut: number;
  /** The watcher's changes published and watch events seen. */
  mirrored: number;
}

/** CPU seconds of every process, and the counters of each olmq process, at one moment. */
export interface Snapshot {
  cpuSeconds: Record<string, number>;
  counters: Record<string, ProcessCounters>;
}

function parse(text: string): ProcessCounters {
  const counters: ProcessCounters = {
    reconciles: {},
    requests: {},
    natsIn: 0,
    natsOut: 0,
    mirrored: 0,
  };
  for (const line of text.split('\n')) {
    const match = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const [, name, labels = '', raw] = match;
    const value = Number(raw);
    const label = (key: string): string => new RegExp(`${key}="([^"]*)"`).exec(labels)?.[1] ?? '';
    const bump = (into: Record<string, number>, key: string): void => {
      into[key] = (into[key] ?? 0) + value;
    };
    if (name === 'olmq_work_processed_total') bump(counters.reconciles, label('function'));
    else if (name === 'olmq_api_requests_total') bump(counters.requests, label('verb'));
    else if (name === 'olmq_nats_messages_total' && label('direction') === 'in')
      counters.natsIn += value;
    else if (name === 'olmq_nats_messages_total' && label('direction') === 'out')
      counters.natsOut += value;
    else if (
      name === 'olmq_watcher_changes_published_total' ||
      name === 'olmq_watcher_watch_events_total'
    )
      counters.mirrored += value;
  }
  return counters;
}

function cpuOf(processes: readonly SystemProcess[]): Record<string, number> {
  return Object.fromEntries(processes.map((p) => [p.name, processStats(p.pid).cpuSeconds]));
}

async function countersOf(
  processes: readonly SystemProcess[],
): Promise<Record<string, ProcessCounters>> {
  const read = async (p: SystemProcess): Promise<[string, ProcessCounters] | undefined> => {
    if (p.metrics === undefined) return undefined;
    return [p.name, parse(await (await fetch(p.metrics)).text())];
  };
  const found = await Promise.all(processes.map(read));
  return Object.fromEntries(found.filter((e) => e !== undefined));
}

/** A snapshot to start a measurement from: counters first, so their scrape is not counted. */
export async function snapshotAtStart(processes: readonly SystemProcess[]): Promise<Snapshot> {
  const counters = await countersOf(processes);
  return { counters, cpuSeconds: cpuOf(processes) };
}

const sum = (values: Record<string, number>): number =>
  Object.values(values).reduce((a, b) => a + b, 0);
const windowMs = 100;
// Under 5 ms of CPU per process on average in a 100 ms window (/proc counts in 10 ms ticks):
// idle olmq processes still spend a few ms a second on heartbeats, pings and lease renewals,
// and on a shared machine more; the counters below are what says the work is done.
const quietCpuSecondsPerProcess = 0.005;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// NATS messages are left out: an idle connection still pings, and a scrape itself reads the
// consumers' backlog over NATS.
const work = (s: Snapshot): string =>
  JSON.stringify(
    Object.entries(s.counters).map(([name, c]) => [name, c.reconciles, c.requests, c.mirrored]),
  );
const sameCounters = (a: Snapshot, b: Snapshot): boolean => work(a) === work(b);

/**
 * Resolves once the system is settled: every process's CPU quiet over a window (read from
 * /proc, which costs the processes nothing), then over two more windows every olmq process's
 * reconciles, API requests and the watcher's mirror counters unchanged and the
 * CPU still quiet but for the scrapes. Returns the snapshot at the start of those two windows
 * (its CPU read before its scrape), or the last one with `settled: false` after `timeoutMs`.
 */
export async function settle(
  processes: readonly SystemProcess[],
  timeoutMs = 60_000,
): Promise<Snapshot & { settled: boolean }> {
  const deadline = performance.now() + timeoutMs;
  const quietCpuSeconds = quietCpuSecondsPerProcess * processes.length;
  for (;;) {
    const before = cpuOf(processes);
    await sleep(windowMs);
    const cpuSeconds = cpuOf(processes);
    if (sum(cpuSeconds) - sum(before) >= quietCpuSeconds && performance.now() < deadline) continue;
    const first: Snapshot = { cpuSeconds, counters: await countersOf(processes) };
    await sleep(windowMs);
    const second = await snapshotAtStart(processes);
    await sleep(windowMs);
    const third = await snapshotAtStart(processes);
    // The two scrapes of each olmq process may cost a tick each.
    const allowance = quietCpuSeconds * 2 + 0.01 * 2 * processes.length;
    const quiet = sum(third.cpuSeconds) - sum(first.cpuSeconds) < allowance;
    if (quiet && sameCounters(first, second) && sameCounters(second, third))
      return { ...first, settled: true };
    if (performance.now() >= deadline) return { ...third, settled: false };
  }
}

/** What happened between two snapshots, per process. */
export function difference(
  from: Snapshot,
  to: Snapshot,
): { cpuSeconds: Record<string, number>; counters: Record<string, ProcessCounters> } {
  const minus = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));
  const counters: Record<string, ProcessCounters> = {};
  for (const [name, c] of Object.entries(to.counters)) {
    const f = from.counters[name];
    counters[name] = {
      reconciles: minus(c.reconciles, f?.reconciles ?? {}),
      requests: minus(c.requests, f?.requests ?? {}),
      natsIn: c.natsIn - (f?.natsIn ?? 0),
      natsOut: c.natsOut - (f?.natsOut ?? 0),
      mirrored: c.mirrored - (f?.mirrored ?? 0),
    };
  }
  return { cpuSeconds: minus(to.cpuSeconds, from.cpuSeconds), counters };
}
