// What a chaos run left behind, counted the same way by the chaos benches and tests: CSVs that
// did not succeed (lost), things made twice (InstallPlans, CSVs, RBAC), and dead letters.
import { assets } from '../../shared/bus/subjects.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';

const v1alpha1 = 'operators.coreos.com/v1alpha1';
const rbacApi = 'rbac.authorization.k8s.io/v1';

export type Plan = KubeObject & {
  spec?: { generation?: number; clusterServiceVersionNames?: string[] };
};
export type Csv = KubeObject & { status?: { phase?: string } };

/** The counts of a chaos run; every number but `succeeded` and `installPlans` should be 0. */
export interface ChaosOutcome {
  /** Expected CSVs (namespace/name) in phase Succeeded. */
  succeeded: number;
  /** Expected CSVs not Succeeded (or missing), as namespace/name. */
  lost: string[];
  /** CSVs in the namespaces looked at that nobody expected (copies aside). */
  extraCsvs: string[];
  installPlans: number;
  /** Plans beyond the first of one namespace and Subscription generation (spec.generation). */
  duplicatedPlanGenerations: number;
  /** Plans beyond the first naming the same CSV in one namespace. */
  duplicatedPlannedCsvs: number;
  /**
   * RBAC objects of a CSV's (labelled olm.owner.kind=ClusterServiceVersion) beyond the first with the same kind,
   * namespace, labels and content (rules, roleRef, subjects): one grant created twice under
   * two names.
   */
  duplicatedRbac: string[];
}

/** What the outcome is counted from: the cluster's CSVs, InstallPlans and RBAC (with kind). */
export interface ChaosObjects {
  csvs: readonly Csv[];
  plans: readonly Plan[];
  rbac: readonly KubeObject[];
}

/**
 * Counts the outcome for the CSVs `expected` (namespace/name): plans, CSVs and namespaced RBAC
 * are looked at in the expected CSVs' namespaces, cluster RBAC everywhere.
 */
export async function chaosOutcome(
  client: KubeClient,
  expected: readonly string[],
): Promise<ChaosOutcome> {
  const rbac: KubeObject[] = [];
  for (const kind of ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']) {
    // List items carry no kind of their own.
    const items = (await client.list({ apiVersion: rbacApi, kind })).items;
    rbac.push(...items.map((o) => ({ ...o, kind })));
  }
  return countOutcome(expected, {
    csvs: (await client.list<Csv>({ apiVersion: v1alpha1, kind: 'ClusterServiceVersion' })).items,
    plans: (await client.list<Plan>({ apiVersion: v1alpha1, kind: 'InstallPlan' })).items,
    rbac,
  });
}

/** The expected CSVs (namespace/name) not Succeeded yet: one list, cheap enough to poll. */
export async function notSucceeded(
  client: KubeClient,
  expected: readonly string[],
): Promise<string[]> {
  const csvs = (await client.list<Csv>({ apiVersion: v1alpha1, kind: 'ClusterServiceVersion' }))
    .items;
  return countOutcome(expected, { csvs, plans: [], rbac: [] }).lost;
}

/** chaosOutcome's counting, from objects already read. */
export function countOutcome(expected: readonly string[], objects: ChaosObjects): ChaosOutcome {
  const namespaces = new Set(expected.map((e) => e.split('/')[0] ?? ''));
  const within = <T extends KubeObject>(items: readonly T[]): T[] =>
    items.filter((o) => namespaces.has(o.metadata.namespace ?? ''));
  const csvs = within(objects.csvs);
  const plans = within(objects.plans);
  const ref = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
  const succeeded = new Set(csvs.filter((c) => c.status?.phase === 'Succeeded').map(ref));
  const originals = csvs.filter((c) => c.metadata.labels?.['olm.copiedFrom'] === undefined);
  const rbac = objects.rbac.filter(
    (o) =>
      // A CSV's grants only: an OperatorGroup's three aggregated ClusterRoles are alike (no
      // rules) until its operators provide APIs, by design.
      o.metadata.labels?.['olm.owner.kind'] === 'ClusterServiceVersion' &&
      (o.metadata.namespace === undefined || namespaces.has(o.metadata.namespace)),
  );
  return {
    succeeded: expected.filter((e) => succeeded.has(e)).length,
    lost: expected.filter((e) => !succeeded.has(e)),
    extraCsvs: originals.map(ref).filter((r) => !expected.includes(r)),
    installPlans: plans.length,
    duplicatedPlanGenerations: beyondFirst(
      plans.map((p) => `${p.metadata.namespace ?? ''}/${p.spec?.generation ?? '?'}`),
    ),
    duplicatedPlannedCsvs: beyondFirst(
      plans.flatMap((p) =>
        (p.spec?.clusterServiceVersionNames ?? []).map((n) => `${p.metadata.namespace ?? ''}/${n}`),
      ),
    ),
    duplicatedRbac: duplicates(rbac, (o) => {
      const { rules, aggregationRule, roleRef, subjects } = o as Record<string, unknown>;
      const labels = Object.entries(o.metadata.labels ?? {}).sort(([a], [b]) => a.localeCompare(b));
      return JSON.stringify([
        o.kind,
        o.metadata.namespace,
        labels,
        rules,
        aggregationRule,
        roleRef,
        subjects,
      ]);
    }).map((o) => `${o.kind ?? ''}/${ref(o)}`),
  };
}

/** Messages in the dead-letter stream (work given up on). */
export async function deadLetterCount(backbone: Backbone): Promise<number> {
  return (await backbone.jsm.streams.info(assets.deadStream)).state.messages;
}

function beyondFirst(keys: readonly string[]): number {
  const seen = new Map<string, number>();
  for (const key of keys) seen.set(key, (seen.get(key) ?? 0) + 1);
  return [...seen.values()].reduce((sum, n) => sum + n - 1, 0);
}

/** The items after the first of each group of equal `keyOf`. */
function duplicates<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = keyOf(item);
    if (seen.has(key)) return true;
    seen.add(key);
    return false;
  });
}
