// The install-plan reconciler (upstream's catalog operator syncInstallPlans/ExecutePlan): one
// work item per InstallPlan. load reads the plan and what its pending steps name from the API
// (load.ts), decide is decide.ts, apply writes step by step and records the plan status
// (apply.ts). Its clients and clock are chosen here.
import type { Counter } from 'prom-client';
import type { KubeClient } from '../../../shared/kube/client.js';
import type { FunctionDefinition, WorkContext } from '../../../shared/runtime/function-host.js';
import type { ScopedClients } from '../scope.js';
import { applyPlan } from './apply.js';
import { decidePlan } from './decide.js';
import { loadPlan } from './load.js';
import type { PlanSnapshot, PlanWrites } from './types.js';

/** The InstallPlan function over `clients` (by cluster id). */
export function installPlanFunction(options: {
  clients: ReadonlyMap<string, KubeClient>;
  scoped: ScopedClients;
  warnings?: Counter;
  now?: () => Date;
}): FunctionDefinition<PlanSnapshot, PlanWrites> {
  const now = options.now ?? (() => new Date());
  const clientOf = (cluster: string): KubeClient => {
    const client = options.clients.get(cluster);
    if (client === undefined) throw new Error(`no client for cluster ${cluster}`);
    return client;
  };
  return {
    name: 'install-plan',
    triggers: [
      {
        kind: 'InstallPlan',
        workKeys: (c) => [[c.ref.namespace, c.ref.name]],
      },
    ],
    async load(work: WorkContext): Promise<PlanSnapshot> {
      const [namespace = '', name = ''] = work.key;
      return loadPlan(clientOf(work.cluster), namespace, name, now);
    },
    decide: decidePlan,
    async apply(writes: PlanWrites, work: WorkContext): Promise<void> {
      await applyPlan(writes, {
        client: clientOf(work.cluster),
        scoped: options.scoped,
        now,
        log: work.log,
        countWarnings: () => options.warnings?.inc(),
      });
    },
  };
}
