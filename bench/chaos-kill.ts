// Chaos benchmark of function replica kills (issue #21): the devcluster, the watcher and every
// function run as their own processes (`olmq devcluster`, `olmq watcher`, `olmq run <fn>`) on
// one real nats-server; `--replicas` replicas each of install, plan, rbac and copy-csv, one of
// catalog, resolve and operator. Subscriptions to two operators (etcd, hawtio-operator) in each
// of `--namespaces` namespaces are created at once, and from then until every CSV Succeeded a
// random replica of install, plan, rbac or copy-csv is SIGKILLed every `--kill-every` ms and
// replaced by a new process (`--kill-every 0`: no kills, the baseline); `--kill-for-seconds N`
// stops the kills N s into the load instead, to tell work lost from work starved by the kills.
// Run (after `npm run build`):
//   node dist/bench/chaos-kill.js [--namespaces 10] [--kill-every 3000] [--kill-for-seconds 0] [--replicas 2]
//     [--seed 1] [--deadline-seconds 600]
// With OLMQ_BENCH_LOG_DIR set, each replica's log goes to <dir>/<function>-<pid>.log.
// Prints one JSON object: time to converge, kills made (by function), and the counts of
// test/harness/chaos-outcome.ts: lost, extra CSVs, duplicated plans (per namespace and
// generation, and per planned CSV), duplicated RBAC, dead-lettered; replicas that crashed by
// themselves.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { openBackbone } from '../shared/bus/backbone.js';
import { startNatsServer } from '../shared/bus/nats-server.js';
import { chaosOutcome, deadLetterCount, notSucceeded } from '../test/harness/chaos-outcome.js';
import { FunctionReplicas, startKiller, type KillRecord } from '../test/harness/replicas.js';
import { communityCatalogFor } from '../test/harness/subscription.js';
import { chaosExpectedCsvs, chaosNamespaces, subscribeChaosLoad } from './harness/chaos-load.js';
import { killAll, launchCluster, stopAll } from './harness/processes.js';

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '10' },
    'kill-every': { type: 'string', default: '3000' },
    'kill-for-seconds': { type: 'string', default: '0' },
    replicas: { type: 'string', default: '2' },
    seed: { type: 'string', default: '1' },
    'deadline-seconds': { type: 'string', default: '600' },
  },
});
const number = (flag: keyof typeof values, min: number): number => {
  const n = Number(values[flag]);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(
      `chaos-kill: --${flag} must be an integer ≥ ${min} (got "${values[flag]}")\n`,
    );
    process.exit(2);
  }
  return n;
};
const namespaceCount = number('namespaces', 1);
const killEveryMs = number('kill-every', 0);
const killForMs = number('kill-for-seconds', 0) * 1000;
const replicaCount = number('replicas', 1);
const seed = number('seed', 0);
const deadlineMs = number('deadline-seconds', 1) * 1000;

const killed = ['install', 'plan', 'rbac', 'copy-csv'];
const spared = ['catalog', 'resolve', 'operator'];

const cleanups: (() => unknown)[] = [];
const teardowns = { teardown: (fn: () => unknown) => void cleanups.push(fn) };

async function main(): Promise<Record<string, unknown>> {
  const load = loadavg().map((n) => Math.round(n * 100) / 100);
  const dir = mkdtempSync(join(tmpdir(), 'olmq-bench-chaos-kill-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const nats = await startNatsServer();
  cleanups.push(() => nats.stop());
  const { kubeconfigPath, admin } = await launchCluster(dir, nats.url);
  cleanups.push(() => stopAll());
  cleanups.push(() => admin.close());
  const logDir = process.env['OLMQ_BENCH_LOG_DIR'];
  const replicas = new FunctionReplicas({
    kubeconfigPath,
    natsUrl: nats.url,
    ...(logDir === undefined ? {} : { logDir }),
  });
  cleanups.push(() => replicas.stop());
  await Promise.all([
    ...spared.map((fn) => replicas.start(fn)),
    ...killed.map((fn) => replicas.start(fn, replicaCount)),
  ]);
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olm' } });
  await communityCatalogFor(teardowns, admin);

  const namespaces = chaosNamespaces(namespaceCount);
  const expected = chaosExpectedCsvs(namespaces);
  const started = Date.now();
  const killer =
    killEveryMs > 0
      ? startKiller(replicas, { functions: killed, everyMs: killEveryMs, seed })
      : undefined;
  await subscribeChaosLoad(admin, namespaces);
  let convergedMs: number | null = null;
  let kills: readonly KillRecord[] | undefined;
  let killsEndedMs: number | null = null;
  const endKills = async (): Promise<void> => {
    if (kills !== undefined) return;
    kills = (await killer?.stop()) ?? [];
    killsEndedMs = Date.now() - started;
  };
  while (Date.now() - started < deadlineMs) {
    if ((await notSucceeded(admin, expected)).length === 0) {
      convergedMs = Date.now() - started;
      break;
    }
    if (killForMs > 0 && Date.now() - started >= killForMs) await endKills();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await endKills();
  const outcome = await chaosOutcome(admin, expected);
  const nc = await connect({ servers: nats.url });
  cleanups.push(() => nc.close());
  const byFunction: Record<string, number> = {};
  for (const kill of kills ?? []) byFunction[kill.fn] = (byFunction[kill.fn] ?? 0) + 1;
  return {
    bench: 'chaos-kill',
    cpus: cpus().length,
    loadAverageAtStart: load,
    namespaces: namespaceCount,
    subscriptions: expected.length,
    replicasPerKilledFunction: replicaCount,
    killEveryMs,
    seed,
    convergedMs,
    killsEndedMs,
    kills: kills?.length ?? 0,
    killsByFunction: byFunction,
    lost: outcome.lost.length,
    lostCsvs: outcome.lost,
    extraCsvs: outcome.extraCsvs.length,
    installPlans: outcome.installPlans,
    duplicatedPlanGenerations: outcome.duplicatedPlanGenerations,
    duplicatedPlannedCsvs: outcome.duplicatedPlannedCsvs,
    duplicatedRbac: outcome.duplicatedRbac.length,
    duplicatedRbacObjects: outcome.duplicatedRbac,
    deadLettered: await deadLetterCount(await openBackbone(nc)),
    crashes: replicas.crashes.map((c) => ({ fn: c.fn, code: c.code, signal: c.signal })),
  };
}

try {
  process.stdout.write(`${JSON.stringify(await main())}\n`);
} catch (error) {
  killAll();
  throw error;
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}
