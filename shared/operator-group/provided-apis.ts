// The APIs an operator provides and the olm.providedAPIs rules between OperatorGroups: two
// groups whose target surfaces intersect must not provide the same API. Pure.
import { CsvReason } from '../api/codes.js';
import { surfaceTargets, type OperatorGroupLike } from './targets.js';
import { OlmAnnotation } from '../api/codes.js';

/** One provided API, as upstream's APIKey without the plural: Kind.version.group. */
export interface ApiKey {
  group: string;
  version: string;
  kind: string;
}

/** The parts of a CSV these rules read. */
export interface CsvApiSurface {
  spec?:
    | {
        customresourcedefinitions?:
          | { owned?: readonly { name: string; version: string; kind: string }[] | undefined }
          | undefined;
        apiservicedefinitions?:
          | {
              owned?:
                | readonly { name: string; group: string; version: string; kind: string }[]
                | undefined;
            }
          | undefined;
      }
    | undefined;
}

/** `Kind.version.group`, the form of olm.providedAPIs entries and of the API hash input. */
export function apiKeyString(key: ApiKey): string {
  return `${key.kind}.${key.version}.${key.group}`;
}

/** fnv-1a 64 of `Kind.version.group`, in hex without padding (upstream APIKeyToGVKHash). */
export function apiKeyHash(key: ApiKey): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(apiKeyString(key), 'utf8')) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16);
}

/** A set of provided APIs keyed by `Kind.version.group`. */
export class ApiSet {
  private readonly byString: ReadonlyMap<string, ApiKey>;
  constructor(keys: Iterable<ApiKey>) {
    this.byString = new Map([...keys].map((k) => [apiKeyString(k), k]));
  }
  /** Parses an olm.providedAPIs value; malformed entries (fewer than three parts) are skipped. */
  static parse(value: string | undefined): ApiSet {
    const keys: ApiKey[] = [];
    for (const entry of (value ?? '').split(',')) {
      const [kind, version, group] = splitN(entry.trim(), '.', 3);
      if (kind && version && group) keys.push({ kind, version, group });
    }
    return new ApiSet(keys);
  }
  get size(): number {
    return this.byString.size;
  }
  has(key: ApiKey): boolean {
    return this.byString.has(apiKeyString(key));
  }
  keys(): ApiKey[] {
    return [...this.byString.keys()].sort().map((k) => this.byString.get(k) as ApiKey);
  }
  union(other: ApiSet): ApiSet {
    return new ApiSet([...this.keys(), ...other.keys()]);
  }
  intersection(other: ApiSet): ApiSet {
    return new ApiSet(this.keys().filter((k) => other.has(k)));
  }
  difference(other: ApiSet): ApiSet {
    return new ApiSet(this.keys().filter((k) => !other.has(k)));
  }
  isSubsetOf(other: ApiSet): boolean {
    return this.keys().every((k) => other.has(k));
  }
  /** The olm.providedAPIs form: sorted, comma-joined. */
  toString(): string {
    return [...this.byString.keys()].sort().join(',');
  }
}

function splitN(text: string, sep: string, n: number): string[] {
  const parts = text.split(sep);
  if (parts.length <= n) return parts;
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

/** The APIs a CSV provides: owned CRDs (group from `<plural>.<group>`) and owned APIServices. */
export function providedApisOf(csv: CsvApiSurface): ApiSet {
  const keys: ApiKey[] = [];
  for (const crd of csv.spec?.customresourcedefinitions?.owned ?? []) {
    const [, group] = splitN(crd.name, '.', 2);
    if (group) keys.push({ group, version: crd.version, kind: crd.kind });
  }
  for (const api of csv.spec?.apiservicedefinitions?.owned ?? []) {
    keys.push({ group: api.group, version: api.version, kind: api.kind });
  }
  return new ApiSet(keys);
}

/** The olm.providedAPIs annotation of a group. */
export function groupProvidedApis(group: OperatorGroupLike): ApiSet {
  return ApiSet.parse(group.metadata.annotations?.[OlmAnnotation.ProvidedAPIs]);
}

/** Outcome of checking a CSV's APIs against its group and the groups intersecting it. */
export type ApiReconciliation = 'RemoveAPIs' | 'AddAPIs' | 'APIConflict' | 'NoAPIConflict';

/**
 * Upstream ReconcileAPIIntersection: P = the CSV's APIs, G = its group's providedAPIs,
 * I = the union of providedAPIs of other groups whose surface intersects the group's.
 * P⊆G ∧ P∩I≠∅ → RemoveAPIs; P⊄G ∧ P∩I≠∅ → APIConflict; P⊄G → AddAPIs; else NoAPIConflict.
 */
export function reconcileApiIntersection(
  provided: ApiSet,
  group: OperatorGroupLike,
  allGroups: readonly OperatorGroupLike[],
): ApiReconciliation {
  const surface = surfaceTargets(group);
  const id = groupId(group);
  let others = new ApiSet([]);
  for (const other of allGroups) {
    if (groupId(other) === id) continue;
    if (surface.intersects(surfaceTargets(other))) others = others.union(groupProvidedApis(other));
  }
  const intersecting = provided.intersection(others).size > 0;
  const subset = provided.isSubsetOf(groupProvidedApis(group));
  if (subset && intersecting) return 'RemoveAPIs';
  if (!subset && intersecting) return 'APIConflict';
  if (!subset) return 'AddAPIs';
  return 'NoAPIConflict';
}

function groupId(group: OperatorGroupLike): string {
  return `${group.metadata.name}/${group.metadata.namespace ?? ''}`;
}

/** What the olm.providedAPIs rules ask for one member CSV. */
export type ProvidedApisAction =
  | { type: 'none' }
  /** Rewrite the group's olm.providedAPIs to `value`, then look at the CSV again. */
  | { type: 'setGroupApis'; value: string }
  /** Fail the CSV (unless it already failed this way). */
  | {
      type: 'fail';
      reason:
        | typeof CsvReason.InterOperatorGroupOwnerConflict
        | typeof CsvReason.CannotModifyStaticOperatorGroupProvidedAPIs;
      message: string;
    };

/** CSV status messages of the provided-API rules, as upstream words them. */
export const providedApiMessages = {
  conflict: 'intersecting operatorgroups provide the same apis',
  staticGroup: 'static provided api operatorgroup cannot be modified by these apis',
  conflictResolved: 'OperatorGroup no longer intersecting with conflicting owner',
  staticResolved: 'static OperatorGroup and intersecting groups now support providedAPIs',
} as const;

/** The CSV-gate step of §4.3 for one CSV (upstream transitionCSVState's apiReconciler switch). */
export function providedApisAction(
  csvApis: ApiSet,
  group: OperatorGroupLike,
  allGroups: readonly OperatorGroupLike[],
): ProvidedApisAction {
  const result = reconcileApiIntersection(csvApis, group, allGroups);
  const current = groupProvidedApis(group);
  if (
    group.spec?.staticProvidedAPIs === true &&
    (result === 'AddAPIs' || result === 'RemoveAPIs')
  ) {
    return {
      type: 'fail',
      reason: CsvReason.CannotModifyStaticOperatorGroupProvidedAPIs,
      message: providedApiMessages.staticGroup,
    };
  }
  switch (result) {
    case 'APIConflict':
      return {
        type: 'fail',
        reason: CsvReason.InterOperatorGroupOwnerConflict,
        message: providedApiMessages.conflict,
      };
    case 'AddAPIs': {
      const union = current.union(csvApis).toString();
      // Already the union (e.g. invalid input): nothing to add, the CSV proceeds.
      if (group.metadata.annotations?.[OlmAnnotation.ProvidedAPIs] === union)
        return { type: 'none' };
      return { type: 'setGroupApis', value: union };
    }
    case 'RemoveAPIs':
      return { type: 'setGroupApis', value: current.difference(csvApis).toString() };
    case 'NoAPIConflict':
      return { type: 'none' };
  }
}

/** A member CSV as the pruning rule sees it. */
export interface MemberApis {
  apis: ApiSet;
  /** status.phase ("" for None). */
  phase: string;
  deleting: boolean;
}

/**
 * Upstream pruneProvidedAPIs: the group's olm.providedAPIs minus entries no member provides;
 * undefined when nothing changes, the group is static, or a member that provides an API not
 * in the annotation is still None/Pending (it may be about to add it).
 */
export function prunedGroupApis(
  group: OperatorGroupLike,
  members: readonly MemberApis[],
): string | undefined {
  if (group.spec?.staticProvidedAPIs === true) return undefined;
  const current = groupProvidedApis(group);
  let fromMembers = new ApiSet([]);
  for (const member of members) {
    for (const api of member.apis.keys()) {
      if (
        !current.has(api) &&
        !member.deleting &&
        (member.phase === '' || member.phase === 'Pending')
      ) {
        return undefined;
      }
    }
    fromMembers = fromMembers.union(member.apis);
  }
  const intersection = current.intersection(fromMembers);
  if (intersection.size >= current.size) return undefined;
  return intersection.toString();
}
