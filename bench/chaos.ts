// Benchmark of the whole pipeline under an API brownout: N Subscriptions (etcd and
// hawtio-operator, two per namespace) created while every write of olmq (its User-Agent
// "olmq…": functions and watcher) answers 503, then 429 with Retry-After, for a window; the
// bench's own client is spared. Everything runs in this process on the devcluster with a real
// nats-server, with the production defaults of the function host and the API client.
// Run (after `npx tsc -p tsconfig.json`):
//   node dist/bench/chaos.js [--namespaces 10] [--brownout-seconds 20] [--fault mixed|503|429|none]
//     [--deadline-seconds 300]
// Prints one JSON object: time to converge (every CSV Succeeded) from the start of the load and
// from the end of the brownout, and counts: lost (Subscriptions not converged by the deadline),
// duplicated (a CSV named by more than one InstallPlan of its namespace), dead-lettered
// (messages in OLMQ_DEAD), and the requests the brownout refused.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { FaultRule, InjectedFault } from '../devcluster/index.js';
import { writeVerbs } from '../devcluster/index.js';
import { assets } from '../shared/bus/backbone.js';
import { KubeClient, type KubeObject } from '../shared/kube/client.js';
import { startSystem } from '../system/index.js';
import { smallCatalog } from '../test/harness/repo.js';
import { serveCatalog } from './harness/catalog.js';
import {
  chaosExpectedCsvs,
  chaosNamespaces,
  chaosPackages,
  chaosSubscription,
} from './harness/chaos-load.js';

const { values } = parseArgs({
  options: {
    namespaces: { type: 'string', default: '10' },
    'brownout-seconds': { type: 'string', default: '20' },
    fault: { type: 'string', default: 'mixed' },
    'deadline-seconds': { type: 'string', default: '300' },
  },
});
const namespaceCount = Number(values.namespaces);
const brownoutMs = Number(values['brownout-seconds']) * 1000;
const deadlineMs = Number(values['deadline-seconds']) * 1000;
const fault = values.fault;
if (!['mixed', '503', '429', 'none'].includes(fault)) {
  process.stderr.write(`chaos: --fault must be mixed, 503, 429 or none (got "${fault}")\n`);
  process.exit(2);
}

const log = pino({ level: process.env.OLMQ_LOG_LEVEL ?? 'error' });
const system = await startSystem({
  log,
  podReadyDelayMs: 0,
  clusterId: 'c1',
  client: { userAgent: 'olmq' },
  watcher: { identity: 'bench', leaseName: 'olmq-watcher', registry: new Registry() },
  functions: { stopGraceMs: 5_000 },
});
const devcluster = system.devcluster;
if (devcluster === undefined) throw new Error('chaos: the system runs no devcluster');
const admin = await KubeClient.fromKubeConfig('c1', system.cluster.kubeConfig, {
  userAgent: 'bench',
  qps: 5000,
  burst: 5000,
});
const served = await serveCatalog(admin, 'community', smallCatalog);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
async function until(read: () => Promise<boolean>, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    if (await read()) return true;
    await sleep(50);
  }
  return false;
}

const namespaces = chaosNamespaces(namespaceCount);
for (const ns of namespaces) {
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await admin.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: ns },
    spec: { targetNamespaces: [ns] },
  });
}

// The brownout: on olmq's writes only, so the load itself is created as planned.
const rule = (action: FaultRule['action'], forMs: number): FaultRule => ({
  verbs: writeVerbs,
  userAgent: 'olmq',
  action,
  forMs,
});
const injected: { code: number; fault: InjectedFault }[] = [];
const unavailable = { kind: 'answer', code: 503 } as const;
const throttled = { kind: 'answer', code: 429, retryAfterSeconds: 1 } as const;
const t0 = performance.now();
let brownoutEnd = t0;
const brownout = (async () => {
  if (fault === 'none') return;
  const steps =
    fault === 'mixed'
      ? [
          { action: unavailable, ms: brownoutMs / 2 },
          { action: throttled, ms: brownoutMs / 2 },
        ]
      : [{ action: fault === '503' ? unavailable : throttled, ms: brownoutMs }];
  for (const step of steps) {
    const f = devcluster.faults.inject(rule(step.action, step.ms));
    injected.push({ code: step.action.code, fault: f });
    await sleep(step.ms);
  }
  brownoutEnd = performance.now();
})();

await Promise.all(
  namespaces.flatMap((ns) => chaosPackages.map((pkg) => admin.create(chaosSubscription(ns, pkg)))),
);
const deadline = Date.now() + deadlineMs;
const pending = new Set(chaosExpectedCsvs(namespaces));
await until(async () => {
  const csvs = await admin.list<KubeObject & { status?: { phase?: string } }>({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
  });
  for (const csv of csvs.items)
    if (csv.status?.phase === 'Succeeded')
      pending.delete(`${csv.metadata.namespace ?? ''}/${csv.metadata.name ?? ''}`);
  return pending.size === 0;
}, deadline);
const converged = performance.now();
await brownout;

// A CSV named by two InstallPlans of its namespace was planned twice.
const plans = await admin.list<KubeObject & { spec?: { clusterServiceVersionNames?: string[] } }>({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'InstallPlan',
});
const planned = new Map<string, number>();
for (const plan of plans.items)
  for (const csv of plan.spec?.clusterServiceVersionNames ?? []) {
    const key = `${plan.metadata.namespace ?? ''}/${csv}`;
    planned.set(key, (planned.get(key) ?? 0) + 1);
  }
const dead = await system.backbone.jsm.streams.info(assets.deadStream);
const round = (n: number): number => Math.round(n);
process.stdout.write(
  `${JSON.stringify({
    bench: 'chaos',
    fault,
    namespaces: namespaceCount,
    subscriptions: namespaceCount * chaosPackages.length,
    brownoutMs: fault === 'none' ? 0 : brownoutMs,
    convergeMs: pending.size === 0 ? round(converged - t0) : null,
    convergeAfterBrownoutMs:
      pending.size === 0 ? round(Math.max(0, converged - brownoutEnd)) : null,
    lost: pending.size,
    duplicated: [...planned.values()].filter((n) => n > 1).length,
    deadLettered: dead.state.messages,
    refused: Object.fromEntries(injected.map(({ code, fault: f }) => [String(code), f.hits])),
  })}\n`,
);
admin.close();
await served.stop(0);
await system.stop();
