// The rbac function's per-CSV decision: the provided-API gate of §4.3 (olm.providedAPIs union
// and difference, InterOperatorGroupOwnerConflict, CannotModifyStaticOperatorGroupProvidedAPIs
// and recovery from them), the per-API ClusterRoles of a Succeeded CSV, and for AllNamespaces
// groups the ClusterRoles/ClusterRoleBindings lifted from the operator's Roles. Pure.
import { CsvPhase, CsvReason, OlmAnnotation } from '../../shared/api/codes.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import {
  apiServiceClusterRoles,
  crdClusterRoles,
  isCopy,
  isGlobal,
  isOwnedBy,
  providedApiMessages,
  providedApisAction,
  providedApisOf,
  roleMatches,
  singletonClusterRole,
  singletonClusterRoleBinding,
  type BindingObject,
  type CsvObject,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import type { OperatorGroupObject } from './types.js';

/** What one CSV's decision reads. */
export interface CsvSnapshot {
  namespace: string;
  name: string;
  /** The CSV, or undefined when it is gone. */
  csv: CsvObject | undefined;
  /** Groups in the CSV's namespace. */
  groups: readonly OperatorGroupObject[];
  allGroups: readonly OperatorGroupObject[];
  /** Owned CRDs and APIServices by name (`<plural>.<group>`, `<version>.<group>`), when they exist. */
  apiObjects: ReadonlyMap<string, KubeObject>;
  /** Existing ClusterRoles by name (per-API roles, lifted roles). */
  clusterRoles: ReadonlyMap<string, RoleObject>;
  /** Existing ClusterRoleBindings by name. */
  clusterRoleBindings: ReadonlyMap<string, BindingObject>;
  /** Roles and RoleBindings in the CSV's namespace carrying its owner labels. */
  ownedRoles: readonly RoleObject[];
  ownedRoleBindings: readonly BindingObject[];
  /** Cluster-scoped RBAC carrying the CSV's owner labels (cleaned up when the CSV goes). */
  labelledClusterRbac: readonly KubeObject[];
  now: string;
}

/**
 * The writes for one CSV and whether its groups must look again. A CSV that writes its group's
 * olm.providedAPIs is not requeued: the write comes back through the mirror as a change of the
 * group, whose sync requeues the group's providers (groups.ts) once the mirror shows it.
 */
export interface CsvDecision {
  writes: Write[];
  requeueGroups: boolean;
}

const csvApiVersion = 'operators.coreos.com/v1alpha1';
const maxConditions = 20;

/** The CSV with a new phase/reason/message, a condition appended when they change (newest 20 kept). */
export function withPhase(
  csv: CsvObject,
  phase: string,
  reason: string,
  message: string,
  now: string,
): CsvObject {
  const status = csv.status ?? {};
  const changed = status.phase !== phase || status.reason !== reason;
  const conditions = status.conditions ?? [];
  const entry = { phase, reason, message, lastUpdateTime: now, lastTransitionTime: now };
  return {
    ...csv,
    status: {
      ...status,
      phase,
      reason,
      message,
      lastUpdateTime: now,
      ...(status.phase !== phase || status.lastTransitionTime === undefined
        ? { lastTransitionTime: now }
        : {}),
      conditions: changed ? [...conditions, entry].slice(-maxConditions) : conditions,
    },
  };
}

/** The group a CSV belongs to: the only group of its namespace, named by its annotation. */
export function groupOfCsv(
  csv: CsvObject,
  groups: readonly OperatorGroupObject[],
): OperatorGroupObject | undefined {
  if (groups.length !== 1) return undefined;
  const group = groups[0];
  if (group === undefined) return undefined;
  const named = csv.metadata.annotations?.[OlmAnnotation.OperatorGroup];
  return named === group.metadata.name ? group : undefined;
}

const recoveries: Readonly<Record<string, string>> = {
  [CsvReason.InterOperatorGroupOwnerConflict]: providedApiMessages.conflictResolved,
  [CsvReason.CannotModifyStaticOperatorGroupProvidedAPIs]: providedApiMessages.staticResolved,
};

/**
 * What decideCsv tells apart of a CSV's phase and reason: Succeeded, Failed and why, a reason
 * that keeps a conflict's first failure, or anything else. The rbac CSV trigger wakes the CSV
 * on a change of it, not on every phase an install passes through.
 */
export function csvPhaseView(csv: CsvObject): string {
  const phase = csv.status?.phase ?? CsvPhase.None;
  const reason = csv.status?.reason ?? '';
  if (phase === CsvPhase.Succeeded) return phase;
  if (phase === CsvPhase.Failed) return `${phase}:${reason}`;
  return reason === CsvReason.InterOperatorGroupOwnerConflict ? `other:${reason}` : 'other';
}

/** Decides one CSV. */
export function decideCsv(s: CsvSnapshot): CsvDecision {
  const d: CsvDecision = { writes: [], requeueGroups: false };
  const csv = s.csv;
  if (csv === undefined) {
    // Gone: its cluster-scoped RBAC goes too (owner labels cannot be garbage collected), and
    // its group's providedAPIs may shrink.
    for (const object of s.labelledClusterRbac) {
      d.writes.push({
        op: 'delete',
        ref: { apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name },
        preconditions: { uid: object.metadata.uid ?? '' },
      });
    }
    d.requeueGroups = true;
    return d;
  }
  if (isCopy(csv)) return d;
  const group = groupOfCsv(csv, s.groups);
  if (group === undefined) return d;
  // The CSV's group annotations must be current before its APIs are judged against it.
  const targets = csv.metadata.annotations?.[OlmAnnotation.TargetNamespaces];
  if (
    targets === undefined ||
    csv.metadata.annotations?.[OlmAnnotation.OperatorNamespace] !== s.namespace
  )
    return d;
  if (csv.metadata['deletionTimestamp'] !== undefined) return d;

  const apis = providedApisOf(csv);
  const action = providedApisAction(apis, group, s.allGroups);
  const phase = csv.status?.phase ?? CsvPhase.None;
  const reason = csv.status?.reason ?? '';
  switch (action.type) {
    case 'setGroupApis':
      d.writes.push({
        op: 'patch',
        ref: {
          apiVersion: 'operators.coreos.com/v1',
          kind: 'OperatorGroup',
          namespace: s.namespace,
          name: group.metadata.name,
        },
        type: 'merge',
        patch: {
          metadata: {
            resourceVersion: group.metadata.resourceVersion,
            annotations: { [OlmAnnotation.ProvidedAPIs]: action.value },
          },
        },
      });
      return d;
    case 'fail':
      // A CSV already failed on a conflict keeps its first reason (upstream checks the conflict reason).
      if (
        reason !== CsvReason.InterOperatorGroupOwnerConflict &&
        !(phase === CsvPhase.Failed && reason === action.reason)
      ) {
        d.writes.push({
          op: 'updateStatus',
          object: withPhase(csv, CsvPhase.Failed, action.reason, action.message, s.now),
        });
      }
      return d;
    case 'none': {
      const recovery = recoveries[reason];
      if (phase === CsvPhase.Failed && recovery !== undefined) {
        d.writes.push({
          op: 'updateStatus',
          object: withPhase(csv, CsvPhase.Pending, CsvReason.RequirementsUnknown, recovery, s.now),
        });
        return d;
      }
    }
  }

  if (phase === CsvPhase.Succeeded) d.writes.push(...perApiRoleWrites(csv, s));
  if (isGlobal(group.status?.namespaces)) d.writes.push(...singletonRbacWrites(csv, s));
  return d;
}

function ensureRole(
  intended: RoleObject,
  existing: RoleObject | undefined,
  ownerUid: string,
): Write[] {
  if (existing === undefined) return [{ op: 'create', object: intended }];
  if (roleMatches(existing, intended) && isOwnedBy(existing, ownerUid)) return [];
  return [
    {
      op: 'update',
      object: {
        ...existing,
        metadata: {
          ...existing.metadata,
          labels: intended.metadata.labels ?? {},
          ownerReferences: intended.metadata.ownerReferences ?? [],
        },
        rules: intended.rules ?? [],
      },
    },
  ];
}

function perApiRoleWrites(csv: CsvObject, s: CsvSnapshot): Write[] {
  const writes: Write[] = [];
  const spec = csv.spec;
  for (const owned of spec?.customresourcedefinitions?.owned ?? []) {
    const crd = s.apiObjects.get(owned.name);
    if (crd === undefined || !owned.name.includes('.')) continue;
    const owner = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: owned.name,
      uid: crd.metadata.uid ?? '',
    };
    for (const role of crdClusterRoles(owned, owner)) {
      writes.push(...ensureRole(role, s.clusterRoles.get(role.metadata.name ?? ''), owner.uid));
    }
  }
  for (const owned of spec?.apiservicedefinitions?.owned ?? []) {
    const name = `${owned.version}.${owned.group}`;
    const svc = s.apiObjects.get(name);
    if (svc === undefined) continue;
    const owner = {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      name,
      uid: svc.metadata.uid ?? '',
    };
    for (const role of apiServiceClusterRoles(owned, owner)) {
      writes.push(...ensureRole(role, s.clusterRoles.get(role.metadata.name ?? ''), owner.uid));
    }
  }
  return writes;
}

// AllNamespaces: each owned Role becomes a ClusterRole and each owned RoleBinding a
// ClusterRoleBinding, created once (upstream ensureSingletonRBAC never updates them).
function singletonRbacWrites(csv: CsvObject, s: CsvSnapshot): Write[] {
  const writes: Write[] = [];
  const uid = csv.metadata.uid ?? '';
  for (const role of s.ownedRoles) {
    if (!isOwnedBy(role, uid) || s.clusterRoles.has(role.metadata.name ?? '')) continue;
    writes.push({ op: 'create', object: singletonClusterRole(role) });
  }
  for (const binding of s.ownedRoleBindings) {
    if (!isOwnedBy(binding, uid) || s.clusterRoleBindings.has(binding.metadata.name ?? ''))
      continue;
    writes.push({ op: 'create', object: singletonClusterRoleBinding(binding) });
  }
  return writes;
}

export { csvApiVersion };
