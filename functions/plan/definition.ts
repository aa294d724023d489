// The plan function: work key { namespace } (queue `plan`). Turns the resolution the resolve function
// recorded into InstallPlans (with their steps) and links the Subscriptions to them; follows
// the plans' progress into the Subscriptions' InstallPlan* conditions.
import type {
  ClusterServiceVersion,
  InstallPlan,
  OperatorGroup,
  Subscription,
} from '../../shared/api/index.js';
import {
  BundleUnpacker,
  bundleImageAccessFromEnv,
  openBundleStore,
  registryAccessOf,
  type RegistryAccess,
} from '../../shared/bundle-image/index.js';
import { openCatalogStore, resolutionRecords, resolutionRef } from '../../shared/handoff/index.js';
import { listMirrored } from '../../shared/bus/mirror-read.js';
import { executeWrites, type Write } from '../../shared/kube/executor.js';
import { kubeTime } from '../../shared/kube/time.js';
import { failForwardEnabled } from '../../shared/resolver/index.js';
import { planKey } from './keys.js';
import { registerPlanMetrics } from './metrics.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import type { FunctionDefinition, Trigger } from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { decidePlan, planGroups, type PlanSnapshot } from './decide.js';
import type { PlannedBundle } from '../../shared/install-plan/index.js';
import { unpackTimingOf, type BundleImageRead } from './bundle-lookups.js';
import { BundleSources } from './bundle-sources.js';

const fieldManager = 'olmq-plan';
const apiVersion = 'operators.coreos.com/v1alpha1';

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
    (await registryAccessOf(bundleImageAccessFromEnv(process.env), 'olmq-plan'));
  const unpacker = new BundleUnpacker({
    client: access.client,
    store: await openBundleStore(backbone),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  const sources = new BundleSources(store, unpacker, access);
  registerPlanMetrics(backbone, context.registry);
  const definition: FunctionDefinition<FieldKey<'namespace'>, PlanSnapshot, Write[]> = {
    key: planKey,
    triggers: [
      namespaceTrigger(resolutionRecords.kind),
      namespaceTrigger('InstallPlan'),
      // Its upgrade strategy decides whether a failed plan holds its Subscriptions.
      namespaceTrigger('OperatorGroup', ['spec']),
      // The fields linking a Subscription to its plans; not the conditions (its own, and
      // resolution's), catalog health or installedCSV.
      namespaceTrigger('Subscription', [
        'metadata',
        'spec',
        'status.installPlanRef',
        'status.installplan',
        'status.installPlanGeneration',
        'status.currentCSV',
        'status.state',
      ]),
    ],
    async load(work) {
      const { namespace } = work.key;
      const client = work.client;
      const [record, subscriptions, installPlans, csvs, operatorGroups] = await Promise.all([
        resolutionRecords.read(backbone, resolutionRef(work.cluster, namespace)),
        client
          .list({ apiVersion, kind: 'Subscription', namespace })
          .then((l) => l.items as unknown as Subscription[]),
        client
          .list({ apiVersion, kind: 'InstallPlan', namespace })
          .then((l) => l.items as unknown as InstallPlan[]),
        // Fresh from the API, as the plans are: a plan read Complete has its CSVs in this list,
        // where the mirror may still lag and make them look missing (a second plan for them).
        client
          .list({ apiVersion, kind: 'ClusterServiceVersion', namespace })
          .then((l) => l.items as unknown as ClusterServiceVersion[]),
        listMirrored<OperatorGroup>(backbone, {
          cluster: work.cluster,
          kind: 'OperatorGroup',
          namespace,
        }),
      ]);
      // Plans with steps, and plans a failed bundle lookup ended, need no manifests.
      const planned = new Set(
        installPlans
          .filter((ip) => ip.status?.plan !== undefined || ip.status?.phase === 'Failed')
          .map((ip) => ip.metadata.name),
      );
      // Manifests are read only for plans whose steps are still to be written.
      const manifests = new Map<string, PlannedBundle['manifests'] | Error>();
      const bundleImages = new Map<string, BundleImageRead>();
      for (const group of record === undefined ? [] : planGroups(namespace, record.bundles)) {
        if (planned.has(group.name)) continue;
        await Promise.all(
          group.bundles.map(async (b) => {
            const read = await sources.manifestsOf(client, b);
            manifests.set(b.name, read.manifests);
            if (read.image !== undefined) bundleImages.set(b.name, read.image);
          }),
        );
      }
      return {
        namespace,
        record,
        subscriptions,
        installPlans,
        csvs: new Set(csvs.map((c) => c.metadata.name ?? '')),
        manifests,
        now: kubeTime(work.now()),
        failForward: failForwardEnabled(operatorGroups),
        bundleImages,
        unpackTiming: unpackTimingOf(operatorGroups),
      };
    },
    decide: decidePlan,
    apply: (writes, work) => executeWrites(work.client, writes, fieldManager),
  };
  return { definitions: [definition] };
};
