// Copied CSVs, decided per target namespace: which operators' CSVs must have a copy here, what
// each copy looks like (upstream csvCopyPrototype), when a write is due (content hashes), and
// which copies are dangling (upstream removeDanglingChildCSVs). Pure.
import { createHash } from 'node:crypto';
import {
  CsvPhase,
  CsvReason,
  OlmAnnotation,
  OlmLabel,
  OlmLabelPrefix,
} from '../../shared/api/codes.js';
import type { Write } from '../../shared/kube/executor.js';
import {
  NamespaceSet,
  canonical,
  isCopy,
  targetsAnnotation,
  type CsvObject,
  type OperatorGroupLike,
} from '../../shared/operator-group/index.js';

/** Annotation of a copy: hash of everything but its status, so unchanged parents cause no write. */
export const nonStatusCopyHashAnnotation = 'olm.operatorframework.io/nonStatusCopyHash';

/** The status message of every copy. */
export function copiedMessage(sourceNamespace: string): string {
  return `The operator is running in ${sourceNamespace} but is managing this namespace`;
}

/** Reasons that make a CSV uncopiable (upstream IsUncopiable), besides phase None. */
const uncopiableReasons: ReadonlySet<string> = new Set([
  CsvReason.Copied,
  CsvReason.InvalidInstallModes,
  CsvReason.NoTargetNamespaces,
  CsvReason.UnsupportedOperatorGroup,
  CsvReason.NoOperatorGroup,
  CsvReason.TooManyOperatorGroups,
  CsvReason.InterOperatorGroupOwnerConflict,
  CsvReason.CannotModifyStaticOperatorGroupProvidedAPIs,
]);

/** Whether a CSV's state allows copies (phase set, reason not a group failure). */
export function isCopiable(csv: CsvObject): boolean {
  const phase = csv.status?.phase ?? CsvPhase.None;
  return phase !== CsvPhase.None && !uncopiableReasons.has(csv.status?.reason ?? '');
}

/**
 * The group a CSV is the active member of, judged from its annotations (upstream
 * operatorGroupFromAnnotations): in the group's namespace, naming it, with targets matching.
 */
export function groupOfSource(
  csv: CsvObject,
  groups: readonly OperatorGroupLike[],
): OperatorGroupLike | undefined {
  const a = csv.metadata.annotations ?? {};
  const ns = csv.metadata.namespace ?? '';
  if (a[OlmAnnotation.OperatorNamespace] !== ns) return undefined;
  const name = a[OlmAnnotation.OperatorGroup];
  const group = groups.find((g) => g.metadata.namespace === ns && g.metadata.name === name);
  const targets = a[OlmAnnotation.TargetNamespaces];
  if (group === undefined || targets === undefined) return undefined;
  if (targets !== targetsAnnotation(group.status?.namespaces ?? [])) return undefined;
  return group;
}

/** The copy of `source` (namespace and identity unset), as upstream's csvCopyPrototype. */
export function copyPrototype(source: CsvObject): CsvObject {
  const sourceNamespace = source.metadata.namespace ?? '';
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(source.metadata.annotations ?? {})) {
    if (k === OlmAnnotation.TargetNamespaces || k === OlmAnnotation.LastAppliedConfiguration)
      continue;
    annotations[k] = v;
  }
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(source.metadata.labels ?? {})) {
    if (k.startsWith(OlmLabelPrefix.Operator)) continue;
    labels[k] = v;
  }
  labels[OlmLabel.CopiedFrom] = sourceNamespace;
  return {
    apiVersion: source.apiVersion,
    kind: source.kind,
    metadata: { name: source.metadata.name ?? '', annotations, labels },
    ...(source.spec === undefined ? {} : { spec: source.spec }),
    status: {
      ...source.status,
      reason: CsvReason.Copied,
      message: copiedMessage(sourceNamespace),
    },
  };
}

function digest(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('hex').slice(0, 32);
}

/** Hash of a prototype's name, labels, annotations and spec (upstream copyableCSVHash, non-status part). */
export function nonStatusHash(prototype: CsvObject): string {
  return digest({
    name: prototype.metadata.name,
    labels: prototype.metadata.labels,
    annotations: prototype.metadata.annotations,
    spec: prototype.spec,
  });
}

/** Hash of a status, for comparing a copy's status with its parent's projection. */
export function statusHash(status: unknown): string {
  return digest(status ?? {});
}

/** What deciding the copies of one namespace needs. */
export interface NamespaceCopySnapshot {
  namespace: string;
  /** False once the namespace is gone or terminating (its objects go with it). */
  namespaceActive: boolean;
  /** OLMConfig cluster spec.features.disableCopiedCSVs is not true. */
  copiesEnabled: boolean;
  /** Namespaces that keep copies of AllNamespaces operators even when copies are disabled. */
  protectedNamespaces: readonly string[];
  /** Every OperatorGroup of the cluster (few). */
  groups: readonly OperatorGroupLike[];
  /** Non-copied CSVs in the namespaces of groups targeting this namespace. */
  candidates: readonly CsvObject[];
  /** CSVs in this namespace. */
  present: readonly CsvObject[];
  /** Parents of the copies present, by "<namespace>/<name>" (absent: parent gone). */
  parents: ReadonlyMap<string, CsvObject>;
}

/** Why a copy is deleted, for logs and metrics. */
export type CopyDeletionReason =
  | 'no-operator-namespace'
  | 'parent-gone'
  | 'parent-conflict'
  | 'not-targeted'
  | 'in-parent-namespace'
  | 'copies-disabled';

/** The writes for one namespace, with why each copy goes. */
export interface CopyDecision {
  writes: Write[];
  deleted: { name: string; reason: CopyDeletionReason }[];
  created: number;
  updated: number;
}

const csvApiVersion = 'operators.coreos.com/v1alpha1';

/** Whether copies of `source` (member of `group`) belong in `namespace`, ignoring the OLMConfig switch. */
function targetedBy(source: CsvObject, group: OperatorGroupLike, namespace: string): boolean {
  const namespaces = group.status?.namespaces ?? [];
  const own = group.metadata.namespace ?? '';
  if (namespace === own) return false;
  if (namespaces.length === 1 && namespaces[0] === own) return false; // OwnNamespace: no copies
  return isCopiable(source) && new NamespaceSet(namespaces).contains(namespace);
}

function allowedBySwitch(s: NamespaceCopySnapshot, group: OperatorGroupLike): boolean {
  if (s.copiesEnabled) return true;
  if (!new NamespaceSet(group.status?.namespaces ?? []).isAll) return true;
  return s.protectedNamespaces.includes(s.namespace);
}

/** Why an existing copy must go, or undefined to keep it. */
export function danglingReason(
  copy: CsvObject,
  parent: CsvObject | undefined,
  s: Pick<NamespaceCopySnapshot, 'copiesEnabled' | 'protectedNamespaces' | 'namespace'>,
): CopyDeletionReason | undefined {
  const operatorNamespace = copy.metadata.annotations?.[OlmAnnotation.OperatorNamespace];
  if (operatorNamespace === undefined) return 'no-operator-namespace';
  if (parent === undefined) return 'parent-gone';
  if (
    parent.status?.phase === CsvPhase.Failed &&
    parent.status.reason === CsvReason.InterOperatorGroupOwnerConflict
  ) {
    return 'parent-conflict';
  }
  const targets = parent.metadata.annotations?.[OlmAnnotation.TargetNamespaces] ?? '';
  const set = NamespaceSet.fromAnnotation(targets);
  if (!set.contains(s.namespace)) return 'not-targeted';
  if (copy.metadata.namespace === operatorNamespace) return 'in-parent-namespace';
  if (!s.copiesEnabled && set.isAll && !s.protectedNamespaces.includes(s.namespace)) {
    return 'copies-disabled';
  }
  return undefined;
}

// Copy content hashes by source uid and resourceVersion: every namespace a source is copied to
// asks for the same hash, and hashing a whole CSV costs more than the rest of the decision.
const copyHashes = new Map<string, string>();
const copyHashesKept = 512;

function copyHashOf(source: CsvObject, prototype: CsvObject): string {
  const { uid, resourceVersion } = source.metadata;
  if (uid === undefined || resourceVersion === undefined) return nonStatusHash(prototype);
  const key = `${uid}@${resourceVersion}`;
  let hash = copyHashes.get(key);
  if (hash === undefined) {
    hash = nonStatusHash(prototype);
    for (const oldest of copyHashes.keys()) {
      if (copyHashes.size < copyHashesKept) break;
      copyHashes.delete(oldest);
    }
    copyHashes.set(key, hash);
  }
  return hash;
}

// A status write carries the status alone: the API server takes nothing else from it, and a
// copy's spec is most of its size.
function statusOnly(name: string, namespace: string, status: CsvObject['status']): CsvObject {
  return {
    apiVersion: csvApiVersion,
    kind: 'ClusterServiceVersion',
    metadata: { name, namespace },
    ...(status === undefined ? {} : { status }),
  };
}

/** Decides the copies of one namespace. */
export function decideNamespaceCopies(s: NamespaceCopySnapshot): CopyDecision {
  const decision: CopyDecision = { writes: [], deleted: [], created: 0, updated: 0 };
  if (!s.namespaceActive) return decision;
  const present = new Map(s.present.map((c) => [c.metadata.name ?? '', c]));

  // Existing copies that lost their reason to be.
  for (const copy of s.present) {
    if (copy.metadata.labels?.[OlmLabel.CopiedFrom] === undefined) continue;
    const parentNamespace = copy.metadata.annotations?.[OlmAnnotation.OperatorNamespace] ?? '';
    const parent = s.parents.get(`${parentNamespace}/${copy.metadata.name ?? ''}`);
    const reason = danglingReason(copy, parent, s);
    if (reason === undefined) continue;
    decision.writes.push({
      op: 'delete',
      ref: {
        apiVersion: csvApiVersion,
        kind: 'ClusterServiceVersion',
        namespace: s.namespace,
        name: copy.metadata.name,
      },
      preconditions: { uid: copy.metadata.uid ?? '' },
    });
    decision.deleted.push({ name: copy.metadata.name ?? '', reason });
    present.delete(copy.metadata.name ?? '');
  }

  const sources = [...s.candidates].sort((a, b) =>
    (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? ''),
  );
  const claimed = new Set<string>();
  for (const source of sources) {
    const name = source.metadata.name ?? '';
    if (isCopy(source) || claimed.has(name)) continue;
    const group = groupOfSource(source, s.groups);
    if (
      group === undefined ||
      !targetedBy(source, group, s.namespace) ||
      !allowedBySwitch(s, group)
    )
      continue;
    const existing = present.get(name);
    // A CSV of that name installed here, or a copy of another namespace's operator: leave it.
    if (
      existing !== undefined &&
      existing.metadata.labels?.[OlmLabel.CopiedFrom] !== source.metadata.namespace
    )
      continue;
    claimed.add(name);
    const prototype = copyPrototype(source);
    const hash = copyHashOf(source, prototype);
    const metadata = {
      ...prototype.metadata,
      namespace: s.namespace,
      annotations: { ...prototype.metadata.annotations, [nonStatusCopyHashAnnotation]: hash },
    };
    const { status, ...body } = prototype;
    if (existing === undefined) {
      decision.writes.push({ op: 'create', object: { ...body, metadata } });
      decision.writes.push({
        op: 'updateStatus',
        object: statusOnly(name, s.namespace, status),
      });
      decision.created++;
      continue;
    }
    let changed = false;
    if (existing.metadata.annotations?.[nonStatusCopyHashAnnotation] !== hash) {
      decision.writes.push({
        op: 'update',
        object: {
          ...body,
          metadata: {
            ...metadata,
            uid: existing.metadata.uid ?? '',
            resourceVersion: existing.metadata.resourceVersion ?? '',
          },
        },
      });
      changed = true;
    }
    if (statusHash(existing.status) !== statusHash(status)) {
      decision.writes.push({
        op: 'updateStatus',
        object: statusOnly(name, s.namespace, status),
      });
      changed = true;
    }
    if (changed) decision.updated++;
  }
  return decision;
}
