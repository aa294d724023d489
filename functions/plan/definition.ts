// The plan function: work key { namespace } (queue `plan`). Turns the resolution the resolve function
// recorded into InstallPlans (with their steps) and links the Subscriptions to them; follows
// the plans' progress into the Subscriptions' InstallPlan* conditions.
import type {
  ClusterServiceVersion,
  InstallPlan,
  OperatorGroup,
  Subscription,
} from '../../shared/api/index.js';
import { decodeBundleManifests, type CatalogContent } from '../../shared/catalog/index.js';
import {
  fetchCatalogContent,
  openCatalogStore,
  resolutionRecords,
  resolutionRef,
} from '../../shared/handoff/index.js';
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

const fieldManager = 'olmq-plan';
const apiVersion = 'operators.coreos.com/v1alpha1';

// Each of these kinds concerns the plans of the namespace it is in.
const namespaceTrigger = (kind: string, parts?: Trigger['parts']): Trigger => ({
  kind,
  ...(parts === undefined ? {} : { parts }),
  workKeys: (c) => [planKey.of({ namespace: c.ref.namespace })],
});

export const createFunction: CreateFunction = async (context) => {
  const { backbone } = context;
  const store = await openCatalogStore(backbone);
  // Contents are large; a few recent digests serve the plans being written.
  const contents = new Map<string, Promise<CatalogContent>>();
  const contentOf = (digest: string): Promise<CatalogContent> => {
    let entry = contents.get(digest);
    if (entry === undefined) {
      entry = fetchCatalogContent(store, digest);
      entry.catch(() => contents.delete(digest));
      contents.set(digest, entry);
      for (const oldest of contents.keys()) {
        if (contents.size <= 4) break;
        contents.delete(oldest);
      }
    }
    return entry;
  };
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
      const planned = new Set(
        installPlans.filter((ip) => ip.status?.plan !== undefined).map((ip) => ip.metadata.name),
      );
      // Manifests are read only for plans whose steps are still to be written.
      const manifests = new Map<string, PlannedBundle['manifests'] | Error>();
      for (const group of record === undefined ? [] : planGroups(namespace, record.bundles)) {
        if (planned.has(group.name)) continue;
        for (const b of group.bundles) {
          try {
            if (b.catalogDigest === null) {
              throw new Error(
                `catalog ${b.catalog.namespace}/${b.catalog.name} has no stored index`,
              );
            }
            const content = (await contentOf(b.catalogDigest)).get(b.package, b.name);
            if (content === undefined) {
              throw new Error(
                `catalog ${b.catalog.namespace}/${b.catalog.name} has no manifests for bundle ${b.name}`,
              );
            }
            manifests.set(b.name, decodeBundleManifests(content));
          } catch (error) {
            manifests.set(b.name, error as Error);
          }
        }
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
      };
    },
    decide: decidePlan,
    apply: (writes, work) => executeWrites(work.client, writes, fieldManager),
  };
  return { definitions: [definition] };
};
