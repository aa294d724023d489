// The component labels (shared/api/component-labels.ts) a plan's objects get when it writes
// them: those the operator function's adoption would add a moment later, each with a patch and a
// mirror change that wakes every trigger of its kind. A CSV gets its own and those of the
// Subscriptions that name it current (they name it installed once it exists) or installed; what
// it owns (by owner reference or owner labels) and the CRDs it owns get the CSV's. Only labels
// adoption adds are set here, so it still decides alone which objects lose one; a Subscription
// the mirror does not show naming the CSV yet gives none, and adoption labels as before. Pure.
import type { Step, Subscription } from '../../../shared/api/index.js';
import {
  componentLabelKeys,
  componentLabels,
  subscriptionLabelKey,
} from '../../../shared/api/component-labels.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import { manifestOf } from '../../../shared/install-plan/index.js';

/** What a pass knows of its CSVs' component labels. */
export interface PlanComponents {
  /** The component labels of CSV `csv`, which the objects it owns get too. */
  ofCsv(csv: string): Record<string, string>;
  /** Whether CSV `csv` owns CRD `crd` (its spec.customresourcedefinitions.owned). */
  ownsCrd(csv: string, crd: string): boolean;
}

interface OwnedCrds {
  spec?: { customresourcedefinitions?: { owned?: readonly { name?: string }[] } };
}

/**
 * The component labels of a plan's CSVs: `csvs` those that exist, `steps` the plan's (a CSV not
 * created yet is read from its step), `subscriptions` the namespace's.
 */
export function planComponents(
  namespace: string,
  steps: readonly Step[],
  csvs: ReadonlyMap<string, KubeObject>,
  subscriptions: readonly Subscription[],
): PlanComponents {
  const keys = new Map<string, Set<string>>();
  const keysOf = (csv: string): Set<string> => {
    let found = keys.get(csv);
    if (found === undefined) {
      found = new Set(componentLabelKeys(csvs.get(csv)?.metadata.labels));
      keys.set(csv, found);
    }
    return found;
  };
  for (const sub of subscriptions) {
    const key = subscriptionLabelKey(sub.spec.name, namespace);
    if (key === undefined) continue;
    for (const csv of [sub.status?.currentCSV, sub.status?.installedCSV])
      if (csv !== undefined && csv !== '') keysOf(csv).add(key);
  }
  const owned = new Map<string, ReadonlySet<string>>();
  const ownedBy = (csv: string): ReadonlySet<string> => {
    let names = owned.get(csv);
    if (names === undefined) {
      names = new Set(
        (definitionOf(csv, steps, csvs)?.spec?.customresourcedefinitions?.owned ?? []).flatMap(
          (d) => (d.name === undefined ? [] : [d.name]),
        ),
      );
      owned.set(csv, names);
    }
    return names;
  };
  return {
    ofCsv: (csv) => componentLabels(keysOf(csv)),
    ownsCrd: (csv, crd) => keysOf(csv).size > 0 && ownedBy(csv).has(crd),
  };
}

// The CSV as it exists, else as its step writes it.
function definitionOf(
  csv: string,
  steps: readonly Step[],
  csvs: ReadonlyMap<string, KubeObject>,
): OwnedCrds | undefined {
  const existing = csvs.get(csv);
  if (existing !== undefined) return existing as OwnedCrds;
  const i = steps.findIndex(
    (step) => step.resolving === csv && step.resource.kind === 'ClusterServiceVersion',
  );
  const step = steps[i];
  if (step === undefined) return undefined;
  try {
    return manifestOf(step.resource, i) as OwnedCrds;
  } catch {
    return undefined; // the CSV's step reports its bad manifest
  }
}
