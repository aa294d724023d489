// The rbac function's per-namespace decision (upstream syncNamespace and ensureTenantRBAC):
// the olm.operatorgroup.uid/<uid> labels of the non-global groups targeting the namespace,
// which selector groups must recompute their targets, and the Roles/RoleBindings of
// Single/MultiNamespace operators copied here, owned by the copied CSV. Pure.
import { OlmLabel } from '../../shared/api/codes.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import { labelSelectorFromObject, matchesLabelSelector } from '../../shared/kube/selectors.js';
import {
  NamespaceSet,
  canonical,
  isGlobal,
  isOwnedBy,
  namespaceLabelChanges,
  targetSelectionOf,
  tenantRole,
  tenantRoleBinding,
  type BindingObject,
  type CsvObject,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import type { OperatorGroupObject } from './types.js';

/** One copied CSV here and what its tenant RBAC is made from. */
export interface TenantSource {
  copy: CsvObject;
  /** The copy's parent, in the operator's namespace. */
  parent: CsvObject;
  /** Roles/RoleBindings in the operator's namespace with the parent's owner labels. */
  roles: readonly RoleObject[];
  bindings: readonly BindingObject[];
  /** Roles/RoleBindings here with the copy's owner labels. */
  existingRoles: readonly RoleObject[];
  existingBindings: readonly BindingObject[];
}

/** What one namespace's decision reads. */
export interface NamespaceSnapshot {
  name: string;
  /** The namespace, or undefined when it is gone. */
  namespace: KubeObject | undefined;
  allGroups: readonly OperatorGroupObject[];
  tenants: readonly TenantSource[];
}

/** The writes for one namespace and the group namespaces to sync again. */
export interface NamespaceDecision {
  writes: Write[];
  groupNamespaces: string[];
}

/** Decides one namespace. */
export function decideNamespace(s: NamespaceSnapshot): NamespaceDecision {
  const d: NamespaceDecision = { writes: [], groupNamespaces: [] };

  // Selector groups whose view of this namespace is out of date (it came, went or relabelled).
  for (const group of s.allGroups) {
    let selection;
    try {
      selection = targetSelectionOf(group);
    } catch {
      continue; // the group's own sync reports its invalid spec
    }
    if (selection.type !== 'selector') continue;
    let matches: boolean;
    try {
      matches =
        s.namespace !== undefined &&
        matchesLabelSelector(
          labelSelectorFromObject(selection.selector),
          s.namespace.metadata.labels,
        );
    } catch {
      continue;
    }
    const listed = (group.status?.namespaces ?? []).includes(s.name);
    if (matches !== listed) d.groupNamespaces.push(group.metadata.namespace ?? '');
  }
  if (
    s.namespace === undefined ||
    (s.namespace['status'] !== undefined &&
      (s.namespace['status'] as { phase?: string }).phase === 'Terminating')
  ) {
    return d;
  }

  // olm.operatorgroup.uid/<uid> labels of the non-global groups listing this namespace.
  const uids = s.allGroups
    .filter(
      (g) =>
        !isGlobal(g.status?.namespaces) &&
        new NamespaceSet(g.status?.namespaces ?? []).contains(s.name),
    )
    .map((g) => g.metadata.uid ?? '')
    .filter((uid) => uid !== '');
  const changes = namespaceLabelChanges(s.namespace.metadata.labels, uids);
  if (changes.add.length > 0 || changes.remove.length > 0) {
    const labels: Record<string, string | null> = {};
    for (const key of changes.add) labels[key] = '';
    for (const key of changes.remove) labels[key] = null;
    d.writes.push({
      op: 'patch',
      ref: { apiVersion: 'v1', kind: 'Namespace', name: s.name },
      type: 'merge',
      patch: { metadata: { resourceVersion: s.namespace.metadata.resourceVersion, labels } },
    });
  }

  // Tenant RBAC: the operator's Roles and RoleBindings, owned here by the copied CSV.
  for (const t of s.tenants) {
    const operatorNamespace = t.parent.metadata.namespace ?? '';
    if (operatorNamespace === s.name) continue;
    const owner = {
      name: t.copy.metadata.name ?? '',
      namespace: s.name,
      uid: t.copy.metadata.uid ?? '',
    };
    const parentUid = t.parent.metadata.uid ?? '';
    const existingRoles = new Map(t.existingRoles.map((r) => [r.metadata.name ?? '', r]));
    for (const role of t.roles) {
      if (!isOwnedBy(role, parentUid)) continue;
      const existing = existingRoles.get(role.metadata.name ?? '');
      if (existing === undefined) {
        d.writes.push({ op: 'create', object: tenantRole(role, owner, operatorNamespace) });
      } else if (canonical(existing.rules ?? []) !== canonical(role.rules ?? [])) {
        d.writes.push({ op: 'update', object: { ...existing, rules: role.rules ?? [] } });
      }
    }
    const existingBindings = new Set(t.existingBindings.map((b) => b.metadata.name ?? ''));
    for (const binding of t.bindings) {
      // Bindings are created once and never updated, as upstream.
      if (!isOwnedBy(binding, parentUid) || existingBindings.has(binding.metadata.name ?? ''))
        continue;
      d.writes.push({ op: 'create', object: tenantRoleBinding(binding, owner, operatorNamespace) });
    }
  }
  return d;
}

/** Whether an object carries olm.copiedFrom (a tenant copy). */
export function isTenantCopy(object: KubeObject): boolean {
  return object.metadata.labels?.[OlmLabel.CopiedFrom] !== undefined;
}
