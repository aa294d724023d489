import { setTimeout as delay } from 'node:timers/promises';
import { connect, headers } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { assets, openBackbone, type Backbone } from '../../shared/bus/backbone.js';
import { partsHeader, serializeByParts } from '../../shared/bus/object-parts.js';
import { mirrorStream, objectKey, type ObjectRef } from '../../shared/bus/subjects.js';
import { triggerConsumerName, workConsumerName } from '../../shared/bus/work-queue.js';
import {
  FunctionHost,
  StaleDecisionError,
  type Decision,
  type FunctionDefinition,
  type FunctionHostOptions,
  type WorkContext,
} from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { workKeyType, type NamespacedName } from '../../shared/runtime/work-keys.js';
import { capturingLogger } from '../harness/log.js';
import { natsServerFor } from '../harness/nats.js';
import { waitFor } from '../harness/wait.js';

interface Snapshot {
  value: number | undefined;
}

const widget = (name: string): ObjectRef => ({
  cluster: 'c1',
  kind: 'Widget',
  namespace: 'ns1',
  name,
});

async function backboneFor(t: Test): Promise<Backbone> {
  const server = await natsServerFor(t);
  const nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  return openBackbone(nc, { leaseTtlMs: 2_000 });
}

async function putWidget(backbone: Backbone, name: string, value: number): Promise<void> {
  await backbone.objects.put(objectKey(widget(name)), JSON.stringify({ spec: { value } }));
}

const widgetKey = workKeyType('widgets', ['namespace', 'name']);
type WidgetWork = WorkContext<NamespacedName>;

/** A test function: mirrors each Widget's spec.value into `applied`, via overridable apply. */
function widgetFunction(
  backbone: Backbone,
  apply: (snapshot: Snapshot, work: WidgetWork) => Promise<void>,
  decide: (snapshot: Snapshot) => Decision<Snapshot> = (s) => ({
    writes: s,
  }),
): FunctionDefinition<NamespacedName, Snapshot, Snapshot> & { loads: number } {
  const definition = {
    key: widgetKey,
    loads: 0,
    triggers: [
      {
        kind: 'Widget',
        workKeys: (c: { ref: ObjectRef }) => [
          widgetKey.of({ namespace: c.ref.namespace, name: c.ref.name }),
        ],
      },
    ],
    async load(work: WidgetWork): Promise<Snapshot> {
      definition.loads++;
      const { namespace, name } = work.key;
      const entry = await backbone.objects.get(
        objectKey({ cluster: work.cluster, kind: 'Widget', namespace, name }),
      );
      if (entry === null || entry.operation !== 'PUT') return { value: undefined };
      return { value: entry.json<{ spec: { value: number } }>().spec.value };
    },
    decide,
    apply,
  };
  return definition;
}

async function startHost(
  t: Test,
  backbone: Backbone,
  definition: FunctionDefinition<NamespacedName, Snapshot, Snapshot>,
  options: Partial<FunctionHostOptions> = {},
) {
  const registry = new Registry();
  const { log, lines } = capturingLogger();
  const host = new FunctionHost(backbone, definition, log, createFunctionMetrics(registry), {
    baseBackoffMs: 10,
    contentionDelayMs: 20,
    random: () => 0.5,
    ...options,
  });
  await host.start();
  t.teardown(() => host.stop(1_000));
  const counter = async (name: string): Promise<number> => {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
    return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
  };
  return { host, lines, counter, registry };
}

t.test(
  'function host - a burst of 1,000 updates to one object coalesces; the last state wins',
  async (t) => {
    const backbone = await backboneFor(t);
    const applied: (number | undefined)[] = [];
    const definition = widgetFunction(backbone, async (s) => {
      await delay(5); // an API write takes a few ms
      applied.push(s.value);
    });
    await startHost(t, backbone, definition);
    for (let value = 1; value <= 1000; value++) await putWidget(backbone, 'w1', value);
    await waitFor('the last value to be applied', () => applied.at(-1) === 1000, 20_000);
    t.ok(definition.loads < 400, `1,000 updates caused ${definition.loads} reconciles`);
    t.equal(applied.at(-1), 1000, 'the last state wins');
  },
);

t.test(
  'function host - a failing reconcile is retried with backoff and then succeeds',
  async (t) => {
    const backbone = await backboneFor(t);
    let calls = 0;
    const applied: number[] = [];
    const { counter } = await startHost(
      t,
      backbone,
      widgetFunction(backbone, (s) => {
        if (++calls <= 2) return Promise.reject(new Error(`transient failure ${calls}`));
        applied.push(s.value ?? -1);
        return Promise.resolve();
      }),
    );
    await putWidget(backbone, 'w1', 7);
    await waitFor('the third attempt to succeed', () => applied.length === 1);
    t.equal(await counter('olmq_work_retried_total'), 2);
    t.equal(await counter('olmq_work_dead_lettered_total'), 0);
    await waitFor('the failure count to be cleared after the success', async () => {
      const entry = await backbone.attempts.get('widgets.c1.ns1.w1');
      return entry === null || entry.operation !== 'PUT';
    });
  },
);

t.test(
  'function host - after maxAttempts failures work is dead-lettered with the key and last error',
  async (t) => {
    const backbone = await backboneFor(t);
    const { counter, lines } = await startHost(
      t,
      backbone,
      widgetFunction(backbone, () => Promise.reject(new Error('the API said no'))),
      { maxAttempts: 3 },
    );
    await putWidget(backbone, 'broken', 1);
    await waitFor(
      'a dead letter',
      async () => (await backbone.jsm.streams.info(assets.deadStream)).state.messages === 1,
    );
    const dead = await backbone.jsm.streams.getMessage(assets.deadStream, { seq: 1 });
    t.equal(dead?.subject, 'olmq.dead.widgets.c1.ns1.broken');
    t.match(dead?.json(), {
      key: ['ns1', 'broken'],
      failures: 3,
      error: 'the API said no',
      cluster: 'c1',
    });
    // The dead letter lands first; the counter and log line follow it.
    await waitFor(
      'the dead letter to be counted',
      async () => (await counter('olmq_work_dead_lettered_total')) === 1,
    );
    t.equal(await counter('olmq_work_retried_total'), 2);
    const logged = await waitFor('the dead-letter log line', () =>
      lines.find((l) => l.msg === 'work dead-lettered after repeated failures'),
    );
    t.match(logged, {
      key: 'ns1/broken',
      cluster: 'c1',
      failures: 3,
      err: { message: 'the API said no' },
    });
  },
);

t.test(
  'function host - an error that says retrying cannot help is dead-lettered at once',
  async (t) => {
    const backbone = await backboneFor(t);
    const { counter } = await startHost(
      t,
      backbone,
      widgetFunction(backbone, () =>
        Promise.reject(Object.assign(new Error('invalid CSV'), { retryable: false })),
      ),
    );
    await putWidget(backbone, 'bad', 1);
    await waitFor(
      'a dead letter',
      async () => (await counter('olmq_work_dead_lettered_total')) === 1,
    );
    t.equal(await counter('olmq_work_retried_total'), 0);
  },
);

t.test(
  'function host - a write conflict re-reads and decides again without counting a failure',
  async (t) => {
    const backbone = await backboneFor(t);
    let conflicts = 0;
    const applied: number[] = [];
    const definition = widgetFunction(backbone, (s) => {
      if (conflicts++ === 0) return Promise.reject(new StaleDecisionError('409 Conflict'));
      applied.push(s.value ?? -1);
      return Promise.resolve();
    });
    const { counter } = await startHost(t, backbone, definition);
    await putWidget(backbone, 'w1', 3);
    await waitFor('the write to land', () => applied.length === 1);
    t.equal(definition.loads, 2, 'loaded again after the conflict');
    t.equal(await counter('olmq_write_conflicts_total'), 1);
    t.equal(await counter('olmq_work_retried_total'), 0);
  },
);

t.test('function host - a decision can ask to look again later without any change', async (t) => {
  const backbone = await backboneFor(t);
  let looks = 0;
  const definition = widgetFunction(
    backbone,
    () => Promise.resolve(),
    (s) => (++looks < 3 ? { writes: s, requeueAfterMs: 20 } : { writes: s }),
  );
  await startHost(t, backbone, definition);
  await putWidget(backbone, 'w1', 1);
  await waitFor('three looks', () => looks === 3);
  t.equal(looks, 3);
});

t.test(
  'function host - a decision that asks to go again is decided again at once, within one reconcile and at most maxPasses times',
  async (t) => {
    const backbone = await backboneFor(t);
    let applies = 0;
    // Two passes progress and then it settles; a runaway function is stopped after maxPasses.
    const settling = widgetFunction(
      backbone,
      () => Promise.resolve(void applies++),
      (s) => (applies < 2 ? { writes: s, again: true } : { writes: s }),
    );
    const { counter } = await startHost(t, backbone, settling, { maxPasses: 4 });
    await putWidget(backbone, 'w1', 1);
    await waitFor('one reconcile', async () => (await counter('olmq_work_processed_total')) === 1);
    t.equal(applies, 3, 'two progressing passes, then the one that settles');
    t.equal(settling.loads, 3, 'each pass loads fresh state');

    const other = await backboneFor(t);
    let runaway = 0;
    const spinning = widgetFunction(
      other,
      () => Promise.resolve(void runaway++),
      (s) => ({ writes: s, again: true }),
    );
    const second = await startHost(t, other, spinning, { maxPasses: 4, baseBackoffMs: 60_000 });
    await putWidget(other, 'w1', 1);
    await waitFor(
      'the runaway reconcile to end',
      async () => (await second.counter('olmq_work_processed_total')) === 1,
    );
    t.equal(runaway, 4, 'no more than maxPasses passes in one reconcile');
  },
);

// The widget function with a trigger reading only the spec, the values it reconciled, and a
// way to write versions of widget w1 into the mirror as the watcher would (`signed`: with the
// signature of its parts).
function specReader(backbone: Backbone) {
  const seen: (number | undefined)[] = [];
  const definition = widgetFunction(backbone, (s) => Promise.resolve(void seen.push(s.value)));
  const trigger = definition.triggers[0];
  if (trigger === undefined) throw new Error('no trigger');
  definition.triggers = [{ ...trigger, parts: ['spec'] }];
  const subject = `$KV.${assets.objects}.${objectKey(widget('w1'))}`;
  const put = async (value: number, status: string, signed = true): Promise<void> => {
    const { json, signature } = serializeByParts({ spec: { value }, status: { status } });
    const h = headers();
    if (signed) h.set(partsHeader, signature);
    await backbone.js.publish(subject, json, { headers: h });
  };
  return { seen, definition, put };
}

t.test(
  'function host - a trigger reading only some parts of an object skips changes to the others',
  async (t) => {
    const backbone = await backboneFor(t);
    const { seen, definition, put } = specReader(backbone);
    const { counter } = await startHost(t, backbone, definition);
    await put(1, 'new'); // never looked at: work
    await waitFor('the first change', () => seen.length === 1);
    await put(1, 'busy');
    await put(1, 'busy');
    await put(2, 'done');
    await waitFor('the spec change', () => seen.includes(2));
    await put(2, 'done', false); // no signature: every part may have changed
    await waitFor('the unsigned change', () => seen.length === 3);
    t.same(seen, [1, 2, 2], 'status-only and unchanged versions started no work');
    t.equal(await counter('olmq_work_processed_total'), 3);
  },
);

t.test(
  'function host - a trigger behind the watcher sees a spec change that a later status change replaced in the mirror',
  async (t) => {
    const backbone = await backboneFor(t);
    const { seen, definition, put } = specReader(backbone);
    const first = await startHost(t, backbone, definition);
    await put(1, 'new');
    await waitFor('the first version looked at', () => seen.length === 1);
    await first.host.stop(1_000);
    // While no replica reads: the spec changes, then the status. The mirror keeps only the
    // latter, whose status alone differs from the message before it.
    await put(2, 'new');
    await put(2, 'done');
    await startHost(t, backbone, definition);
    await waitFor('the spec change', () => seen.includes(2));
    t.same(seen, [1, 2]);
  },
);

t.test('function host - two replicas never work the same key at once', async (t) => {
  const backbone = await backboneFor(t);
  const active = new Map<string, number>();
  let maxActive = 0;
  const latest = new Map<string, number>();
  const apply = async (s: Snapshot, work: WidgetWork): Promise<void> => {
    const key = `${work.key.namespace}/${work.key.name}`;
    const now = (active.get(key) ?? 0) + 1;
    active.set(key, now);
    maxActive = Math.max(maxActive, now);
    await delay(3);
    latest.set(key, s.value ?? -1);
    active.set(key, (active.get(key) ?? 1) - 1);
  };
  await startHost(t, backbone, widgetFunction(backbone, apply), { replicaId: 'replica-a' });
  await startHost(t, backbone, widgetFunction(backbone, apply), { replicaId: 'replica-b' });
  const names = ['a', 'b', 'c'];
  for (let value = 1; value <= 100; value++) {
    await Promise.all(names.map((name) => putWidget(backbone, name, value)));
  }
  await waitFor(
    'every key to reach its last value',
    () => names.every((n) => latest.get(`ns1/${n}`) === 100),
    20_000,
  );
  t.equal(maxActive, 1, 'at most one reconcile per key at any time');
});

t.test(
  'function host - changes to a key being reconciled wait in the replica and run right after it',
  async (t) => {
    const backbone = await backboneFor(t);
    const applied: (number | undefined)[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const definition = widgetFunction(backbone, async (s) => {
      if (applied.length === 0) await gate; // the first reconcile is slow
      applied.push(s.value);
    });
    // A contention delay far beyond the test's deadline: a lease retry would show as a timeout.
    const { counter } = await startHost(t, backbone, definition, { contentionDelayMs: 60_000 });
    await putWidget(backbone, 'w1', 1);
    await waitFor('the first reconcile to start', () => definition.loads === 1);
    for (let value = 2; value <= 5; value++) await putWidget(backbone, 'w1', value);
    // Give the newer items time to arrive while the first reconcile is blocked: every change
    // mapped to work (the trigger has acknowledged them all), and all that work handed to the
    // replica. (Items for one key may be fewer than the changes.) The gate opens even when
    // this fails, so the host can stop.
    try {
      await waitFor('the newer items to be delivered', async () => {
        const trigger = await backbone.jsm.consumers.info(
          mirrorStream,
          triggerConsumerName('widgets', 'Widget'),
        );
        const work = await backbone.jsm.consumers.info(
          assets.workStream,
          workConsumerName('widgets'),
        );
        return (
          trigger.delivered.stream_seq >= 5 &&
          trigger.num_pending === 0 &&
          trigger.num_ack_pending === 0 &&
          work.num_pending === 0
        );
      });
    } finally {
      release();
    }
    await waitFor('the last value to be applied', () => applied.at(-1) === 5, 10_000);
    t.equal(
      await counter('olmq_work_lease_contended_total'),
      0,
      'no item failed to take the lease',
    );
    t.ok(
      definition.loads <= 3,
      `the waiting items ran as one or two reconciles (${definition.loads})`,
    );
  },
);

t.test('function host - stop lets an in-flight reconcile finish and acknowledges it', async (t) => {
  const backbone = await backboneFor(t);
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  let release: () => void = () => undefined;
  const definition = widgetFunction(backbone, () => {
    markStarted();
    return new Promise<void>((resolve) => (release = resolve));
  });
  const { host } = await startHost(t, backbone, definition);
  await putWidget(backbone, 'w1', 1);
  await started;
  const stopped = host.stop(5_000);
  release();
  await stopped;
  const info = await backbone.jsm.consumers.info(assets.workStream, host.workConsumers[0] ?? '');
  t.equal(info.num_ack_pending, 0, 'nothing left unacknowledged');
  t.equal(info.num_pending, 0, 'nothing left to deliver');
});

t.test(
  'function host - backlog gauges show work waiting for the function, per consumer',
  async (t) => {
    const backbone = await backboneFor(t);
    const { host, registry } = await startHost(
      t,
      backbone,
      widgetFunction(backbone, () => Promise.resolve()),
    );
    await host.stop(1_000);
    for (let i = 0; i < 5; i++) await putWidget(backbone, `w${i}`, i);
    await waitFor('five changes pending on the trigger consumer', async () =>
      /olmq_consumer_backlog\{function="widgets",consumer="widgets-trigger-Widget",state="pending"\} 5/.test(
        await registry.metrics(),
      ),
    );
    t.match(
      await registry.metrics(),
      /olmq_consumer_backlog\{function="widgets",consumer="widgets-work",state="pending"\} 0/,
    );
  },
);

t.test(
  'function host - a finished reconcile leaves no lease entry or delete marker for its key',
  async (t) => {
    const backbone = await backboneFor(t);
    let applied = 0;
    await startHost(
      t,
      backbone,
      widgetFunction(backbone, () => Promise.resolve(void applied++)),
    );
    await putWidget(backbone, 'w1', 1);
    await waitFor('the first reconcile', () => applied === 1);
    await waitFor(
      'the lease stream to be empty',
      async () => (await backbone.jsm.streams.info(`KV_${assets.leases}`)).state.messages === 0,
    );
    t.equal(await backbone.leases.get('widgets.c1.ns1.w1'), null, 'no entry, not even a marker');
    await putWidget(backbone, 'w1', 2);
    await waitFor('the second reconcile of the same key', () => applied === 2);
  },
);

t.test(
  'function host - failures keep counting when a newer item replaces one waiting in backoff',
  async (t) => {
    const backbone = await backboneFor(t);
    const { counter } = await startHost(
      t,
      backbone,
      widgetFunction(backbone, () => Promise.reject(new Error('still broken'))),
      { maxAttempts: 3, baseBackoffMs: 60_000 }, // the retry never comes: only new items do
    );
    const failures = async (): Promise<number> => {
      const entry = await backbone.attempts.get('widgets.c1.ns1.w1');
      return entry === null || entry.operation !== 'PUT'
        ? 0
        : entry.json<{ failures: number }>().failures;
    };
    await putWidget(backbone, 'w1', 1);
    await waitFor('the first failure recorded', async () => (await failures()) === 1);
    await putWidget(backbone, 'w1', 2); // replaces the item in backoff: a first delivery
    await waitFor('the second failure recorded', async () => (await failures()) === 2);
    await putWidget(backbone, 'w1', 3);
    await waitFor(
      'the third failure to dead-letter the key',
      async () => (await counter('olmq_work_dead_lettered_total')) === 1,
    );
    const dead = await backbone.jsm.streams.getMessage(assets.deadStream, { seq: 1 });
    t.match(dead?.json(), { failures: 3, error: 'still broken' });
  },
);

t.test(
  'function host - a newer item that succeeds clears the failure record of the one it replaced',
  async (t) => {
    const backbone = await backboneFor(t);
    const applied: number[] = [];
    await startHost(
      t,
      backbone,
      widgetFunction(backbone, (s) => {
        if (s.value === 1) return Promise.reject(new Error('value 1 is bad'));
        applied.push(s.value ?? -1);
        return Promise.resolve();
      }),
      { baseBackoffMs: 60_000 },
    );
    const record = () => backbone.attempts.get('widgets.c1.ns1.w1');
    await putWidget(backbone, 'w1', 1);
    await waitFor('the failure recorded', async () => (await record())?.operation === 'PUT');
    await putWidget(backbone, 'w1', 2);
    await waitFor('the newer value applied', () => applied.includes(2));
    await waitFor('the failure record cleared', async () => {
      const entry = await record();
      return entry === null || entry.operation !== 'PUT';
    });
    t.same(applied, [2]);
  },
);

t.test('function host - a reconcile that runs long is logged with its key', async (t) => {
  const backbone = await backboneFor(t);
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const { lines } = await startHost(
    t,
    backbone,
    widgetFunction(backbone, () => released),
    { slowReconcileMs: 200 },
  );
  await putWidget(backbone, 'w1', 1);
  const warning = await waitFor('the still-running warning', () =>
    lines.find((l) => l.msg === 'reconcile still running'),
  );
  t.match(warning, { key: 'ns1/w1', runningMs: 200 });
  release();
});

t.test(
  'function host - a definition with a quiet time reconciles a burst of changes once, after the last',
  async (t) => {
    const backbone = await backboneFor(t);
    const applied: (number | undefined)[] = [];
    const definition = {
      ...widgetFunction(backbone, (s) => {
        applied.push(s.value);
        return Promise.resolve();
      }),
      quietMs: 400,
    };
    await startHost(t, backbone, definition);
    // Ten changes 20 ms apart: each arrives while the previous one waits out its quiet time.
    for (let value = 1; value <= 10; value++) {
      await putWidget(backbone, 'w1', value);
      await delay(20);
    }
    await waitFor('the burst to be applied', () => applied.at(-1) === 10, 10_000);
    t.same(applied, [10], 'one reconcile, of the last state');
    await putWidget(backbone, 'w1', 11);
    await waitFor('a later change to be applied', () => applied.at(-1) === 11, 10_000);
    t.same(applied, [10, 11]);
  },
);

t.test(
  'function host - stop does not wait for a change whose mapping never ends (a NATS server gone with it)',
  async (t) => {
    const backbone = await backboneFor(t);
    let mapping = false;
    const definition = {
      ...widgetFunction(backbone, () => Promise.resolve()),
      triggers: [
        {
          kind: 'Widget',
          workKeys: () => {
            mapping = true;
            return new Promise<never>(() => undefined);
          },
        },
      ],
    };
    const registry = new Registry();
    const host = new FunctionHost(
      backbone,
      definition,
      capturingLogger().log,
      createFunctionMetrics(registry),
      { baseBackoffMs: 10 },
    );
    await host.start();
    await putWidget(backbone, 'w1', 1);
    await waitFor('the change to be mapping', () => mapping);
    await host.stop(100);
    t.pass('stopped');
  },
);

t.test(
  'function host - a trigger naming no parts is not woken by a change of Operator component labels alone',
  async (t) => {
    const backbone = await backboneFor(t);
    const seen: (number | undefined)[] = [];
    const definition = widgetFunction(backbone, (s) => Promise.resolve(void seen.push(s.value)));
    const subject = `$KV.${assets.objects}.${objectKey(widget('w1'))}`;
    const put = async (value: number, labels: Record<string, string>): Promise<void> => {
      const { json, signature } = serializeByParts({ metadata: { labels }, spec: { value } });
      const h = headers();
      h.set(partsHeader, signature);
      await backbone.js.publish(subject, json, { headers: h });
    };
    await startHost(t, backbone, definition);
    const component = { 'operators.coreos.com/etcd.ns1': '' };
    await put(1, { app: 'a' });
    await waitFor('the first change', () => seen.length === 1);
    await put(1, { app: 'a', ...component }); // labelled for an Operator: no work
    await put(1, { app: 'b', ...component }); // another label: work
    await waitFor('the label change', () => seen.length === 2);
    await put(1, { app: 'b' }); // unlabelled again: no work
    await put(2, { app: 'b', ...component }); // labelled, and a spec change: work
    await waitFor('the spec change', () => seen.includes(2));
    t.same(seen, [1, 1, 2], 'changes of component labels alone started no work');
  },
);
