// Chaos benchmark of NATS failover: olmq (every part in this process, R3 streams) on three real
// nats-servers clustered on loopback, connected through the server list; Subscriptions to two
// operators in each of `namespaces` namespaces are created at once, and `--kill-after` ms later
// one server is SIGKILLed (`--kill other`: one olmq is not connected to; `connected`: its own;
// `none`: no fault, the baseline), then restarted `--down-for` ms later. Prints one JSON object: time to converge (every CSV
// Succeeded), and counts of what was lost (not Succeeded), duplicated (more than one
// InstallPlan or CSV per Subscription, RBAC twice; test/harness/chaos-outcome.ts) and
// dead-lettered.
// Run (after `npm run build`):
//   node dist/bench/chaos-nats.js [--namespaces 25] [--kill other|connected|none] [--kill-after 3000] [--down-for 10000]
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { chaosOutcome, deadLetterCount, notSucceeded } from '../test/harness/chaos-outcome.js';
import { natsClusterFor } from '../test/harness/nats-cluster.js';
import { communityCatalogFor } from '../test/harness/subscription.js';
import { chaosExpectedCsvs, chaosNamespaces, subscribeChaosLoad } from './harness/chaos-load.js';
import { startSystem } from '../system/index.js';

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '25' },
    kill: { type: 'string', default: 'other' },
    'kill-after': { type: 'string', default: '3000' },
    'down-for': { type: 'string', default: '10000' },
    timeout: { type: 'string', default: '600000' },
  },
});
const namespaceCount = Number(values.namespaces);
const killAfterMs = Number(values['kill-after']);
const downForMs = Number(values['down-for']);
const timeoutMs = Number(values.timeout);
if (values.kill !== 'other' && values.kill !== 'connected' && values.kill !== 'none')
  throw new Error('--kill must be other, connected or none');

const cleanups: (() => unknown)[] = [];
const teardowns = { teardown: (fn: () => unknown) => void cleanups.push(fn) };

async function main(): Promise<Record<string, unknown>> {
  const cluster = await natsClusterFor(teardowns);
  const system = await startSystem({
    // Logs to stderr: stdout carries only the result.
    log: pino({ level: process.env.OLMQ_LOG_LEVEL ?? 'error' }, pino.destination(2)),
    natsUrl: cluster.urls,
    podReadyDelayMs: 0,
    clusterId: 'c1',
    backbone: { replicas: 3 },
    watcher: { identity: 'bench-watcher', leaseName: 'olmq-watcher' },
  });
  cleanups.push(() => system.stop());
  const { client, nc, backbone } = system;
  await communityCatalogFor(teardowns, client);

  const namespaces = chaosNamespaces(namespaceCount);
  const started = Date.now();
  await subscribeChaosLoad(client, namespaces);
  const connected = cluster.servers.findIndex((s) => nc.getServer().endsWith(`:${s.port}`));
  const victim = values.kill === 'connected' ? connected : (connected + 1) % 3;
  const chaos = (async () => {
    if (values.kill === 'none') return {};
    await new Promise((resolve) => setTimeout(resolve, killAfterMs));
    await cluster.kill(victim);
    const killedAt = Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, downForMs));
    await cluster.restart(victim);
    return { killedAtMs: killedAt, restartedAtMs: Date.now() - started };
  })();

  const expected = chaosExpectedCsvs(namespaces);
  let convergedMs: number | undefined;
  while (Date.now() - started < timeoutMs) {
    if ((await notSucceeded(client, expected)).length === 0) {
      convergedMs = Date.now() - started;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const times = await chaos;
  const outcome = await chaosOutcome(client, expected);
  return {
    bench: 'chaos-nats',
    cpus: (await import('node:os')).cpus().length,
    namespaces: namespaceCount,
    subscriptions: expected.length,
    killed: values.kill,
    ...times,
    convergedMs: convergedMs ?? null,
    lost: outcome.lost.length,
    extraCsvs: outcome.extraCsvs.length,
    installPlans: outcome.installPlans,
    // A CSV named by more than one InstallPlan of its namespace was planned twice.
    duplicatedPlans: outcome.duplicatedPlannedCsvs,
    duplicatedPlanGenerations: outcome.duplicatedPlanGenerations,
    duplicatedRbac: outcome.duplicatedRbac.length,
    deadLettered: await deadLetterCount(backbone),
  };
}

try {
  process.stdout.write(`${JSON.stringify(await main())}\n`);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}
