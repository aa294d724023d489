// A decision's follow-up that names its basis is published once per basis: a pass whose inputs
// of the target did not change sends nothing new, one whose inputs changed sends it again (on a
// real nats-server, counting the work items that reach the target's subject).
import type { Msg } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import t from 'tap';
import { objectKey, workSubject } from '../../shared/bus/subjects.js';
import { FunctionHost, type FunctionDefinition } from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { workKeyType, type NamespacedName } from '../../shared/runtime/work-keys.js';
import { backboneFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';
import { waitFor } from '../harness/wait.js';

const sourceKey = workKeyType('follow-up-sources', ['namespace', 'name']);
const targetKey = workKeyType('follow-up-targets', ['namespace']);

t.test('function host - a follow-up is not published again on the same basis', async (t) => {
  const backbone = await backboneFor(t);
  const sent: Msg[] = [];
  const subscription = backbone.nc.subscribe(workSubject(targetKey.queue, 'c1', ['ns1']), {
    callback: (_error, m) => void sent.push(m),
  });
  t.teardown(() => subscription.unsubscribe());

  // The source reads a Widget's value; its follow-up's basis is the value's parity.
  const source: FunctionDefinition<NamespacedName, number, null> = {
    key: sourceKey,
    triggers: [
      {
        kind: 'Widget',
        workKeys: (c) => [sourceKey.of({ namespace: c.ref.namespace, name: c.ref.name })],
      },
    ],
    async load(work) {
      const entry = await backbone.objects.get(
        objectKey({ cluster: work.cluster, kind: 'Widget', ...work.key }),
      );
      return entry?.json<{ value: number }>().value ?? 0;
    },
    decide: (value) => ({
      writes: null,
      enqueue: [{ ...targetKey.of({ namespace: 'ns1' }), basis: value % 2 === 0 ? 'even' : 'odd' }],
    }),
    apply: () => Promise.resolve(),
  };
  const registry = new Registry();
  const host = new FunctionHost(
    backbone,
    source,
    capturingLogger().log,
    createFunctionMetrics(registry),
    { baseBackoffMs: 10 },
  );
  await host.start();
  t.teardown(() => host.stop(1_000));
  const passes = async (): Promise<number> =>
    (
      (await registry.getMetricsAsJSON()).find((m) => m.name === 'olmq_work_processed_total')
        ?.values ?? []
    ).reduce((sum, v) => sum + v.value, 0);

  const sentAfter = async (value: number, pass: number): Promise<number> => {
    await backbone.objects.put(
      objectKey({ cluster: 'c1', kind: 'Widget', namespace: 'ns1', name: 'w1' }),
      JSON.stringify({ value }),
    );
    // The pass's follow-ups are published before it counts as processed.
    await waitFor(`pass ${pass}`, async () => (await passes()) >= pass, 15_000);
    await backbone.nc.flush();
    return sent.length;
  };
  t.equal(await sentAfter(1, 1), 1, 'the first follow-up is published');
  t.equal(await sentAfter(3, 2), 1, 'the same basis again: not published');
  t.equal(await sentAfter(4, 3), 2, 'another basis: published');
  t.equal(await sentAfter(5, 4), 3, 'back to the first basis, which is not the last: published');
});
