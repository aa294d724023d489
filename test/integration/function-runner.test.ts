// The function runner (shared/runtime/function-runner.ts) and the `olmq run` handler built on
// it (cli/run.ts), with the echo test function as the module, a real nats-server and the
// devcluster. The built-in table has no test function, so the handler gets one injected.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { commands } from '../../cli/commands.js';
import { startFunctions, type FunctionTable } from '../../system/index.js';
import { parseCommandLine } from '../../cli/options.js';
import { runFunction } from '../../cli/run.js';
import { mirroredKinds } from '../../watcher/kinds.js';
import { assets, type Backbone } from '../../shared/bus/backbone.js';
import { objectKey } from '../../shared/bus/subjects.js';
import type { KubeClient } from '../../shared/kube/client.js';
import type { FunctionDefinition } from '../../shared/runtime/function-host.js';
import type { CreateFunction, FunctionContext } from '../../shared/runtime/function-module.js';
import {
  FunctionStartError,
  startFunction,
  type FunctionRuntime,
} from '../../shared/runtime/function-runner.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { workKeyType, type NamespacedName } from '../../shared/runtime/work-keys.js';
import { echoModule, echoOfAnnotation } from '../fixtures/echo-function.js';
import { connect } from '@nats-io/transport-node';
import { openBackbone } from '../../shared/bus/backbone.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';
import { natsServerFor } from '../harness/nats.js';
import { waitFor } from '../harness/wait.js';
import { watcherFor } from '../harness/watcher.js';

const echoRef = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  namespace: 'default',
  name: `${name}-echo`,
});

async function watchConfigMaps(
  t: Test,
  cluster: Awaited<ReturnType<typeof clusterFor>>,
  backbone: Backbone,
): Promise<void> {
  const watcher = await watcherFor(t, cluster.fixture, backbone, {
    kinds: mirroredKinds.filter((k) => k.kind === 'ConfigMap'),
  });
  await watcher.synced();
}

function runtimeFor(backbone: Backbone, clients: ReadonlyMap<string, KubeClient>): FunctionRuntime {
  const registry = new Registry();
  return {
    backbone,
    clients,
    log: capturingLogger('warn').log,
    registry,
    metrics: createFunctionMetrics(registry),
    globalCatalogNamespace: 'olm',
    host: { baseBackoffMs: 20 },
  };
}

async function createSource(client: KubeClient, name: string): Promise<void> {
  await client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels: { 'olm.managed': 'true' } },
    data: { value: name },
  });
}

/** A definition over Widget entries of the mirror whose apply waits for `gate`. */
function gatedDefinition(
  name: string,
  gate: { started: () => void; release: Promise<void> },
): FunctionDefinition<NamespacedName, null, null> {
  const key = workKeyType(name, ['namespace', 'name']);
  return {
    key,
    triggers: [
      {
        kind: 'Widget',
        workKeys: (c) => [key.of({ namespace: c.ref.namespace, name: c.ref.name })],
      },
    ],
    load: () => Promise.resolve(null),
    decide: () => ({ writes: null }),
    apply: async () => {
      gate.started();
      await gate.release;
    },
  };
}

t.test('function runner - hosts a module: work flows through it and is counted', async (t) => {
  const cluster = await clusterFor(t);
  const backbone = await backboneFor(t);
  await watchConfigMaps(t, cluster, backbone);
  const runtime = runtimeFor(backbone, new Map([['c1', cluster.client]]));
  const running = await startFunction('echo', echoModule(), runtime);
  t.teardown(() => running.stop(1_000));
  t.same(
    running.hosts.map((h) => h.workConsumers),
    [['echo-work-c1']],
    'one host per definition, on its own consumer of each served cluster',
  );

  await createSource(cluster.client, 'a');
  const echo = await waitFor('the echo of a', () => cluster.client.get(echoRef('a')));
  t.ok(echo.metadata.annotations?.[echoOfAnnotation], 'the echo carries the source digest');
  t.match(
    await runtime.registry.metrics(),
    /olmq_work_processed_total\{cluster="c1",function="echo",outcome="success"\} [1-9]/,
  );
});

t.test('function runner - the context carries the runtime, and a signal that stops', async (t) => {
  const backbone = await backboneFor(t);
  const runtime = runtimeFor(backbone, new Map());
  let seen: FunctionContext | undefined;
  let closedAfterAbort: boolean | undefined;
  const running = await startFunction(
    'probe',
    (context) => {
      seen = context;
      return Promise.resolve({
        definitions: [
          gatedDefinition('probe', { started: () => undefined, release: Promise.resolve() }),
        ],
        close: () => {
          closedAfterAbort = context.signal.aborted;
          return Promise.resolve();
        },
      });
    },
    runtime,
  );
  t.equal(seen?.backbone, backbone);
  t.equal(seen?.registry, runtime.registry);
  t.equal(seen?.globalCatalogNamespace, 'olm');
  t.equal(seen?.signal.aborted, false, 'not aborted while running');
  await running.stop(1_000);
  t.equal(seen?.signal.aborted, true, 'aborted once stopped');
  t.equal(closedAfterAbort, true, 'closed after its signal aborted');
});

t.test('function runner - stop drains in-flight work before closing the function', async (t) => {
  const backbone = await backboneFor(t);
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  let release: () => void = () => undefined;
  const gate = {
    started: markStarted,
    release: new Promise<void>((resolve) => (release = resolve)),
  };
  const events: string[] = [];
  const running = await startFunction(
    'gated',
    () =>
      Promise.resolve({
        definitions: [gatedDefinition('gated', gate)],
        close: () => {
          events.push('closed');
          return Promise.resolve();
        },
      }),
    runtimeFor(backbone, new Map()),
  );
  await backbone.objects.put(
    objectKey({ cluster: 'c1', kind: 'Widget', namespace: 'ns1', name: 'w1' }),
    '{}',
  );
  await started;
  const stopped = running.stop(5_000).then(() => events.push('stopped'));
  events.push('released');
  release();
  await stopped;
  t.same(events, ['released', 'closed', 'stopped'], 'closed only after the reconcile finished');
  const info = await backbone.jsm.consumers.info(assets.workStream, 'gated-work');
  t.equal(info.num_ack_pending, 0, 'the in-flight item was acknowledged');
  t.equal(info.num_pending, 0, 'nothing left to deliver');
});

t.test('function runner - a module that cannot start is named in the error', async (t) => {
  const backbone = await backboneFor(t);
  const runtime = runtimeFor(backbone, new Map());
  const failing: CreateFunction = () => Promise.reject(new Error('catalog cache unreadable'));
  await t.rejects(startFunction('broken', failing, runtime), {
    name: 'FunctionStartError',
    functionName: 'broken',
    message: 'function broken failed to start: catalog cache unreadable',
  });
  await t.rejects(
    startFunction('empty', () => Promise.resolve({ definitions: [] }), runtime),
    { message: 'function empty failed to start: it returned no definitions' },
  );
});

t.test(
  'function runner - two definitions of one name are refused, and what started is closed',
  async (t) => {
    const backbone = await backboneFor(t);
    let closed = 0;
    const gate = { started: () => undefined, release: Promise.resolve() };
    const error = await startFunction(
      'twice',
      () =>
        Promise.resolve({
          definitions: [gatedDefinition('same', gate), gatedDefinition('same', gate)],
          close: () => Promise.resolve(void closed++),
        }),
      runtimeFor(backbone, new Map()),
    ).catch((e: unknown) => e);
    t.type(error, FunctionStartError);
    t.match((error as Error).message, /two definitions named "same"/);
    t.equal(closed, 1, 'the function was closed');
  },
);

t.test(
  'function runner - startFunctions refuses a name without a module before starting any',
  async (t) => {
    const backbone = await backboneFor(t);
    let created = 0;
    const table: FunctionTable = {
      echo: () => Promise.resolve(echoModule({ onClose: () => created++ })),
    };
    await t.rejects(startFunctions(['echo', 'install'], table, runtimeFor(backbone, new Map())), {
      name: 'UnknownFunctionError',
      message: 'unknown function "install" (one of: echo)',
    });
    t.equal(created, 0, 'echo was not started');
  },
);

/** `olmq run` options as the command line would give them. */
function runConfig(args: string[]) {
  return parseCommandLine(commands.run.options, args, {}).config;
}

/** A nats-server's URL and the backbone on it. */
async function natsFor(t: Test): Promise<{ url: string; backbone: Backbone }> {
  const server = await natsServerFor(t);
  const nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  return { url: server.url, backbone: await openBackbone(nc) };
}

/** What the code under test writes to stderr until t ends. */
function capturedStderr(t: Test): () => string {
  let text = '';
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  };
  t.teardown(() => {
    process.stderr.write = write;
  });
  return () => text;
}

/**
 * Runs `olmq run echo` in this process with `args` and `module` until the test ends, and
 * resolves once it serves: its endpoint, its exit code, and stop(signal) to end it.
 */
async function startRun(
  t: Test,
  args: string[],
  module: CreateFunction,
): Promise<{ base: string; exit: Promise<number>; stop: (signal: string) => void }> {
  let stop: (signal: string) => void = () => undefined;
  let ready: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => (ready = resolve));
  const exit = runFunction(runConfig(args), 'echo', {
    table: { echo: () => Promise.resolve(module) },
    until: () => new Promise<string>((resolve) => (stop = resolve)),
    onReady: (endpoint) => ready(endpoint.url),
  });
  t.teardown(async () => {
    stop('teardown');
    await exit;
  });
  const base = await Promise.race([
    url,
    exit.then((code): never => {
      throw new Error(`olmq run exited with ${code} before it was ready`);
    }),
  ]);
  return { base, exit, stop: (signal) => stop(signal) };
}

t.test(
  'olmq run - hosts the function from its table: serves probes and metrics, drains on stop',
  async (t) => {
    const cluster = await clusterFor(t);
    const { url: natsUrl, backbone } = await natsFor(t);
    await watchConfigMaps(t, cluster, backbone);
    let closed = false;
    const { base, exit, stop } = await startRun(
      t,
      [
        '--kubeconfig',
        cluster.fixture.kubeconfigPath,
        '--cluster',
        'c1',
        '--nats-url',
        natsUrl,
        '--metrics-port',
        '0',
        '--concurrency',
        '2',
        '--log-level',
        'silent',
      ],
      echoModule({ onClose: () => (closed = true) }),
    );
    const readyz = await fetch(`${base}/readyz`);
    t.equal(readyz.status, 200, 'ready once the function runs');
    t.match(await readyz.text(), /\[\+\] nats ok\n\[\+\] function ok\nready/);
    t.equal((await fetch(`${base}/healthz`)).status, 200);

    await createSource(cluster.client, 'via-cli');
    await waitFor('the echo made by olmq run', () => cluster.client.get(echoRef('via-cli')));
    const metrics = await (await fetch(`${base}/metrics`)).text();
    t.match(metrics, /olmq_work_processed_total\{cluster="c1",function="echo",outcome="success"\}/);
    t.match(metrics, /olmq_api_requests_total\{cluster="c1",verb="patch",code="20[01]"\}/);
    // The process's NATS connection carried the work: messages in and out, counted.
    for (const direction of ['in', 'out']) {
      const count = new RegExp(`olmq_nats_messages_total\\{direction="${direction}"\\} (\\d+)`);
      t.ok(Number(count.exec(metrics)?.[1] ?? 0) > 0, `NATS messages ${direction} counted`);
    }

    stop('SIGTERM');
    t.equal(await exit, 0, 'exit code 0 after the drain');
    t.ok(closed, 'the function was closed');
    await t.rejects(fetch(`${base}/healthz`), 'the endpoint is closed');
  },
);

t.test('olmq run - a kubeconfig it cannot read exits 2 naming the file', async (t) => {
  const stderr = capturedStderr(t);
  const code = await runFunction(
    runConfig(['--kubeconfig', '/nonexistent/kubeconfig', '--log-level', 'silent']),
    'echo',
    { table: { echo: () => Promise.resolve(echoModule()) } },
  );
  t.equal(code, 2);
  t.match(stderr(), 'olmq run echo: kubeconfig /nonexistent/kubeconfig does not exist');
});

t.test('olmq run - a function its table lacks exits 2 listing the ones it has', async (t) => {
  const stderr = capturedStderr(t);
  const code = await runFunction(runConfig(['--log-level', 'silent']), 'nope', {
    table: { echo: () => Promise.resolve(echoModule()) },
  });
  t.equal(code, 2);
  t.match(stderr(), 'olmq run nope: unknown function "nope" (one of: echo)');
});

t.test('olmq run - a function that fails to start exits 1 naming it', async (t) => {
  const cluster = await clusterFor(t);
  const { url: natsUrl } = await natsFor(t);
  const stderr = capturedStderr(t);
  const code = await runFunction(
    runConfig([
      '--kubeconfig',
      cluster.fixture.kubeconfigPath,
      '--nats-url',
      natsUrl,
      '--metrics-port',
      '0',
      '--log-level',
      'silent',
    ]),
    'broken',
    { table: { broken: () => Promise.resolve(() => Promise.reject(new Error('no index'))) } },
  );
  t.equal(code, 1);
  t.match(stderr(), 'olmq run broken: function broken failed to start: no index');
});

t.test(
  'olmq run - a kubeconfig directory is a pool: a cluster added at run time is served',
  async (t) => {
    const cluster = await clusterFor(t);
    const { url: natsUrl, backbone } = await natsFor(t);
    await watchConfigMaps(t, cluster, backbone);
    const dir = mkdtempSync(join(tmpdir(), 'olmq-run-pool-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const { base, exit, stop } = await startRun(
      t,
      ['--kubeconfig', dir, '--nats-url', natsUrl, '--metrics-port', '0', '--log-level', 'silent'],
      echoModule(),
    );
    const served = async () =>
      /olmq_served_clusters (\d+)/.exec(await (await fetch(`${base}/metrics`)).text())?.[1];
    t.equal(await served(), '0', 'an empty directory: a pool waiting for clusters');

    // The file's name is the cluster id, as the watcher's --cluster c1.
    copyFileSync(cluster.fixture.kubeconfigPath, join(dir, 'c1.yaml'));
    await waitFor('c1 to join', async () => (await served()) === '1');
    await createSource(cluster.client, 'via-pool');
    await waitFor('the echo made by the pool', () => cluster.client.get(echoRef('via-pool')));
    stop('SIGTERM');
    t.equal(await exit, 0);
  },
);
