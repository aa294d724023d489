// The queues deployments scale on (functionQueues, k8s/ ScaledObjects) are exactly the queues of
// the definitions each function module returns: a definition added or renamed without them
// would run unscaled.
import { Registry } from 'prom-client';
import t from 'tap';
import { functionModules, functionNames, functionQueues } from '../../functions/index.js';
import { backboneFor } from '../harness/backbone.js';
import { capturingLogger } from '../harness/log.js';

t.test('functions - each module returns one definition per queue it declares', async (t) => {
  const backbone = await backboneFor(t);
  for (const name of functionNames) {
    const stop = new AbortController();
    const started = await (
      await functionModules[name]()
    )({
      backbone,
      clients: new Map(),
      log: capturingLogger('warn').log,
      registry: new Registry(),
      globalCatalogNamespace: 'olm',
      signal: stop.signal,
    });
    t.same(
      started.definitions.map((d) => d.key.queue),
      functionQueues[name],
      `${name}'s definitions`,
    );
    stop.abort();
    await started.close?.();
  }
});
