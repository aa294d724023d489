// OperatorConditions (spec §1, §2.2, §13), pure. Upstream runs three pieces, reproduced here:
// - the generator (run in the CSV namespace pass): one OperatorCondition
//   (operators.coreos.com/v2) per non-copied CSV, same name and namespace, controlled by the
//   CSV, listing the strategy's deployments and service accounts;
// - the OperatorCondition controller: a same-named Role (get/update/patch on that one
//   OperatorCondition) and RoleBinding for those service accounts, OPERATOR_CONDITION_NAME in
//   the listed deployments the CSV owns, and spec.conditions mirrored into status.conditions
//   with observedGeneration;
// - the upgrade gate the CSV lifecycle applies: a CSV replacing one whose condition is not
//   Upgradeable stays Pending.
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import { kubeTimestamp } from './certificates.js';
import { canonicalJson } from './hash.js';

/** The OperatorCondition version olmq writes (upstream's storage version). */
export const operatorConditionApiVersion = 'operators.coreos.com/v2';
/** The environment variable naming an operator's OperatorCondition. */
export const operatorConditionEnvVar = 'OPERATOR_CONDITION_NAME';
/** The condition type OLM reads. */
export const upgradeableCondition = 'Upgradeable';

/** A metav1.Condition as OperatorConditions carry them. */
export interface ConditionEntry {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/** An OperatorCondition as the decisions read it. */
export interface OperatorConditionObject extends KubeObject {
  spec?: {
    serviceAccounts?: string[];
    deployments?: string[];
    overrides?: ConditionEntry[];
    conditions?: ConditionEntry[];
  };
  status?: { conditions?: ConditionEntry[] };
}

interface StrategySpecLike {
  deployments?: { name?: unknown }[];
  permissions?: { serviceAccountName?: unknown }[];
  clusterPermissions?: { serviceAccountName?: unknown }[];
}

function strategySpecOf(csv: KubeObject): StrategySpecLike {
  const spec = (csv['spec'] ?? {}) as { install?: { spec?: StrategySpecLike } };
  return spec.install?.spec ?? {};
}

const named = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** Service accounts of the CSV's strategy, clusterPermissions first; `default` when none (upstream). */
export function conditionServiceAccounts(csv: KubeObject): string[] {
  const spec = strategySpecOf(csv);
  const list = (entries: unknown): { serviceAccountName?: unknown }[] =>
    Array.isArray(entries) ? (entries as { serviceAccountName?: unknown }[]) : [];
  const accounts = [...list(spec.clusterPermissions), ...list(spec.permissions)]
    .map((p) => p.serviceAccountName)
    .filter(named);
  return accounts.length === 0 ? ['default'] : accounts;
}

/** Deployment names of the CSV's strategy. */
export function conditionDeployments(csv: KubeObject): string[] {
  const deployments = strategySpecOf(csv).deployments;
  return (Array.isArray(deployments) ? deployments : []).map((d) => d.name).filter(named);
}

/** Whether the condition says anything about Upgradeable (override, spec or status). */
export function mentionsUpgradeable(condition: OperatorConditionObject): boolean {
  return [
    ...(condition.spec?.overrides ?? []),
    ...(condition.spec?.conditions ?? []),
    ...(condition.status?.conditions ?? []),
  ].some((c) => c.type === upgradeableCondition);
}

/**
 * Upstream's isOperatorUpgradeable for the CSV owning `condition`: undefined when an upgrade may
 * proceed, else why not. An Upgradeable override wins; otherwise the status condition counts,
 * and only when it reflects the current generation.
 */
export function notUpgradeable(condition: OperatorConditionObject | undefined): string | undefined {
  if (condition === undefined) return undefined;
  const override = (condition.spec?.overrides ?? []).find((c) => c.type === upgradeableCondition);
  if (override !== undefined) {
    return override.status === 'True'
      ? undefined
      : `The operator is not upgradeable: ${override.message ?? ''}`;
  }
  const current = (condition.status?.conditions ?? []).find((c) => c.type === upgradeableCondition);
  if (current === undefined) return undefined;
  if ((current.observedGeneration ?? 0) !== (condition.metadata.generation ?? 0)) {
    return `The operatorcondition status ${JSON.stringify(current.type)}=${JSON.stringify(current.status)} is outdated`;
  }
  if (current.status === 'False')
    return `The operator is not upgradeable: ${current.message ?? ''}`;
  return undefined;
}

/** What one OperatorCondition pass reads: the condition of one name, and what hangs off it. */
export interface OperatorConditionSnapshot {
  namespace: string;
  name: string;
  now: Date;
  condition?: OperatorConditionObject;
  role?: KubeObject;
  roleBinding?: KubeObject;
  /** The deployments the condition lists that exist. */
  deployments: KubeObject[];
}

type OwnerReference = NonNullable<KubeObject['metadata']['ownerReferences']>[number];

function controllerRef(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: false,
  };
}

const ownedBy = (object: KubeObject, owner: KubeObject): boolean =>
  (object.metadata.ownerReferences ?? []).some((r) => r.uid === owner.metadata.uid);

const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

const live = (csv: KubeObject): boolean =>
  csv.metadata.deletionTimestamp === undefined &&
  csv.metadata.labels?.['olm.copiedFrom'] === undefined;

/** The generator's write for the CSV's OperatorCondition, or undefined when it is as wanted. */
function generatorWrite(
  csv: KubeObject,
  existing: OperatorConditionObject | undefined,
): Write | undefined {
  const owners = [controllerRef(csv)];
  const deployments = conditionDeployments(csv);
  const serviceAccounts = conditionServiceAccounts(csv);
  if (existing === undefined) {
    return {
      op: 'create',
      object: {
        apiVersion: operatorConditionApiVersion,
        kind: 'OperatorCondition',
        metadata: {
          name: csv.metadata.name ?? '',
          namespace: csv.metadata.namespace ?? '',
          ownerReferences: owners,
        },
        spec: { deployments, serviceAccounts },
      },
    };
  }
  if (
    sameJson(existing.metadata.ownerReferences ?? [], owners) &&
    sameJson(existing.spec?.deployments ?? [], deployments) &&
    sameJson(existing.spec?.serviceAccounts ?? [], serviceAccounts)
  ) {
    return undefined;
  }
  return {
    op: 'update',
    object: {
      ...existing,
      metadata: { ...existing.metadata, ownerReferences: owners },
      spec: { ...existing.spec, deployments, serviceAccounts },
    },
  };
}

const rbacApi = 'rbac.authorization.k8s.io/v1';
const managedLabels = { 'olm.managed': 'true' };

/** The rules of the Role letting an operator read and update its OperatorCondition `name`. */
function conditionRules(name: string): Record<string, string[]>[] {
  return [
    {
      apiGroups: ['operators.coreos.com'],
      resources: ['operatorconditions'],
      resourceNames: [name],
      verbs: ['get', 'update', 'patch'],
    },
  ];
}

/** Whether a Role has the rules its OperatorCondition (of the same name) gives it. */
export function roleAsWanted(role: KubeObject): boolean {
  return sameJson(role['rules'] ?? [], conditionRules(role.metadata.name ?? ''));
}

function roleWrites(condition: OperatorConditionObject, existing: KubeObject | undefined): Write[] {
  const name = condition.metadata.name ?? '';
  const rules = conditionRules(name);
  const owners = [controllerRef(condition)];
  if (existing === undefined) {
    return [
      {
        op: 'create',
        object: {
          apiVersion: rbacApi,
          kind: 'Role',
          metadata: {
            name,
            namespace: condition.metadata.namespace ?? '',
            labels: managedLabels,
            ownerReferences: owners,
          },
          rules,
        },
      },
    ];
  }
  if (ownedBy(existing, condition) && sameJson(existing['rules'] ?? [], rules)) return [];
  return takeOver(existing, owners, { rules });
}

/** `existing` updated to be managed by and owned as intended, with `content` in place. */
function takeOver(
  existing: KubeObject,
  ownerReferences: NonNullable<KubeObject['metadata']['ownerReferences']>,
  content: Record<string, unknown>,
): Write[] {
  const metadata = {
    ...existing.metadata,
    labels: { ...existing.metadata.labels, ...managedLabels },
    ownerReferences,
  };
  return [{ op: 'update', object: { ...existing, metadata, ...content } }];
}

function roleBindingWrites(
  condition: OperatorConditionObject,
  existing: KubeObject | undefined,
): Write[] {
  const name = condition.metadata.name ?? '';
  const namespace = condition.metadata.namespace ?? '';
  // No namespace on the subjects, as upstream: a RoleBinding's own namespace is implied.
  const subjects = (condition.spec?.serviceAccounts ?? []).map((sa) => ({
    kind: 'ServiceAccount',
    apiGroup: '',
    name: sa,
  }));
  const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name };
  const intended: KubeObject = {
    apiVersion: rbacApi,
    kind: 'RoleBinding',
    metadata: {
      name,
      namespace,
      labels: managedLabels,
      ownerReferences: [controllerRef(condition)],
    },
    subjects,
    roleRef,
  };
  if (existing === undefined) return [{ op: 'create', object: intended }];
  if (!sameJson(existing['roleRef'], roleRef)) {
    // roleRef is immutable: replace the binding rather than fail on every pass.
    return [
      {
        op: 'delete',
        ref: { apiVersion: rbacApi, kind: 'RoleBinding', namespace, name },
        ...(existing.metadata.uid === undefined
          ? {}
          : { preconditions: { uid: existing.metadata.uid } }),
      },
      { op: 'create', object: intended },
    ];
  }
  if (ownedBy(existing, condition) && sameJson(existing['subjects'] ?? [], subjects)) return [];
  return takeOver(existing, intended.metadata.ownerReferences ?? [], { subjects });
}

interface ContainerLike {
  env?: { name: string; value?: string }[];
  [key: string]: unknown;
}

/** The containers of a Deployment with OPERATOR_CONDITION_NAME=`name`, or undefined when all have it. */
export function withConditionEnv(deployment: KubeObject, name: string): KubeObject | undefined {
  const spec = (deployment['spec'] ?? {}) as {
    template?: { spec?: { containers?: ContainerLike[] } };
  };
  const containers = spec.template?.spec?.containers ?? [];
  let changed = false;
  const next = containers.map((c) => {
    const env = c.env ?? [];
    const i = env.findIndex((e) => e.name === operatorConditionEnvVar);
    if (i >= 0 && env[i]?.value === name) return c;
    changed = true;
    const entry = { name: operatorConditionEnvVar, value: name };
    return { ...c, env: i >= 0 ? env.map((e, j) => (j === i ? entry : e)) : [...env, entry] };
  });
  if (!changed) return undefined;
  return {
    ...deployment,
    spec: {
      ...spec,
      template: { ...spec.template, spec: { ...spec.template?.spec, containers: next } },
    },
  };
}

/** upstream's meta.SetStatusCondition onto a copy of `conditions`. */
function setCondition(
  conditions: readonly ConditionEntry[],
  entry: ConditionEntry,
  now: Date,
): ConditionEntry[] {
  const at = kubeTimestamp(now);
  const i = conditions.findIndex((c) => c.type === entry.type);
  if (i < 0)
    return [...conditions, { ...entry, lastTransitionTime: entry.lastTransitionTime ?? at }];
  const current = conditions[i] as ConditionEntry;
  const next: ConditionEntry = {
    ...current,
    status: entry.status,
    ...(entry.reason === undefined ? {} : { reason: entry.reason }),
    ...(entry.message === undefined ? {} : { message: entry.message }),
    ...(entry.observedGeneration === undefined
      ? {}
      : { observedGeneration: entry.observedGeneration }),
  };
  if (current.status !== entry.status) next.lastTransitionTime = entry.lastTransitionTime ?? at;
  return conditions.map((c, j) => (j === i ? next : c));
}

/** The condition's status with spec.conditions mirrored (observedGeneration set), or undefined when current. */
export function mirroredStatus(
  condition: OperatorConditionObject,
  now: Date,
): OperatorConditionObject['status'] | undefined {
  const generation = condition.metadata.generation ?? 0;
  let conditions = condition.status?.conditions ?? [];
  let changed = false;
  for (const wanted of condition.spec?.conditions ?? []) {
    const have = conditions.find((c) => c.type === wanted.type);
    if (have?.status === wanted.status && have.observedGeneration === generation) continue;
    conditions = setCondition(conditions, { ...wanted, observedGeneration: generation }, now);
    changed = true;
  }
  return changed ? { ...condition.status, conditions } : undefined;
}

/**
 * The generator's writes for a namespace: a condition for each live (not copied, not deleted)
 * CSV that lacks one, and the CSV's owner reference, deployments and service accounts put back
 * on one that differs. `conditions` are the namespace's OperatorConditions by name.
 */
export function generatorWrites(
  csvs: readonly KubeObject[],
  conditions: ReadonlyMap<string, KubeObject>,
): Write[] {
  return csvs.flatMap((csv) => {
    if (!live(csv)) return [];
    const write = generatorWrite(csv, conditions.get(csv.metadata.name ?? ''));
    return write === undefined ? [] : [write];
  });
}

/** Pure: the writes that bring one OperatorCondition's Role, RoleBinding, deployments and status up to date. */
export function decideOperatorCondition(s: OperatorConditionSnapshot): Write[] {
  const condition = s.condition;
  if (condition === undefined || condition.metadata.deletionTimestamp !== undefined) return [];
  const writes: Write[] = [
    ...roleWrites(condition, s.role),
    ...roleBindingWrites(condition, s.roleBinding),
  ];
  const listed = new Set(condition.spec?.deployments ?? []);
  for (const d of s.deployments) {
    if (!listed.has(d.metadata.name ?? '')) continue;
    // Only deployments of the CSV this condition belongs to (upstream checks the owner's name).
    const owner = (d.metadata.ownerReferences ?? []).find(
      (r) => r.kind === 'ClusterServiceVersion',
    );
    if (owner?.name !== s.name) continue;
    const updated = withConditionEnv(d, s.name);
    if (updated !== undefined) writes.push({ op: 'update', object: updated });
  }
  const status = mirroredStatus(condition, s.now);
  if (status !== undefined) writes.push({ op: 'updateStatus', object: { ...condition, status } });
  return writes;
}

/**
 * Why `csv` may not take over from the CSV its spec.replaces names yet (that CSV's
 * OperatorCondition is not Upgradeable), or undefined. `conditions` are by name.
 */
export function upgradeBlocked(
  csv: KubeObject,
  csvs: readonly KubeObject[],
  conditions: ReadonlyMap<string, KubeObject> | undefined,
): string | undefined {
  const replaces = (csv['spec'] as { replaces?: unknown } | undefined)?.replaces;
  if (typeof replaces !== 'string' || replaces === csv.metadata.name) return undefined;
  if (!csvs.some((c) => c.metadata.name === replaces)) return undefined;
  return notUpgradeable(conditions?.get(replaces));
}
