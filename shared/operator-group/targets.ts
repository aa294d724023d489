// Which namespaces an OperatorGroup targets, and what that means for its members: the
// status.namespaces rule, namespace-set algebra ("" = all namespaces), the annotations a member
// CSV carries, the namespace label of non-global groups, and the install-mode check. Pure.
import { CsvReason, InstallModeType, OlmAnnotation, OlmLabelPrefix } from '../api/codes.js';
import type { LabelSelectorObject } from '../kube/selectors.js';

/** The parts of an OperatorGroup these rules read. */
export interface OperatorGroupLike {
  metadata: {
    name: string;
    namespace?: string | undefined;
    uid?: string | undefined;
    annotations?: Record<string, string> | undefined;
  };
  spec?:
    | {
        selector?: LabelSelectorObject | undefined;
        targetNamespaces?: readonly string[] | undefined;
        staticProvidedAPIs?: boolean | undefined;
        serviceAccountName?: string | undefined;
      }
    | undefined;
  status?: { namespaces?: readonly string[] | undefined } | undefined;
}

/** How a group selects its targets, before looking at any namespace. */
export type TargetSelection =
  | { type: 'explicit'; namespaces: readonly string[] }
  | { type: 'all' }
  | { type: 'selector'; selector: LabelSelectorObject };

/** spec.targetNamespaces lists "" (NamespaceAll), which only a selector-less group may mean. */
export class InvalidTargetNamespacesError extends Error {
  /** The spec must change; retrying cannot help. */
  readonly retryable = false;
  constructor(readonly targetNamespaces: readonly string[]) {
    super(`TargetNamespaces cannot contain NamespaceAll: [${targetNamespaces.join(' ')}]`);
    this.name = 'InvalidTargetNamespacesError';
  }
}

/**
 * The selection rule (upstream getOperatorGroupTargets): targetNamespaces wins; else a missing
 * or empty selector means all namespaces; else the namespaces matching the selector.
 */
export function targetSelectionOf(group: OperatorGroupLike): TargetSelection {
  const explicit = group.spec?.targetNamespaces ?? [];
  if (explicit.length > 0) {
    if (explicit.includes('')) throw new InvalidTargetNamespacesError(explicit);
    return { type: 'explicit', namespaces: sortedUnique(explicit) };
  }
  const selector = group.spec?.selector;
  const empty =
    selector === undefined ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 &&
      (selector.matchExpressions ?? []).length === 0);
  return empty ? { type: 'all' } : { type: 'selector', selector };
}

/** status.namespaces for a selection, given the names of the namespaces its selector matched. */
export function targetNamespaces(
  selection: TargetSelection,
  matched: readonly string[] = [],
): string[] {
  switch (selection.type) {
    case 'all':
      return [''];
    case 'explicit':
      return [...selection.namespaces];
    case 'selector':
      return sortedUnique(matched);
  }
}

/** Whether two namespace lists differ as sets (upstream namespacesChanged). */
export function namespacesChanged(
  next: readonly string[],
  current: readonly string[] | undefined,
): boolean {
  const have = current ?? [];
  if (next.length !== have.length) return true;
  const set = new Set(next);
  return have.some((ns) => !set.has(ns));
}

/** Namespaces added or removed between two target lists, without "" (upstream namespacesAddedOrRemoved). */
export function namespacesAddedOrRemoved(
  before: readonly string[],
  after: readonly string[],
): string[] {
  const a = new Set(before);
  const b = new Set(after);
  const out = [...a].filter((ns) => !b.has(ns)).concat([...b].filter((ns) => !a.has(ns)));
  return sortedUnique(out.filter((ns) => ns !== ''));
}

/** A set of namespaces where [""] means every namespace. */
export class NamespaceSet {
  private readonly names: ReadonlySet<string>;
  constructor(namespaces: Iterable<string>) {
    this.names = new Set(namespaces);
  }
  /** From a comma-joined olm.targetNamespaces value. */
  static fromAnnotation(value: string): NamespaceSet {
    return new NamespaceSet(value.split(','));
  }
  get isAll(): boolean {
    return this.names.size === 1 && this.names.has('');
  }
  get size(): number {
    return this.names.size;
  }
  contains(namespace: string): boolean {
    return this.isAll || this.names.has(namespace);
  }
  /** Upstream semantics: All ∩ S = S. */
  intersects(other: NamespaceSet): boolean {
    if (this.isAll) return other.size > 0;
    if (other.isAll) return this.size > 0;
    for (const ns of this.names) if (other.names.has(ns)) return true;
    return false;
  }
  toArray(): string[] {
    return sortedUnique([...this.names]);
  }
}

/**
 * The namespaces a group's providedAPIs are surfaced in: its targets plus its own namespace,
 * unless it targets all namespaces (upstream NewOperatorGroup).
 */
export function surfaceTargets(group: OperatorGroupLike): NamespaceSet {
  const namespaces = [...(group.status?.namespaces ?? [])];
  if (namespaces.length >= 1 && namespaces[0] !== '')
    namespaces.push(group.metadata.namespace ?? '');
  return new NamespaceSet(namespaces);
}

/** The olm.targetNamespaces value of a group's members: sorted, comma-joined ("" for all). */
export function targetsAnnotation(namespaces: readonly string[]): string {
  return [...namespaces].sort().join(',');
}

/** The three annotations a member CSV carries, from its group. */
export function memberAnnotations(group: {
  metadata: { name?: string | undefined; namespace?: string | undefined };
  status?: OperatorGroupLike['status'];
}): Record<string, string> {
  const annotations: Record<string, string> = {
    [OlmAnnotation.OperatorNamespace]: group.metadata.namespace ?? '',
    [OlmAnnotation.OperatorGroup]: group.metadata.name ?? '',
  };
  if (group.status?.namespaces !== undefined) {
    annotations[OlmAnnotation.TargetNamespaces] = targetsAnnotation(group.status.namespaces);
  }
  return annotations;
}

/** Whether `annotations` lack or differ in any of the member annotations of `group`. */
export function memberAnnotationsDiffer(
  annotations: Readonly<Record<string, string>> | undefined,
  group: OperatorGroupLike,
): boolean {
  const want = memberAnnotations(group);
  if (want[OlmAnnotation.TargetNamespaces] === undefined) want[OlmAnnotation.TargetNamespaces] = '';
  return Object.entries(want).some(([k, v]) => annotations?.[k] !== v);
}

/** The label a non-global group puts on each namespace it targets. */
export function operatorGroupNamespaceLabel(uid: string): string {
  return `${OlmLabelPrefix.OperatorGroupUid}${uid}`;
}

/** Whether a group targets all namespaces. */
export function isGlobal(namespaces: readonly string[] | undefined): boolean {
  return namespaces !== undefined && namespaces.length === 1 && namespaces[0] === '';
}

/**
 * Label changes that make namespace `namespace` carry exactly the uid labels of the non-global
 * groups targeting it: keys to add and keys to remove.
 */
export function namespaceLabelChanges(
  labels: Readonly<Record<string, string>> | undefined,
  targetingGroupUids: readonly string[],
): { add: string[]; remove: string[] } {
  const want = new Set(targetingGroupUids.map(operatorGroupNamespaceLabel));
  const have = Object.keys(labels ?? {}).filter((k) =>
    k.startsWith(OlmLabelPrefix.OperatorGroupUid),
  );
  return {
    add: [...want].filter((k) => labels?.[k] === undefined).sort(),
    remove: have.filter((k) => !want.has(k)).sort(),
  };
}

/** A CSV failed the install-mode check against its group's targets. */
export interface MembershipProblem {
  reason:
    | typeof CsvReason.InvalidInstallModes
    | typeof CsvReason.NoTargetNamespaces
    | typeof CsvReason.UnsupportedOperatorGroup;
  message: string;
}

/**
 * The install-mode check of a CSV in `ownNamespace` against its olm.targetNamespaces value
 * (undefined when the annotation is missing); undefined when the CSV may run there.
 */
export function installModeProblem(
  installModes: readonly { type: string; supported: boolean }[],
  ownNamespace: string,
  targetsValue: string | undefined,
): MembershipProblem | undefined {
  const seen = new Set<string>();
  for (const mode of installModes) {
    if (seen.has(mode.type)) {
      return {
        reason: CsvReason.InvalidInstallModes,
        message: 'InstallMode list contains duplicate entry',
      };
    }
    seen.add(mode.type);
  }
  if (targetsValue === undefined) {
    return {
      reason: CsvReason.NoTargetNamespaces,
      message: 'csv missing olm.targetNamespaces annotation',
    };
  }
  const supported = new Set(installModes.filter((m) => m.supported).map((m) => m.type));
  const targets = targetsValue === '' ? [''] : targetsValue.split(',');
  const unsupported = (mode: string, what: string): MembershipProblem => ({
    reason: CsvReason.UnsupportedOperatorGroup,
    message: `${mode} InstallModeType not supported, cannot configure to watch ${what}`,
  });
  if (targets.length === 1) {
    const only = targets[0] ?? '';
    if (only === '') {
      return supported.has(InstallModeType.AllNamespaces)
        ? undefined
        : unsupported(InstallModeType.AllNamespaces, 'all namespaces');
    }
    if (only === ownNamespace) {
      return supported.has(InstallModeType.OwnNamespace)
        ? undefined
        : unsupported(InstallModeType.OwnNamespace, 'own namespace');
    }
    return supported.has(InstallModeType.SingleNamespace)
      ? undefined
      : unsupported(InstallModeType.SingleNamespace, 'one namespace');
  }
  if (!supported.has(InstallModeType.MultiNamespace)) {
    return unsupported(InstallModeType.MultiNamespace, `${targets.length} namespaces`);
  }
  for (const namespace of targets) {
    if (namespace === ownNamespace && !supported.has(InstallModeType.OwnNamespace)) {
      return unsupported(InstallModeType.OwnNamespace, 'own namespace');
    }
    if (namespace === '') {
      return {
        reason: CsvReason.UnsupportedOperatorGroup,
        message:
          'operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1',
      };
    }
  }
  return undefined;
}

function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}
