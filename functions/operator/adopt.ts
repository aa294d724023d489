// Adoption (upstream's AdoptionReconciler), decided for one namespace: which objects get or
// lose an Operator's component label.
// - Each Subscription is a component of the Operator `<package>.<namespace>`, and so are its
//   installed CSV and its latest InstallPlan; older InstallPlans labelled for it lose the label.
// - A CSV's component labels are projected onto what it owns: objects with an owner reference
//   to it, objects with its owner labels (olm.owner, olm.owner.namespace, olm.owner.kind), and
//   the CRDs it owns. Copied CSVs are never components (a label found on one is removed).
// Only labels are added or removed (merge patches), so writes never conflict with other writers.
import type { KubeObject, ObjectRef } from '../../shared/kube/client.js';
import { codes } from '../../shared/api/index.js';
import { componentLabelKeys, subscriptionLabelKey } from '../../shared/api/component-labels.js';

/** What one namespace's adoption reads. */
export interface AdoptionSnapshot {
  namespace: string;
  subscriptions: readonly KubeObject[];
  installPlans: readonly KubeObject[];
  csvs: readonly KubeObject[];
  /** Objects that may be owned by the namespace's CSVs (any kind, any namespace). */
  candidates: readonly KubeObject[];
  /** The CRDs the namespace's CSVs own (spec.customresourcedefinitions.owned), as found. */
  crds: readonly KubeObject[];
}

/** One label patch: labels to add (value "") or remove (null). */
export interface LabelPatch {
  ref: ObjectRef;
  labels: Record<string, string | null>;
}

const refOf = (o: KubeObject): ObjectRef => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  namespace: o.metadata.namespace,
  name: o.metadata.name,
});

const keyOf = (o: KubeObject): string =>
  `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

const isCopy = (csv: KubeObject): boolean =>
  csv.metadata.labels?.[codes.OlmLabel.CopiedFrom] !== undefined;

/** Whether `object` is owned by `csv`: by owner reference (uid) or by owner labels. */
export function ownedBy(object: KubeObject, csv: KubeObject): boolean {
  const uid = csv.metadata.uid;
  if (uid !== undefined && (object.metadata.ownerReferences ?? []).some((r) => r.uid === uid))
    return true;
  const l = object.metadata.labels ?? {};
  return (
    l[codes.OlmLabel.OwnerKind] === 'ClusterServiceVersion' &&
    l[codes.OlmLabel.Owner] === csv.metadata.name &&
    l[codes.OlmLabel.OwnerNamespace] === csv.metadata.namespace
  );
}

interface OwnedCrd {
  name?: string;
}

/** The label patches of one namespace's adoption, one per object that changes. */
export function decideAdoption(s: AdoptionSnapshot): LabelPatch[] {
  const patches = new Map<string, LabelPatch>();
  const change = (o: KubeObject, key: string, add: boolean): void => {
    const has = o.metadata.labels?.[key] !== undefined;
    if (has === add) return;
    const k = keyOf(o);
    const p = patches.get(k) ?? { ref: refOf(o), labels: {} };
    p.labels[key] = add ? '' : null;
    patches.set(k, p);
  };
  const plansByName = new Map(s.installPlans.map((p) => [p.metadata.name ?? '', p]));
  // Labels each CSV gets from the Subscriptions that installed it.
  const csvKeys = new Map<string, Set<string>>();
  // InstallPlans to keep per label key (the latest of each Subscription).
  const latestPlans = new Map<string, Set<string>>();
  for (const sub of s.subscriptions) {
    const spec = sub['spec'] as { name?: string } | undefined;
    const status = sub['status'] as
      { installedCSV?: string; installPlanRef?: { name?: string; namespace?: string } } | undefined;
    const key = subscriptionLabelKey(spec?.name, s.namespace);
    if (key === undefined) continue;
    change(sub, key, true);
    const installed = status?.installedCSV;
    if (installed !== undefined && installed !== '') {
      const keys = csvKeys.get(installed) ?? new Set<string>();
      keys.add(key);
      csvKeys.set(installed, keys);
    }
    const planName = status?.installPlanRef?.name;
    if (planName !== undefined) {
      const latest = latestPlans.get(key) ?? new Set<string>();
      latest.add(planName);
      latestPlans.set(key, latest);
      const plan = plansByName.get(planName);
      if (plan !== undefined) change(plan, key, true);
    }
  }
  // Older InstallPlans lose the label of a Subscription that moved on.
  for (const plan of s.installPlans) {
    for (const key of componentLabelKeys(plan.metadata.labels)) {
      const latest = latestPlans.get(key);
      if (latest !== undefined && !latest.has(plan.metadata.name ?? '')) change(plan, key, false);
    }
  }
  const crdsByName = new Map(s.crds.map((c) => [c.metadata.name ?? '', c]));
  for (const csv of s.csvs) {
    if (isCopy(csv)) {
      for (const key of componentLabelKeys(csv.metadata.labels)) change(csv, key, false);
      continue;
    }
    const keys = new Set([
      ...componentLabelKeys(csv.metadata.labels),
      ...(csvKeys.get(csv.metadata.name ?? '') ?? []),
    ]);
    if (keys.size === 0) continue;
    for (const key of keys) change(csv, key, true);
    const owned = (
      (csv['spec'] as { customresourcedefinitions?: { owned?: OwnedCrd[] } } | undefined)
        ?.customresourcedefinitions?.owned ?? []
    ).flatMap((d) => {
      const crd = crdsByName.get(d.name ?? '');
      return crd === undefined ? [] : [crd];
    });
    for (const component of [...s.candidates.filter((c) => ownedBy(c, csv)), ...owned])
      for (const key of keys) change(component, key, true);
  }
  return [...patches.values()];
}
