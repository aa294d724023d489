// The function host with dead work: a definition's giveUp says so on the object, letters are
// one per key and cleared when the key reconciles after all, redriven on a schedule with
// backoff, and a trigger that throws is retried a bounded number of times, then dead-lettered
// and re-run by the redriver. Real nats-server, a test definition over the object mirror.
import { JetStreamApiError } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { openBackbone, type Backbone } from '../../shared/bus/backbone.js';
import { listDeadLetters, requestTriggerRedrive } from '../../shared/bus/dead-letters.js';
import { BusRequestError } from '../../shared/bus/pipe.js';
import { objectKey } from '../../shared/bus/subjects.js';
import {
  FunctionHost,
  type FunctionDefinition,
  type FunctionHostOptions,
  type WorkContext,
} from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import type { DeadWork, ObjectChange } from '../../shared/runtime/types.js';
import { workKeyType, type NamespacedName } from '../../shared/runtime/work-keys.js';
import { capturingLogger } from '../harness/log.js';
import { natsServerFor } from '../harness/nats.js';
import { waitFor } from '../harness/wait.js';

async function backboneFor(t: Test): Promise<Backbone> {
  const server = await natsServerFor(t);
  const nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  return openBackbone(nc, { leaseTtlMs: 2_000 });
}

const gadgetKey = workKeyType('gadgets', ['namespace', 'name']);
type GadgetWork = WorkContext<NamespacedName>;

async function putGadget(backbone: Backbone, name: string, value: number): Promise<void> {
  const ref = { cluster: 'c1', kind: 'Gadget', namespace: 'ns1', name };
  await backbone.objects.put(objectKey(ref), JSON.stringify({ spec: { value } }));
}

/** A definition whose apply and trigger behave as the test says at the time. */
function gadgets(behaviour: {
  apply: (value: number) => Promise<void>;
  trigger?: (change: ObjectChange) => void;
  givenUp?: { key: NamespacedName; dead: DeadWork }[];
}): FunctionDefinition<NamespacedName, number, number> {
  return {
    key: gadgetKey,
    triggers: [
      {
        kind: 'Gadget',
        workKeys: (c) => {
          behaviour.trigger?.(c);
          return [gadgetKey.of({ namespace: c.ref.namespace, name: c.ref.name })];
        },
      },
    ],
    load: () => Promise.resolve(0),
    decide: (value) => ({ writes: value }),
    apply: (value: number, _work: GadgetWork) => behaviour.apply(value),
    ...(behaviour.givenUp === undefined
      ? {}
      : {
          giveUp: (work: GadgetWork, dead: DeadWork) => {
            behaviour.givenUp?.push({ key: work.key, dead });
            return Promise.resolve();
          },
        }),
  };
}

async function startHost(
  t: Test,
  backbone: Backbone,
  definition: FunctionDefinition<NamespacedName, number, number>,
  options: Partial<FunctionHostOptions> = {},
) {
  const registry = new Registry();
  const { log, lines } = capturingLogger();
  const host = new FunctionHost(backbone, definition, log, createFunctionMetrics(registry), {
    baseBackoffMs: 10,
    contentionDelayMs: 20,
    random: () => 0.5,
    maxAttempts: 3,
    ...options,
  });
  await host.start();
  t.teardown(() => host.stop(1_000));
  const series = async (name: string) =>
    (await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? [];
  return { lines, series };
}

t.test('dead work - a permanent error calls giveUp once and is counted by reason', async (t) => {
  const backbone = await backboneFor(t);
  const givenUp: { key: NamespacedName; dead: DeadWork }[] = [];
  const { series } = await startHost(
    t,
    backbone,
    gadgets({
      apply: () => Promise.reject(Object.assign(new Error('bad manifest'), { retryable: false })),
      givenUp,
    }),
  );
  await putGadget(backbone, 'g1', 1);
  await waitFor('giveUp to be called', () => givenUp.length === 1);
  t.match(givenUp[0], {
    key: { namespace: 'ns1', name: 'g1' },
    dead: { reason: 'Permanent', message: 'bad manifest', failures: 1 },
  });
  t.match(await series('olmq_work_dead_lettered_total'), [
    { labels: { function: 'gadgets', cluster: 'c1', reason: 'Permanent' }, value: 1 },
  ]);
  const letters = await listDeadLetters(backbone, { fn: 'gadgets' });
  t.match(
    letters.map((l) => l.letter),
    [{ origin: 'work', key: ['ns1', 'g1'], reason: 'Permanent', redrives: 0 }],
  );
  t.match(await series('olmq_dead_letters'), [
    { labels: { function: 'gadgets', cluster: 'c1' }, value: 1 },
  ]);
});

t.test(
  'dead work - a change that lets the key reconcile clears its dead letter (handled)',
  async (t) => {
    const backbone = await backboneFor(t);
    let broken = true;
    const { series } = await startHost(
      t,
      backbone,
      gadgets({
        apply: () => (broken ? Promise.reject(new Error('the API said no')) : Promise.resolve()),
      }),
    );
    await putGadget(backbone, 'g1', 1);
    await waitFor(
      'a dead letter',
      async () => (await listDeadLetters(backbone, { fn: 'gadgets' })).length === 1,
    );
    t.match((await listDeadLetters(backbone))[0]?.letter, {
      reason: 'TooManyFailures',
      failures: 3,
    });
    broken = false;
    await putGadget(backbone, 'g1', 2); // someone fixes the object
    await waitFor(
      'the letter to be cleared',
      async () => (await listDeadLetters(backbone)).length === 0,
    );
    t.match(await series('olmq_dead_letters_redriven_total'), [
      { labels: { function: 'gadgets', cause: 'change' }, value: 1 },
    ]);
  },
);

t.test(
  'dead work - letters are redriven on a schedule, later each time the key dies again',
  async (t) => {
    const backbone = await backboneFor(t);
    let attempts = 0;
    const { series } = await startHost(
      t,
      backbone,
      // Dies twice (three attempts each), then succeeds on the second redrive.
      gadgets({
        apply: () =>
          ++attempts <= 6 ? Promise.reject(new Error(`no ${attempts}`)) : Promise.resolve(),
      }),
      { redriveScanMs: 50, firstRedriveDelayMs: 200 },
    );
    await putGadget(backbone, 'g1', 1);
    const first = await waitFor('a first letter', async () =>
      (await listDeadLetters(backbone)).find((l) => l.letter.redrives === 0),
    );
    const second = await waitFor('a second letter, after one redrive', async () =>
      (await listDeadLetters(backbone)).find((l) => l.letter.redrives === 1),
    );
    const spacing = Date.parse(second.letter.at) - Date.parse(first.letter.at);
    t.ok(spacing >= 200, `redriven after the first delay (${spacing} ms)`);
    await waitFor('the work to succeed', () => attempts === 7, 5_000);
    await waitFor('no letter left', async () => (await listDeadLetters(backbone)).length === 0);
    t.match(await series('olmq_dead_letters_redriven_total'), [
      { labels: { function: 'gadgets', cause: 'schedule' }, value: 2 },
    ]);
  },
);

t.test(
  'dead work - a trigger that throws is retried with backoff, dead-lettered, and re-run by the redriver',
  async (t) => {
    const backbone = await backboneFor(t);
    let triggerBroken = true;
    let triggerCalls = 0;
    const applied: number[] = [];
    const { series, lines } = await startHost(
      t,
      backbone,
      gadgets({
        apply: (value) => {
          applied.push(value);
          return Promise.resolve();
        },
        trigger: () => {
          triggerCalls++;
          if (triggerBroken) throw new Error('cannot map this change');
        },
      }),
      { redriveScanMs: 50, firstRedriveDelayMs: 60_000 },
    );
    await putGadget(backbone, 'g1', 1);
    const letter = await waitFor('a trigger letter', async () =>
      (await listDeadLetters(backbone)).find((l) => l.letter.origin === 'trigger'),
    );
    t.match(letter.letter, {
      function: 'gadgets',
      cluster: 'c1',
      key: ['Gadget', 'ns1', 'g1'],
      reason: 'TriggerFailed',
      failures: 3,
      error: 'cannot map this change',
    });
    t.equal(triggerCalls, 3, 'three deliveries, then no more');
    t.match(await series('olmq_work_dead_lettered_total'), [
      { labels: { reason: 'TriggerFailed' }, value: 1 },
    ]);
    t.ok(
      lines.some((l) => l.msg === 'trigger dead-lettered a change after repeated failures'),
      'logged',
    );
    t.equal(applied.length, 0, 'no work started');

    // Fixed, and due now (as `olmq dlq redrive` makes it): the redriver re-runs the trigger.
    triggerBroken = false;
    await requestTriggerRedrive(backbone, letter, new Date());
    await waitFor('the work to run', () => applied.length === 1);
    await waitFor('the letter gone', async () => (await listDeadLetters(backbone)).length === 0);
  },
);

t.test(
  'dead work - NATS unavailable (no responders, JetStream 503) is retried past maxAttempts and never dead-lettered',
  async (t) => {
    const backbone = await backboneFor(t);
    // More failures than maxAttempts (3), as a stream electing a leader after a server is
    // killed answers for longer than the work's backoff.
    let triggerFailures = 6;
    let applyFailures = 6;
    const applied: number[] = [];
    const { series, lines } = await startHost(
      t,
      backbone,
      gadgets({
        trigger: () => {
          if (triggerFailures-- > 0) throw new BusRequestError('no responders', 'no-responders');
        },
        apply: (value) => {
          if (applyFailures-- > 0)
            return Promise.reject(
              new Error('could not record', {
                cause: new JetStreamApiError({
                  code: 503,
                  err_code: 10008,
                  description: 'JetStream system temporarily unavailable',
                }),
              }),
            );
          applied.push(value);
          return Promise.resolve();
        },
      }),
    );
    await putGadget(backbone, 'g1', 1);
    await waitFor('the work to run once NATS answers', () => applied.length === 1, 20_000);
    t.equal(triggerFailures, -1, 'the trigger was retried after every unavailable answer');
    t.equal(applyFailures, -1, 'the work was retried after every unavailable answer');
    t.same(await listDeadLetters(backbone), [], 'nothing was dead-lettered');
    t.same(await series('olmq_work_dead_lettered_total'), [], 'no dead letter counted');
    t.ok(
      lines.some((l) => l.msg === 'NATS unavailable; retrying without counting a failure'),
      'the work logged why it waits',
    );
    t.ok(
      lines.some(
        (l) => l.msg === 'trigger met NATS unavailable; retrying without counting a failure',
      ),
      'the trigger logged why it waits',
    );
  },
);
