// The rules of a group's sync once its targets are the mirror's (groups.ts runs them as
// steps): which namespaces are mislabelled, member CSV annotations, the aggregated ClusterRoles,
// which CSVs' provided-API gate may decide differently, and provided-API pruning. Pure.
import { createHash } from 'node:crypto';
import { CsvPhase, CsvReason, OlmAnnotation } from '../../shared/api/codes.js';
import type { Write } from '../../shared/kube/executor.js';
import {
  aggregateClusterRole,
  groupProvidedApis,
  isCopy,
  isGlobal,
  memberAnnotations,
  memberAnnotationsDiffer,
  providedApisOf,
  prunedGroupApis,
  roleMatches,
  roleSuffixes,
  surfaceTargets,
  type ApiSet,
  type CsvObject,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import type { OperatorGroupObject } from './types.js';

const ogApiVersion = 'operators.coreos.com/v1';
const csvApiVersion = 'operators.coreos.com/v1alpha1';

/**
 * Namespaces whose olm.operatorgroup.uid label disagrees with a group's targets: targeted but
 * unlabelled, or labelled but no longer targeted (a global group labels none).
 */
export function mislabelled(targets: readonly string[], labelled: readonly string[]): string[] {
  const want = new Set(isGlobal(targets) ? [] : targets);
  const have = new Set(labelled);
  return [...[...want].filter((ns) => !have.has(ns)), ...[...have].filter((ns) => !want.has(ns))];
}

/** Patches of the member CSVs whose olm.* annotations do not name `group` as it is. */
export function memberAnnotationWrites(
  members: readonly CsvObject[],
  group: OperatorGroupObject,
): Write[] {
  return members
    .filter((csv) => memberAnnotationsDiffer(csv.metadata.annotations, group))
    .map((csv) => ({
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
          annotations: memberAnnotations(group),
        },
      },
    }));
}

/** The APIs a group's aggregated roles cover: its olm.providedAPIs and its members'. */
export function providedApisOfGroup(
  group: OperatorGroupObject,
  members: readonly CsvObject[],
): ApiSet {
  let apis = groupProvidedApis(group);
  for (const csv of members) apis = apis.union(providedApisOf(csv));
  return apis;
}

/** Creates and updates that make the group's three aggregated ClusterRoles cover `apis`. */
export function aggregateRoleWrites(
  group: OperatorGroupObject,
  apis: ApiSet,
  existingRoles: ReadonlyMap<string, RoleObject>,
): Write[] {
  const writes: Write[] = [];
  for (const suffix of roleSuffixes) {
    const intended = aggregateClusterRole(
      { name: group.metadata.name, namespace: group.metadata.namespace ?? '' },
      suffix,
      apis,
    );
    const existing = existingRoles.get(intended.metadata.name ?? '');
    if (existing === undefined) {
      writes.push({ op: 'create', object: intended });
    } else if (!roleMatches(existing, intended)) {
      // A merge patch conditional on the version decided on: it changes only the labels and the
      // aggregation rule, so a role read from the mirror (which trims the kubectl last-applied
      // annotation) serves as well as one read from the API.
      writes.push({
        op: 'patch',
        ref: { apiVersion: existing.apiVersion, kind: 'ClusterRole', name: existing.metadata.name },
        type: 'merge',
        patch: {
          metadata: {
            resourceVersion: existing.metadata.resourceVersion,
            labels: intended.metadata.labels ?? {},
          },
          aggregationRule: intended.aggregationRule ?? null,
        },
      });
    }
  }
  return writes;
}

// Reasons of a CSV failed on the provided-API rules, which a change of the groups may lift.
const apiConflictReasons: ReadonlySet<string> = new Set([
  CsvReason.InterOperatorGroupOwnerConflict,
  CsvReason.CannotModifyStaticOperatorGroupProvidedAPIs,
]);

/**
 * What a group's sync tells apart of a member CSV's phase: new or Pending (pruning waits),
 * failed on a provided-API conflict (and which), or anything else. The rbac CSV trigger wakes
 * the groups on a change of it, not on every phase an install passes through.
 */
export function memberPhaseView(csv: CsvObject): string {
  const phase = csv.status?.phase ?? '';
  const reason = csv.status?.reason ?? '';
  if (phase === '' || phase === CsvPhase.Pending) return 'pending';
  return phase === CsvPhase.Failed && apiConflictReasons.has(reason) ? `failed:${reason}` : 'other';
}

/** A CSV to decide again, and the basis of that follow-up (WorkItem.basis). */
export interface ConflictCandidate {
  namespace: string;
  name: string;
  basis: string;
}

/**
 * CSVs of the group's namespace and of intersecting groups' whose provided-API gate may now
 * decide differently: providers of `apis`, and CSVs failed on a provided-API conflict (what
 * they conflicted with may just have been pruned from this group). This runs on every change
 * of the group in the mirror, its olm.providedAPIs included, so a gate decided on an annotation
 * the mirror did not show yet is decided again once it does. Not those in `already`.
 *
 * Their basis is what of groups the gate reads and does not watch: this group, the APIs its
 * members provide, and the intersecting groups' uids, specs, targets and olm.providedAPIs. A
 * pass of this group on the same basis (a member's phase moved on) sends them nothing new.
 */
export function conflictCandidates(
  allGroups: readonly OperatorGroupObject[],
  group: OperatorGroupObject,
  csvs: readonly CsvObject[],
  apis: ApiSet,
  already: readonly { namespace: string; name: string }[],
): ConflictCandidate[] {
  const surface = surfaceTargets(group);
  const intersecting = allGroups.filter(
    (g) =>
      g.metadata.namespace === group.metadata.namespace || surface.intersects(surfaceTargets(g)),
  );
  const intersectingNs = new Set(intersecting.map((g) => g.metadata.namespace ?? ''));
  const out: ConflictCandidate[] = [];
  const seen = new Set(already.map((c) => `${c.namespace}/${c.name}`));
  let basis: string | undefined;
  for (const csv of csvs) {
    if (!intersectingNs.has(csv.metadata.namespace ?? '') || isCopy(csv)) continue;
    const failedOnApis =
      csv.status?.phase === CsvPhase.Failed && apiConflictReasons.has(csv.status.reason ?? '');
    if (!failedOnApis && providedApisOf(csv).intersection(apis).size === 0) continue;
    const key = { namespace: csv.metadata.namespace ?? '', name: csv.metadata.name ?? '' };
    if (seen.has(`${key.namespace}/${key.name}`)) continue;
    seen.add(`${key.namespace}/${key.name}`);
    basis ??= gateBasis(group, apis, intersecting);
    out.push({ ...key, basis });
  }
  return out;
}

function gateBasis(
  group: OperatorGroupObject,
  apis: ApiSet,
  intersecting: readonly OperatorGroupObject[],
): string {
  const groups = intersecting
    .map((g) => ({
      at: `${g.metadata.namespace ?? ''}/${g.metadata.name}`,
      uid: g.metadata.uid ?? '',
      apis: g.metadata.annotations?.[OlmAnnotation.ProvidedAPIs] ?? '',
      spec: g.spec ?? {},
      targets: g.status?.namespaces ?? [],
    }))
    .sort((a, b) => a.at.localeCompare(b.at));
  const inputs = [group.metadata.namespace ?? '', group.metadata.name, apis.toString(), groups];
  return createHash('sha256').update(JSON.stringify(inputs)).digest('base64url');
}

/** The patch pruning olm.providedAPIs entries no member provides, if any. */
export function pruneWrite(
  group: OperatorGroupObject,
  members: readonly CsvObject[],
): Write | undefined {
  const pruned = prunedGroupApis(
    group,
    members.map((csv) => ({
      apis: providedApisOf(csv),
      phase: csv.status?.phase ?? '',
      deleting: csv.metadata['deletionTimestamp'] !== undefined,
    })),
  );
  if (pruned === undefined) return undefined;
  return {
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
  };
}
