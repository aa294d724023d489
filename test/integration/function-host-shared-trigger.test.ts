import { Registry } from 'prom-client';
import t from 'tap';
import { objectKey } from '../../shared/bus/subjects.js';
import { FunctionHost, type FunctionDefinition } from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { workKeyType, type FieldKey } from '../../shared/runtime/work-keys.js';
import { backboneFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';
import { waitFor } from '../harness/wait.js';

// Regression: message ids of work items were derived from the change alone, so when two
// functions were triggered by the same change JetStream dropped the second one's item as a
// duplicate (seen as copy-csv and rbac each missing changes for up to the ack wait).
t.test(
  'function host - two functions triggered by the same change both get their work item',
  async (t) => {
    const backbone = await backboneFor(t);
    const seen = new Map<string, number[]>();
    const definition = (name: string): FunctionDefinition<FieldKey<'a' | 'b'>, number, number> => {
      const key = workKeyType(name, ['a', 'b']);
      return {
        key,
        triggers: [{ kind: 'Widget', workKeys: () => [key.of({ a: 'same', b: 'key' })] }],
        async load() {
          const e = await backbone.objects.get(
            objectKey({ cluster: 'c1', kind: 'Widget', namespace: 'n', name: 'w' }),
          );
          return e === null ? -1 : Number(e.string());
        },
        decide: (s) => ({ writes: s }),
        apply(v) {
          seen.set(name, [...(seen.get(name) ?? []), v]);
          return Promise.resolve();
        },
      };
    };
    const { log } = capturingLogger('warn');
    const metrics = createFunctionMetrics(new Registry());
    for (const name of ['first', 'second']) {
      const host = new FunctionHost(backbone, definition(name), log, metrics, {
        ackWaitMs: 60_000,
      });
      await host.start();
      t.teardown(() => host.stop(500));
    }
    for (let i = 1; i <= 5; i++) {
      await backbone.objects.put(
        objectKey({ cluster: 'c1', kind: 'Widget', namespace: 'n', name: 'w' }),
        String(i),
      );
      // Well within the ack wait: a dropped item would only come back after it.
      await waitFor(
        `both functions to apply ${i}`,
        () => seen.get('first')?.at(-1) === i && seen.get('second')?.at(-1) === i,
        5_000,
      );
    }
    t.pass('both functions saw every change');
  },
);
