import { Registry } from 'prom-client';
import t from 'tap';
import { objectKey } from '../../shared/bus/subjects.js';
import { FunctionHost, type FunctionDefinition } from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { backboneFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';
import { waitFor } from '../harness/wait.js';

// Regression: work item ids were derived from the change alone, so when two functions were
// triggered by the same change JetStream deduplicated the second function's item away.
t.test('function host - two functions triggered by the same change both get work', async (t) => {
  const backbone = await backboneFor(t, { leaseTtlMs: 2_000 });
  const seen = new Map<string, string[]>();
  const definition = (name: string): FunctionDefinition<string, string> => ({
    name,
    triggers: [{ kind: 'Widget', workKeys: (c) => [[c.ref.namespace, c.ref.name]] }],
    load: (work) => Promise.resolve(work.key.join('/')),
    decide: (key) => ({ writes: key }),
    apply: (key) => {
      seen.set(name, [...(seen.get(name) ?? []), key]);
      return Promise.resolve();
    },
  });
  const { log } = capturingLogger('warn');
  const metrics = createFunctionMetrics(new Registry());
  for (const name of ['first', 'second']) {
    const host = new FunctionHost(backbone, definition(name), log, metrics, { baseBackoffMs: 10 });
    await host.start();
    t.teardown(() => host.stop(1_000));
  }
  await backbone.objects.put(
    objectKey({ cluster: 'c1', kind: 'Widget', namespace: 'ns1', name: 'w1' }),
    JSON.stringify({ spec: {} }),
  );
  await waitFor('both functions to reconcile ns1/w1', () => seen.size === 2);
  t.same(seen.get('first'), ['ns1/w1']);
  t.same(seen.get('second'), ['ns1/w1']);
});
