// The rbac function's OperatorGroup decision (upstream syncOperatorGroups), for every group of
// one namespace at once, as a table of steps (groupSteps): the MultipleOperatorGroup condition,
// the service account, the status and its targets; then, once the mirror shows those targets,
// the namespaces whose labels disagree, member CSV annotations, the three aggregated
// ClusterRoles, the CSVs whose provided-API gate may decide differently, and provided-API
// pruning. Pure.
import {
  ConditionStatus,
  OlmLabel,
  OperatorGroupConditionReason,
  OperatorGroupConditionType,
} from '../../shared/api/codes.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import {
  isCopy,
  namespacesChanged,
  targetNamespaces,
  targetSelectionOf,
  type CsvObject,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import {
  aggregateRoleWrites,
  conflictCandidates,
  type ConflictCandidate,
  memberAnnotationWrites,
  mislabelled,
  providedApisOfGroup,
  pruneWrite,
} from './group-rules.js';
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
  /** CSVs (namespace, name) to reconcile again, each with the basis of that follow-up. */
  csvs: ConflictCandidate[];
  /** A group vanished: sweep namespace labels of groups that no longer exist. */
  sweepNamespaceLabels: boolean;
  /** Look again later (a missing service account may appear). */
  requeueAfterMs?: number;
}

const ogApiVersion = 'operators.coreos.com/v1';

/** Status messages of OperatorGroup conditions, as upstream words them. */
export const groupConditionMessages = {
  multiple: 'Multiple OperatorGroup found in the same namespace',
  serviceAccountNotFound: (name: string) => `ServiceAccount ${name} not found`,
} as const;

/** One group's sync in progress: what its steps read, and the decision they add to. */
interface GroupSync {
  s: GroupsSnapshot;
  group: OperatorGroupObject;
  inputs: GroupInputs;
  /** Its non-copied CSVs (the namespace's). */
  members: readonly CsvObject[];
  /** The status conditions being decided. */
  conditions: GroupCondition[];
  /** status.serviceAccountRef being decided. */
  serviceAccountRef: Record<string, unknown> | undefined;
  /** The group with its decided targets; the mirrored group until the status step. */
  current: OperatorGroupObject;
  d: GroupsDecision;
}

/** One step of a group's sync; `stop` ends the group's sync there. */
type GroupStep = (sync: GroupSync) => 'stop' | undefined;

// MultipleOperatorGroup on every group while there is more than one.
const multipleGroups: GroupStep = (sync) => {
  const type = OperatorGroupConditionType.MultipleOperatorGroup;
  sync.conditions =
    sync.s.groups.length > 1
      ? setCondition(
          sync.conditions,
          {
            type,
            status: ConditionStatus.True,
            reason: OperatorGroupConditionReason.MultipleOperatorGroupsFound,
            message: groupConditionMessages.multiple,
          },
          sync.s.now,
        )
      : sync.conditions.filter((c) => c.type !== type);
  return undefined;
};

// The service account (upstream serviceAccountSyncer): referenced and labelled olm.managed, or
// a condition saying it is missing (and a look again later: it may appear).
const serviceAccount: GroupStep = (sync) => {
  const type = OperatorGroupConditionType.OperatorGroupServiceAccount;
  const name = sync.group.spec?.serviceAccountName ?? '';
  const sa = sync.inputs.serviceAccount;
  if (name !== '' && sa === undefined) {
    sync.conditions = setCondition(
      sync.conditions,
      {
        type,
        status: ConditionStatus.True,
        reason: OperatorGroupConditionReason.ServiceAccountNotFound,
        message: groupConditionMessages.serviceAccountNotFound(name),
      },
      sync.s.now,
    );
    sync.d.requeueAfterMs = 10_000;
    return undefined;
  }
  sync.conditions = sync.conditions.filter((c) => c.type !== type);
  if (name === '' || sa === undefined) {
    sync.serviceAccountRef = undefined;
    return undefined;
  }
  // In ObjectReference's field order: the status is compared as JSON.
  sync.serviceAccountRef = {
    kind: 'ServiceAccount',
    namespace: sa.metadata.namespace,
    name: sa.metadata.name,
    uid: sa.metadata.uid,
    apiVersion: 'v1',
    resourceVersion: sa.metadata.resourceVersion,
  };
  if (sa.metadata.labels?.[OlmLabel.Managed] !== 'true') {
    sync.d.writes.push({
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
  return undefined;
};

// The status: targets (an invalid spec, "" in targetNamespaces, throws a non-retryable error
// naming it), conditions and service account. New targets stop the sync: nothing is decided on
// them until the mirror shows them. The status write comes back through the mirror as a change
// of the group, which syncs this namespace again (see groups-definition.ts).
const status: GroupStep = (sync) => {
  const { group, s } = sync;
  const current = { ...group.status };
  const targets = targetNamespaces(targetSelectionOf(group), sync.inputs.matched);
  const targetsChanged = namespacesChanged(targets, current.namespaces);
  const ref = sync.serviceAccountRef;
  const refChanged =
    JSON.stringify(ref ?? null) !== JSON.stringify(current.serviceAccountRef ?? null);
  if (targetsChanged || refChanged || !sameConditions(sync.conditions, current.conditions ?? [])) {
    const next: OperatorGroupObject['status'] = {
      namespaces: targetsChanged ? targets : [...(current.namespaces ?? [])],
      lastUpdated:
        targetsChanged || current.lastUpdated === undefined ? s.now : current.lastUpdated,
      ...(ref === undefined ? {} : { serviceAccountRef: ref }),
      ...(sync.conditions.length === 0 ? {} : { conditions: sync.conditions }),
    };
    sync.d.writes.push({
      op: 'updateStatus',
      object: { ...group, apiVersion: ogApiVersion, kind: 'OperatorGroup', status: next },
    });
    if (targetsChanged) return 'stop';
  }
  sync.current = { ...group, status: { ...current, namespaces: targets } };
  return undefined;
};

// From here on the targets are the ones the mirror shows.

// Namespaces whose olm.operatorgroup.uid label disagrees with the targets.
const namespaceLabels: GroupStep = (sync) => {
  sync.d.namespaces.push(
    ...mislabelled(sync.current.status?.namespaces ?? [], sync.inputs.labelled),
  );
  return undefined;
};

// Member CSV annotations; with several groups the CSVs fail TooManyOperatorGroups instead.
const memberCsvAnnotations: GroupStep = (sync) => {
  if (sync.s.groups.length === 1)
    sync.d.writes.push(...memberAnnotationWrites(sync.members, sync.current));
  return undefined;
};

// The three aggregated ClusterRoles over the group's APIs and its members'.
const aggregatedRoles: GroupStep = (sync) => {
  const apis = providedApisOfGroup(sync.current, sync.members);
  sync.d.writes.push(...aggregateRoleWrites(sync.current, apis, sync.s.aggregateRoles));
  return undefined;
};

// CSVs here and in intersecting groups whose provided-API gate may now decide differently.
const conflictingCsvs: GroupStep = (sync) => {
  const { s, current, members, d } = sync;
  const csvs = [...s.intersectingCsvs, ...members];
  const apis = providedApisOfGroup(current, members);
  d.csvs.push(...conflictCandidates(s.allGroups, current, csvs, apis, d.csvs));
  return undefined;
};

// olm.providedAPIs entries no member provides are pruned.
const providedApisPruning: GroupStep = (sync) => {
  const write = pruneWrite(sync.current, sync.members);
  if (write !== undefined) sync.d.writes.push(write);
  return undefined;
};

/** A group's sync, step by step (upstream syncOperatorGroups' order). */
const groupSteps: readonly GroupStep[] = [
  multipleGroups,
  serviceAccount,
  status,
  namespaceLabels,
  memberCsvAnnotations,
  aggregatedRoles,
  conflictingCsvs,
  providedApisPruning,
];

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
  const d: GroupsDecision = { writes: [], namespaces: [], csvs: [], sweepNamespaceLabels: false };
  const liveNames = new Set(s.groups.map((g) => g.metadata.name));

  // Roles of groups that are gone (upstream operatorGroupDeleted).
  for (const role of s.ownedAggregateRoles) {
    const owner = role.metadata.labels?.[OlmLabel.Owner] ?? '';
    if (liveNames.has(owner)) continue;
    d.writes.push({
      op: 'delete',
      ref: { apiVersion: role.apiVersion, kind: 'ClusterRole', name: role.metadata.name },
      preconditions: { uid: role.metadata.uid ?? '' },
    });
    d.sweepNamespaceLabels = true;
  }

  const members = s.csvs.filter((c) => !isCopy(c));
  for (const group of s.groups) {
    const sync: GroupSync = {
      s,
      group,
      inputs: s.inputs.get(group.metadata.name) ?? {
        matched: [],
        serviceAccount: undefined,
        labelled: [],
      },
      members,
      conditions: [...(group.status?.conditions ?? [])],
      serviceAccountRef: group.status?.serviceAccountRef,
      current: group,
      d,
    };
    for (const step of groupSteps) if (step(sync) === 'stop') break;
  }
  return d;
}
