// A trigger deriving its own view of an object (ObjectChange.differs) is woken when that view
// changes, and not by changes that leave it (and the parts it asks about) as they were.
import { connect, headers } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { assets, openBackbone, type Backbone } from '../../shared/bus/backbone.js';
import { partsHeader, serializeByParts } from '../../shared/bus/object-parts.js';
import { objectKey } from '../../shared/bus/subjects.js';
import { FunctionHost, type FunctionDefinition } from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { workKeyType, type NamespacedName } from '../../shared/runtime/work-keys.js';
import { capturingLogger } from '../harness/log.js';
import { natsServerFor } from '../harness/nats.js';
import { waitFor } from '../harness/wait.js';

interface Phased {
  spec: { value: number };
  status: { phase: string };
}

const ref = { cluster: 'c1', kind: 'Widget', namespace: 'ns1', name: 'w1' };
const widgetKey = workKeyType('widgets', ['namespace', 'name']);

// What the test decision tells apart of a phase: done or not.
const doneView = (w: Phased | undefined): string => (w?.status.phase === 'done' ? 'done' : 'not');

async function backboneFor(t: Test): Promise<Backbone> {
  const server = await natsServerFor(t);
  const nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  return openBackbone(nc, { leaseTtlMs: 2_000 });
}

t.test('function host - a trigger view wakes work only when the view changes', async (t) => {
  const backbone = await backboneFor(t);
  const reconciled: string[] = [];
  const definition: FunctionDefinition<NamespacedName, string, string> = {
    key: widgetKey,
    triggers: [
      {
        kind: 'Widget',
        workKeys: (c) => {
          const object = c.object as Phased | undefined;
          const view = c.differs('done', doneView(object));
          return c.touches(['spec']) || view
            ? [widgetKey.of({ namespace: c.ref.namespace, name: c.ref.name })]
            : [];
        },
      },
    ],
    async load() {
      const entry = await backbone.objects.get(objectKey(ref));
      if (entry === null || entry.operation !== 'PUT') return 'gone';
      const w = entry.json<Phased>();
      return `${w.spec.value}/${doneView(w)}`;
    },
    decide: (s) => ({ writes: s }),
    apply: (s) => Promise.resolve(void reconciled.push(s)),
  };
  const { log } = capturingLogger();
  const host = new FunctionHost(backbone, definition, log, createFunctionMetrics(new Registry()), {
    baseBackoffMs: 10,
    contentionDelayMs: 20,
    random: () => 0.5,
  });
  await host.start();
  t.teardown(() => host.stop(1_000));
  const subject = `$KV.${assets.objects}.${objectKey(ref)}`;
  const put = async (value: number, phase: string): Promise<void> => {
    const { json, signature } = serializeByParts({ spec: { value }, status: { phase } });
    const h = headers();
    h.set(partsHeader, signature);
    await backbone.js.publish(subject, json, { headers: h });
  };

  await put(1, ''); // never looked at: work
  await waitFor('the first version', () => reconciled.length === 1);
  await put(1, 'Pending'); // a phase the view does not tell apart
  await put(1, 'Installing');
  await put(1, 'done'); // the view changes
  await waitFor('the view change', () => reconciled.includes('1/done'));
  await put(2, 'done'); // a part asked about changes
  await waitFor('the spec change', () => reconciled.includes('2/done'));
  await put(2, 'Installing'); // back: the view changes again
  await waitFor('the view change back', () => reconciled.includes('2/not'));
  await backbone.objects.delete(objectKey(ref));
  await waitFor('the deletion', () => reconciled.includes('gone'));
  t.same(reconciled, ['1/not', '1/done', '2/done', '2/not', 'gone']);
});
