// Which InstallPlan changes start an install-plan pass: only those of a plan with steps to
// execute (or being deleted). The plan function's create before its steps, and the status write
// of the pass that completed or failed the plan, start none.
import t from 'tap';
import { installPlanFunction } from '../../functions/install/install-plan/definition.js';
import type { ServedInstallPlan } from '../../functions/install/install-plan/types.js';
import type { MirrorSource } from '../../shared/bus/mirror-read.js';
import type { ObjectChange } from '../../shared/runtime/types.js';
import type { ScopedClients } from '../../functions/install/scope.js';

const definition = installPlanFunction({
  scoped: {} as ScopedClients,
  mirror: {} as MirrorSource,
});
const trigger = definition.triggers[0];

const change = (object: ServedInstallPlan | undefined): ObjectChange => ({
  ref: {
    cluster: 'c1',
    kind: 'InstallPlan',
    namespace: 'ns1',
    name: 'install-a',
  },
  object,
  touches: () => true,
  differs: () => true,
});

const plan = (status?: Partial<NonNullable<ServedInstallPlan['status']>>, deleting = false) =>
  ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'InstallPlan',
    metadata: {
      name: 'install-a',
      namespace: 'ns1',
      ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { clusterServiceVersionNames: ['a.v1'], approval: 'Automatic', approved: true },
    ...(status === undefined ? {} : { status: { catalogSources: [], ...status } }),
  }) as unknown as ServedInstallPlan;

t.test('install plan wakes - only plans with steps to execute start a pass', async (t) => {
  if (trigger === undefined) throw new Error('install-plan has no trigger');
  const keys = async (o: ServedInstallPlan | undefined) =>
    (await trigger.workKeys(change(o))).length;
  t.equal(await keys(plan()), 0, 'created without status: the plan function still plans it');
  t.equal(await keys(plan({ phase: 'Installing' })), 0, 'steps not written yet');
  t.equal(await keys(plan({ phase: 'Installing', plan: [] })), 1, 'steps to execute');
  t.equal(await keys(plan({ phase: 'RequiresApproval', plan: [] })), 1, 'waiting for approval');
  t.equal(await keys(plan({ phase: 'Complete', plan: [] })), 0, 'Complete: nothing to do');
  t.equal(await keys(plan({ phase: 'Failed', plan: [] })), 0, 'Failed: nothing to do');
  t.equal(await keys(plan({ phase: 'Complete', plan: [] }, true)), 1, 'being deleted');
  t.equal(await keys(undefined), 1, 'deleted');
});
