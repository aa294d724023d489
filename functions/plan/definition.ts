// The plan function: work key { namespace } (queue `plan`). Turns the resolution the resolve function
// recorded into InstallPlans (with their steps) and links the Subscriptions to them; follows
// the plans' progress into the Subscriptions' InstallPlan* conditions.
import { BundleUnpacker, openBundleStore } from '../../shared/bundle-image/index.js';
import {
  registryAccessOf,
  registryAccessSettingsFromEnv,
  type RegistryAccess,
} from '../../shared/registry-access/index.js';
import { openCatalogStore, resolutionRecords } from '../../shared/handoff/index.js';
import { executeWrites, type Write } from '../../shared/kube/executor.js';
import { OwnWrites } from '../../shared/kube/own-writes.js';
import { unlessOwnWrite } from '../../shared/runtime/own-write-triggers.js';
import { planKey } from './keys.js';
import { registerPlanMetrics } from './metrics.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import type { FunctionDefinition, Trigger } from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { decidePlan, type PlanSnapshot } from './decide.js';
import { BundleSources } from './bundle-sources.js';
import { loadPlanSnapshot } from './load.js';

const fieldManager = 'olmq-plan';

// Each of these kinds concerns the plans of the namespace it is in.
const namespaceTrigger = (kind: string, parts?: Trigger['parts']): Trigger => ({
  kind,
  ...(parts === undefined ? {} : { parts }),
  workKeys: (c) => [planKey.of({ namespace: c.ref.namespace })],
});

/** Options of the plan function beyond its context (tests and benchmarks set them). */
export interface PlanFunctionOptions {
  /** Registry client and operator-wide credentials (default: from the environment). */
  registry?: RegistryAccess;
  /** Pull limits for bundle images. */
  limits?: ConstructorParameters<typeof BundleUnpacker>[0]['limits'];
}

export const createFunction: CreateFunction = async (context) => startPlanFunction(context, {});

/** Starts the plan function with `options`. */
export const startPlanFunction = async (
  context: Parameters<CreateFunction>[0],
  options: PlanFunctionOptions,
): ReturnType<CreateFunction> => {
  const { backbone } = context;
  const store = await openCatalogStore(backbone);
  const access =
    options.registry ??
    (await registryAccessOf(registryAccessSettingsFromEnv(process.env), {
      userAgent: 'olmq-plan',
    }));
  const unpacker = new BundleUnpacker({
    client: access.client,
    store: await openBundleStore(backbone),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  const sources = new BundleSources(store, unpacker, access);
  registerPlanMetrics(backbone, context.registry);
  // What this replica's plan writes left, so a load can tell whether the mirror shows them.
  const ownWrites = new OwnWrites();
  const recordedKinds = ['Subscription', 'InstallPlan'];
  const definition: FunctionDefinition<FieldKey<'namespace'>, PlanSnapshot, Write[]> = {
    key: planKey,
    triggers: [
      namespaceTrigger(resolutionRecords.kind),
      // What the plan decision reads of a plan: not its steps' progress (status.plan), which the
      // install function writes several times per plan and whose presence only this function sets.
      // Nor the plans and Subscriptions as this replica's own writes left them.
      unlessOwnWrite(
        namespaceTrigger('InstallPlan', [
          'metadata',
          'spec',
          'status.phase',
          'status.conditions',
          'status.message',
          'status.bundleLookups',
        ]),
        ownWrites,
      ),
      // Its upgrade strategy decides whether a failed plan holds its Subscriptions.
      namespaceTrigger('OperatorGroup', ['spec']),
      // The fields linking a Subscription to its plans; not the conditions (its own, and
      // resolution's), catalog health or installedCSV.
      unlessOwnWrite(
        namespaceTrigger('Subscription', [
          'metadata',
          'spec',
          'status.installPlanRef',
          'status.installplan',
          'status.installPlanGeneration',
          'status.currentCSV',
          'status.state',
        ]),
        ownWrites,
      ),
    ],
    load: (work) => loadPlanSnapshot(backbone, sources, ownWrites, work),
    decide: decidePlan,
    apply: (writes, work) =>
      ownWrites.recording(
        { cluster: work.cluster, namespace: work.key.namespace },
        recordedKinds,
        (observe) => executeWrites(work.client, writes, fieldManager, observe),
      ),
  };
  return { definitions: [definition] };
};
