// The rbac function's OperatorGroup decision (upstream syncOperatorGroups), for every group of
// one namespace at once: the MultipleOperatorGroup condition, the service account, target
// namespaces, member CSV annotations, the three aggregated ClusterRoles, provided-API pruning,
// and which namespaces and CSVs must look at the group again. Pure.
import {
  ConditionStatus,
  CsvPhase,
  CsvReason,
  OlmAnnotation,
  OlmLabel,
  OperatorGroupConditionReason,
  OperatorGroupConditionType,
} from '../../shared/api/codes.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import {
  aggregateClusterRole,
  groupProvidedApis,
  isCopy,
  isGlobal,
  memberAnnotations,
  memberAnnotationsDiffer,
  namespacesChanged,
  providedApisOf,
  prunedGroupApis,
  roleMatches,
  roleSuffixes,
  surfaceTargets,
  targetNamespaces,
  targetSelectionOf,
  type ApiSet,
  type CsvObject,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import type { GroupCondition, OperatorGroupObject } from './types.js';

/** What one group's sync needs beyond the group itself. */
export interface GroupInputs {
  /** Names of the namespaces its selector matched (selector groups only). */
  matched: readonly string[];
  /** Its service account, when spec.serviceAccountName names one that exists. */
  serviceAccount: KubeObject | undefined;
  /** Names of the namespaces carrying its olm.operatorgroup.uid label, from the API. */
  labelled: readonly string[];
}

/** Everything the groups of one namespace are decided from. */
export interface GroupsSnapshot {
  namespace: string;
  groups: readonly OperatorGroupObject[];
  inputs: ReadonlyMap<string, GroupInputs>;
  /** Every group of the cluster (for intersections). */
  allGroups: readonly OperatorGroupObject[];
  /** CSVs of this namespace. */
  csvs: readonly CsvObject[];
  /** Non-copied CSVs in the namespaces of groups intersecting one of these. */
  intersectingCsvs: readonly CsvObject[];
  /** Existing aggregated ClusterRoles by name. */
  aggregateRoles: ReadonlyMap<string, RoleObject>;
  /** Aggregated ClusterRoles labelled as owned by a group of this namespace. */
  ownedAggregateRoles: readonly RoleObject[];
  now: string;
}

/** The writes of a groups sync, and what to look at next. */
export interface GroupsDecision {
  writes: Write[];
  /** Namespaces whose group labels disagree with the mirrored targets. */
  namespaces: string[];
  /** CSVs (namespace, name) to reconcile again. */
  csvs: { namespace: string; name: string }[];
  /** A group vanished: sweep namespace labels of groups that no longer exist. */
  sweepNamespaceLabels: boolean;
  /** Look again later (a missing service account may appear). */
  requeueAfterMs?: number;
}

const ogApiVersion = 'operators.coreos.com/v1';
const csvApiVersion = 'operators.coreos.com/v1alpha1';

/** Status messages of OperatorGroup conditions, as upstream words them. */
export const groupConditionMessages = {
  multiple: 'Multiple OperatorGroup found in the same namespace',
  serviceAccountNotFound: (name: string) => `ServiceAccount ${name} not found`,
} as const;

function setCondition(
  conditions: readonly GroupCondition[],
  next: Omit<GroupCondition, 'lastTransitionTime'>,
  now: string,
): GroupCondition[] {
  const current = conditions.find((c) => c.type === next.type);
  const lastTransitionTime =
    current !== undefined && current.status === next.status ? current.lastTransitionTime : now;
  return [...conditions.filter((c) => c.type !== next.type), { ...next, lastTransitionTime }];
}

function sameConditions(a: readonly GroupCondition[], b: readonly GroupCondition[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((c) => {
    const o = b.find((x) => x.type === c.type);
    return (
      o !== undefined && o.status === c.status && o.reason === c.reason && o.message === c.message
    );
  });
}

/** Decides every group of one namespace. */
export function decideGroups(s: GroupsSnapshot): GroupsDecision {
  const decision: GroupsDecision = {
    writes: [],
    namespaces: [],
    csvs: [],
    sweepNamespaceLabels: false,
  };
  const liveNames = new Set(s.groups.map((g) => g.metadata.name));

  // Roles of groups that are gone (upstream operatorGroupDeleted).
  for (const role of s.ownedAggregateRoles) {
    const owner = role.metadata.labels?.[OlmLabel.Owner] ?? '';
    if (liveNames.has(owner)) continue;
    decision.writes.push({
      op: 'delete',
      ref: { apiVersion: role.apiVersion, kind: 'ClusterRole', name: role.metadata.name },
      preconditions: { uid: role.metadata.uid ?? '' },
    });
    decision.sweepNamespaceLabels = true;
  }

  for (const group of s.groups) {
    decideGroup(s, group, decision);
  }
  return decision;
}

function decideGroup(s: GroupsSnapshot, group: OperatorGroupObject, d: GroupsDecision): void {
  const inputs = s.inputs.get(group.metadata.name) ?? {
    matched: [],
    serviceAccount: undefined,
    labelled: [],
  };
  const status = { ...group.status };
  let conditions = [...(status.conditions ?? [])];

  // MultipleOperatorGroup on every group while there is more than one.
  if (s.groups.length > 1) {
    conditions = setCondition(
      conditions,
      {
        type: OperatorGroupConditionType.MultipleOperatorGroup,
        status: ConditionStatus.True,
        reason: OperatorGroupConditionReason.MultipleOperatorGroupsFound,
        message: groupConditionMessages.multiple,
      },
      s.now,
    );
  } else {
    conditions = conditions.filter(
      (c) => c.type !== OperatorGroupConditionType.MultipleOperatorGroup,
    );
  }

  // Service account (upstream serviceAccountSyncer).
  const saName = group.spec?.serviceAccountName ?? '';
  let serviceAccountRef = status.serviceAccountRef;
  if (saName === '') {
    serviceAccountRef = undefined;
    conditions = conditions.filter(
      (c) => c.type !== OperatorGroupConditionType.OperatorGroupServiceAccount,
    );
  } else if (inputs.serviceAccount === undefined) {
    conditions = setCondition(
      conditions,
      {
        type: OperatorGroupConditionType.OperatorGroupServiceAccount,
        status: ConditionStatus.True,
        reason: OperatorGroupConditionReason.ServiceAccountNotFound,
        message: groupConditionMessages.serviceAccountNotFound(saName),
      },
      s.now,
    );
    d.requeueAfterMs = 10_000;
  } else {
    const sa = inputs.serviceAccount;
    conditions = conditions.filter(
      (c) => c.type !== OperatorGroupConditionType.OperatorGroupServiceAccount,
    );
    serviceAccountRef = {
      kind: 'ServiceAccount',
      namespace: sa.metadata.namespace,
      name: sa.metadata.name,
      uid: sa.metadata.uid,
      apiVersion: 'v1',
      resourceVersion: sa.metadata.resourceVersion,
    };
    if (sa.metadata.labels?.[OlmLabel.Managed] !== 'true') {
      d.writes.push({
        op: 'patch',
        ref: {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          namespace: sa.metadata.namespace,
          name: sa.metadata.name,
        },
        type: 'merge',
        patch: { metadata: { labels: { [OlmLabel.Managed]: 'true' } } },
      });
    }
  }

  // Targets.
  // An invalid spec ("" in targetNamespaces) throws a non-retryable error naming it.
  const selection = targetSelectionOf(group);
  const targets = targetNamespaces(selection, inputs.matched);
  const targetsChanged = namespacesChanged(targets, status.namespaces);
  const refChanged =
    JSON.stringify(serviceAccountRef ?? null) !== JSON.stringify(status.serviceAccountRef ?? null);
  if (targetsChanged || refChanged || !sameConditions(conditions, status.conditions ?? [])) {
    const next: OperatorGroupObject['status'] = {
      namespaces: targetsChanged ? targets : [...(status.namespaces ?? [])],
      lastUpdated: targetsChanged || status.lastUpdated === undefined ? s.now : status.lastUpdated,
      ...(serviceAccountRef === undefined ? {} : { serviceAccountRef }),
      ...(conditions.length === 0 ? {} : { conditions }),
    };
    d.writes.push({
      op: 'updateStatus',
      object: { ...group, apiVersion: ogApiVersion, kind: 'OperatorGroup', status: next },
    });
    // New targets: nothing else is decided on them (namespace labels, annotations, roles) until
    // the mirror shows them. The status write comes back through the mirror as a change of the
    // group, which syncs this namespace again (see groups-definition.ts).
    if (targetsChanged) return;
  }
  // From here on the targets are the ones the mirror shows.
  const current: OperatorGroupObject = { ...group, status: { ...status, namespaces: targets } };
  d.namespaces.push(...mislabelled(targets, inputs.labelled));

  // Member CSV annotations; with several groups the CSVs fail TooManyOperatorGroups instead.
  const members = s.csvs.filter((c) => !isCopy(c));
  if (s.groups.length === 1) {
    for (const csv of members) {
      if (!memberAnnotationsDiffer(csv.metadata.annotations, current)) continue;
      d.writes.push({
        op: 'patch',
        ref: {
          apiVersion: csvApiVersion,
          kind: 'ClusterServiceVersion',
          namespace: csv.metadata.namespace,
          name: csv.metadata.name,
        },
        type: 'merge',
        patch: {
          metadata: {
            resourceVersion: csv.metadata.resourceVersion,
            annotations: memberAnnotations(current),
          },
        },
      });
    }
  }

  // Aggregated ClusterRoles over the group's APIs and its members'.
  const groupApis = groupProvidedApis(current);
  const memberApis = members.map((csv) => ({
    apis: providedApisOf(csv),
    phase: csv.status?.phase ?? '',
    deleting: csv.metadata['deletionTimestamp'] !== undefined,
  }));
  let apis = groupApis;
  for (const m of memberApis) apis = apis.union(m.apis);
  for (const suffix of roleSuffixes) {
    const intended = aggregateClusterRole(
      { name: group.metadata.name, namespace: group.metadata.namespace ?? '' },
      suffix,
      apis,
    );
    const existing = s.aggregateRoles.get(intended.metadata.name ?? '');
    if (existing === undefined) {
      d.writes.push({ op: 'create', object: intended });
    } else if (!roleMatches(existing, intended)) {
      const { aggregationRule: _old, ...rest } = existing;
      d.writes.push({
        op: 'update',
        object: {
          ...rest,
          metadata: {
            ...existing.metadata,
            labels: { ...existing.metadata.labels, ...intended.metadata.labels },
          },
          ...(intended.aggregationRule === undefined
            ? {}
            : { aggregationRule: intended.aggregationRule }),
        },
      });
    }
  }

  d.csvs.push(...conflictCandidates(s, current, [...s.intersectingCsvs, ...members], apis, d.csvs));

  // Prune olm.providedAPIs entries no member provides.
  const pruned = prunedGroupApis(current, memberApis);
  if (pruned !== undefined) {
    d.writes.push({
      op: 'patch',
      ref: {
        apiVersion: ogApiVersion,
        kind: 'OperatorGroup',
        namespace: group.metadata.namespace,
        name: group.metadata.name,
      },
      type: 'merge',
      patch: {
        metadata: {
          resourceVersion: group.metadata.resourceVersion,
          annotations: { [OlmAnnotation.ProvidedAPIs]: pruned },
        },
      },
    });
  }
}

// Namespaces whose olm.operatorgroup.uid label disagrees with the group's targets: targeted
// but unlabelled, or labelled but no longer targeted (a global group labels none).
function mislabelled(targets: readonly string[], labelled: readonly string[]): string[] {
  const want = new Set(isGlobal(targets) ? [] : targets);
  const have = new Set(labelled);
  return [...[...want].filter((ns) => !have.has(ns)), ...[...have].filter((ns) => !want.has(ns))];
}

// Reasons of a CSV failed on the provided-API rules, which a change of the groups may lift.
const apiConflictReasons: ReadonlySet<string> = new Set([
  CsvReason.InterOperatorGroupOwnerConflict,
  CsvReason.CannotModifyStaticOperatorGroupProvidedAPIs,
]);

/**
 * CSVs of this group's namespace and of intersecting groups' whose provided-API gate may now
 * decide differently: providers of these APIs, and CSVs failed on a provided-API conflict
 * (the APIs they conflicted on may just have been pruned from this group). Not in `already`.
 */
function conflictCandidates(
  s: GroupsSnapshot,
  group: OperatorGroupObject,
  csvs: readonly CsvObject[],
  apis: ApiSet,
  already: readonly { namespace: string; name: string }[],
): { namespace: string; name: string }[] {
  const surface = surfaceTargets(group);
  const intersectingNs = new Set(
    s.allGroups
      .filter(
        (g) =>
          g.metadata.namespace === group.metadata.namespace ||
          surface.intersects(surfaceTargets(g)),
      )
      .map((g) => g.metadata.namespace ?? ''),
  );
  const out: { namespace: string; name: string }[] = [];
  const seen = new Set(already.map((c) => `${c.namespace}/${c.name}`));
  for (const csv of csvs) {
    if (!intersectingNs.has(csv.metadata.namespace ?? '') || isCopy(csv)) continue;
    const failedOnApis =
      csv.status?.phase === CsvPhase.Failed && apiConflictReasons.has(csv.status.reason ?? '');
    if (!failedOnApis && providedApisOf(csv).intersection(apis).size === 0) continue;
    const key = { namespace: csv.metadata.namespace ?? '', name: csv.metadata.name ?? '' };
    if (seen.has(`${key.namespace}/${key.name}`)) continue;
    seen.add(`${key.namespace}/${key.name}`);
    out.push(key);
  }
  return out;
}
