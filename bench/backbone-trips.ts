// Round trips per work item through the backbone, counted rather than timed, so the result does
// not depend on how busy the machine is. Runs the devcluster, the watcher and one replica of
// the echo test function in this process (nats-server as a child) and counts, per item, every
// NATS request (awaited round trip), fire-and-forget publish (acks, pulls) and API request made
// by the function replica and by the watcher.
//
//   npm run build && node dist/bench/backbone-trips.js [--items 50]
//
// Two phases, items one at a time (no coalescing): `new` creates a ConfigMap per item (a new
// work key each time); `same` updates one ConfigMap repeatedly (the same key each time).
import { parseArgs } from 'node:util';
import { connect, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { startDevcluster } from '../devcluster/index.js';
import { startWatcher } from '../watcher/index.js';
import { mirroredKinds } from '../watcher/kinds.js';
import { openBackbone } from '../shared/bus/backbone.js';
import { startNatsServer } from '../shared/bus/nats-server.js';
import { unansweredSuffix } from '../shared/bus/pipe.js';
import { KubeClient, type KubeObject } from '../shared/kube/client.js';
import { ensureOlmApi } from '../shared/kube/olm-api.js';
import { startFunction } from '../shared/runtime/function-runner.js';
import { createApiRequestCounter, createFunctionMetrics } from '../shared/runtime/metrics.js';
import { echoModule, echoOfAnnotation } from '../test/fixtures/echo-function.js';
import { subjectPurpose } from '../shared/bus/subjects.js';

const { values } = parseArgs({ options: { items: { type: 'string', default: '50' } } });
const items = Number(values.items);

/** What a connection sent, by purpose. */
type Tally = Map<string, number>;

/** The one method every message a nats.js connection sends goes through (requests, acks). */
interface Protocol {
  publish(subject: string, payload: unknown, options?: { reply?: string; headers?: MsgHdrs }): void;
}

// Counts what `nc` sends: requests (a message with a reply subject: a round trip) and messages
// without one or whose answer nobody reads (acks, lease releases; the pulls of consumers are
// counted apart). It wraps the connection's
// protocol handler (internal to nats.js) because acks bypass the connection's publish.
function tally(nc: NatsConnection): { requests: Tally; publishes: Tally } {
  const requests: Tally = new Map();
  const publishes: Tally = new Map();
  const add = (t: Tally, key: string): void => void t.set(key, (t.get(key) ?? 0) + 1);
  const protocol = (nc as unknown as { protocol: Protocol }).protocol;
  const publish = protocol.publish.bind(protocol);
  protocol.publish = (subject, payload, options) => {
    const key = subjectPurpose(subject, options?.headers?.get('KV-Operation'));
    const answered = options?.reply !== undefined && !options.reply.endsWith(unansweredSuffix);
    add(answered && key !== 'pull' ? requests : publishes, key);
    publish(subject, payload, options);
  };
  return { requests, publishes };
}

function perItem(t: Tally, count: number): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const [key, n] of [...t.entries()].sort()) {
    out[key] = Math.round((n / count) * 100) / 100;
    total += n;
  }
  out.total = Math.round((total / count) * 100) / 100;
  return out;
}

async function apiCounts(registry: Registry): Promise<Tally> {
  const metric = (await registry.getMetricsAsJSON()).find(
    (m) => m.name === 'olmq_api_requests_total',
  );
  const t: Tally = new Map();
  for (const v of metric?.values ?? []) {
    const verb = String(v.labels.verb);
    t.set(verb, (t.get(verb) ?? 0) + v.value);
  }
  return t;
}

function minus(after: Tally, before: Tally): Tally {
  return new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
}

async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function main(): Promise<void> {
  const nats = await startNatsServer();
  const devcluster = await startDevcluster({ podReadyDelayMs: 0 });
  const kubeConfig = devcluster.kubeconfig();
  const { KubeConfig } = await import('@kubernetes/client-node');
  const config = new KubeConfig();
  config.loadFromString(kubeConfig);
  const admin = await KubeClient.fromKubeConfig('c1', config, { qps: 10_000, burst: 10_000 });
  await ensureOlmApi(admin);
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olmq-system' } });

  const silent = pino({ level: 'silent' });
  const watcherNc = await connect({ servers: nats.url, noAsyncTraces: true });
  const watcherTally = tally(watcherNc);
  const watcherRegistry = new Registry();
  const watcher = await startWatcher({
    cluster: { id: 'c1', kubeConfig: config },
    backbone: await openBackbone(watcherNc),
    log: silent,
    registry: watcherRegistry,
    identity: 'bench',
    leaseNamespace: 'olmq-system',
    leaseName: 'olmq-watcher',
    leaseDurationSeconds: 15,
    kinds: mirroredKinds.filter((k) => k.kind === 'ConfigMap'),
  });
  await watcher.synced();

  const fnNc = await connect({ servers: nats.url, noAsyncTraces: true });
  const fnTally = tally(fnNc);
  const fnRegistry = new Registry();
  const client = await KubeClient.fromKubeConfig('c1', config, {
    qps: 10_000,
    burst: 10_000,
    requests: createApiRequestCounter(fnRegistry),
  });
  const metrics = createFunctionMetrics(fnRegistry);
  let processed = 0;
  const running = await startFunction('echo', echoModule({ onLoad: () => processed++ }), {
    backbone: await openBackbone(fnNc),
    clients: new Map([['c1', client]]),
    log: silent,
    registry: fnRegistry,
    metrics,
    globalCatalogNamespace: 'olm',
    host: { concurrency: 4 },
  });

  const echoDigest = async (name: string): Promise<string | undefined> =>
    (await admin.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name }))?.metadata
      .annotations?.[echoOfAnnotation];
  const source = (name: string, value: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels: { 'olm.managed': 'true' } },
    data: { value },
  });
  const leaseReleases = (): number => fnTally.publishes.get('lease release') ?? 0;

  // Each phase: snapshot counters, run items one at a time, wait for quiescence, diff.
  const phase = async (
    run: (i: number) => Promise<void>,
  ): Promise<Record<string, Record<string, number>>> => {
    const before = {
      fnRequests: new Map(fnTally.requests),
      fnPublishes: new Map(fnTally.publishes),
      watcherRequests: new Map(watcherTally.requests),
      watcherPublishes: new Map(watcherTally.publishes),
      api: await apiCounts(fnRegistry),
      releases: leaseReleases(),
    };
    for (let i = 0; i < items; i++) await run(i);
    await until('every lease to be released', () => leaseReleases() - before.releases >= items);
    await fnNc.flush();
    await watcherNc.flush();
    return {
      functionNatsRoundTrips: perItem(minus(fnTally.requests, before.fnRequests), items),
      functionNatsPublishes: perItem(minus(fnTally.publishes, before.fnPublishes), items),
      functionApiRequests: perItem(minus(await apiCounts(fnRegistry), before.api), items),
      watcherNatsRoundTrips: perItem(minus(watcherTally.requests, before.watcherRequests), items),
    };
  };

  // Warm-up: discovery and the first pulls, not counted.
  await admin.create(source('warm', 'x'));
  await until('the warm-up echo', async () => (await echoDigest('warm-echo')) !== undefined);

  const fresh = await phase(async (i) => {
    const seen = processed;
    await admin.create(source(`item-${i}`, 'x'));
    await until(`the echo of item-${i}`, async () => {
      return processed > seen && (await echoDigest(`item-${i}-echo`)) !== undefined;
    });
  });
  let current = await admin.create(source('same', 'v0'));
  await until('the echo of same', async () => (await echoDigest('same-echo')) !== undefined);
  const same = await phase(async (i) => {
    const previous = await echoDigest('same-echo');
    current = await admin.update({ ...current, data: { value: `v${i + 1}` } });
    await until(`the echo of same to follow v${i + 1}`, async () => {
      const digest = await echoDigest('same-echo');
      return digest !== undefined && digest !== previous;
    });
  });

  process.stdout.write(
    `${JSON.stringify({ benchmark: 'backbone-trips', itemsPerPhase: items, newKeys: fresh, sameKey: same }, null, 2)}\n`,
  );
  await running.stop(1_000);
  await watcher.stop();
  client.close();
  admin.close();
  await fnNc.close();
  await watcherNc.close();
  await devcluster.close();
  await nats.stop();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
