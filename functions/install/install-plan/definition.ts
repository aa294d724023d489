// The install-plan reconciler (upstream's catalog operator syncInstallPlans/ExecutePlan): one
// work item per InstallPlan. load reads the plan (from the mirror when it shows this replica's
// writes) and what its pending steps name from the API (load.ts), decide is decide.ts, apply writes step by step and records the plan status
// (apply.ts).
import type { Counter } from 'prom-client';
import type { MirrorSource } from '../../../shared/bus/mirror-read.js';
import type { FunctionDefinition, WorkContext } from '../../../shared/runtime/types.js';
import type { NamespacedName } from '../../../shared/runtime/work-keys.js';
import { OwnWrites } from '../../../shared/kube/own-writes.js';
import { installPlanKey } from '../keys.js';
import type { ScopedClients } from '../scope.js';
import { applyPlan } from './apply.js';
import { decidePlan } from './decide.js';
import { failPlanOnDeadWork } from './give-up.js';
import { loadPlan } from './load.js';
import type { PlanSnapshot, PlanWrites, ServedInstallPlan } from './types.js';

type PlanWork = WorkContext<NamespacedName>;

/** The InstallPlan definition; each reconcile uses the host's client and clock. */
export function installPlanFunction(options: {
  scoped: ScopedClients;
  warnings?: Counter<'cluster'>;
  /** How long a failing plan retries before it is Failed (upstream's install plan timeout). */
  retryWindowMs?: number;
  /** The watcher's mirror (the OperatorGroup scope). */
  mirror: MirrorSource;
}): FunctionDefinition<NamespacedName, PlanSnapshot, PlanWrites> {
  // This replica's status writes of plans, so a load can tell whether the mirror shows them.
  const ownWrites = new OwnWrites();
  return {
    key: installPlanKey,
    triggers: [
      {
        kind: 'InstallPlan',
        // Of its metadata a pass reads only whether the plan is being deleted: the labels the
        // operator function puts on plans start no pass. Nor does a plan with nothing to execute:
        // one whose steps the plan function has not written yet (their write wakes it), or one
        // Complete or Failed (such as the status write of the pass that completed it).
        workKeys: (c) => {
          const plan = c.object as ServedInstallPlan | undefined;
          const status = plan?.status;
          const executable =
            status?.plan !== undefined && status.phase !== 'Complete' && status.phase !== 'Failed';
          const relevant =
            plan === undefined ||
            plan.metadata.deletionTimestamp !== undefined ||
            (executable && c.touches(['spec', 'status']));
          return relevant
            ? [installPlanKey.of({ namespace: c.ref.namespace, name: c.ref.name })]
            : [];
        },
      },
    ],
    async load(work: PlanWork): Promise<PlanSnapshot> {
      return loadPlan(
        work.client,
        { source: options.mirror, cluster: work.cluster, ownWrites },
        work.key.namespace,
        work.key.name,
        work.now,
      );
    },
    decide: decidePlan,
    async apply(writes: PlanWrites, work: PlanWork): Promise<void> {
      const where = { cluster: work.cluster, namespace: work.key.namespace };
      await ownWrites.recording(where, ['InstallPlan'], (observe) =>
        applyPlan(writes, {
          client: work.client,
          scoped: options.scoped,
          now: work.now,
          log: work.log,
          countWarnings: () => options.warnings?.inc({ cluster: work.cluster }),
          ...(options.retryWindowMs === undefined ? {} : { retryWindowMs: options.retryWindowMs }),
          observe,
        }),
      );
    },
    giveUp: failPlanOnDeadWork,
  };
}
