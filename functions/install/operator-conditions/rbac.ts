// The Role and RoleBinding an OperatorCondition controls: get/update/patch on that one
// OperatorCondition for the service accounts it lists. Pure.
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Write } from '../../../shared/kube/executor.js';
import { sameJson } from '../hash.js';
import { controllerRef } from '../kube-writes.js';
import type { ServedOperatorCondition } from './types.js';

const ownedBy = (object: KubeObject, owner: KubeObject): boolean =>
  (object.metadata.ownerReferences ?? []).some((r) => r.uid === owner.metadata.uid);

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

/** The writes that bring the Role of `condition` to what it should be. */
export function roleWrites(
  condition: ServedOperatorCondition,
  existing: KubeObject | undefined,
): Write[] {
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

/** The writes that bring the RoleBinding of `condition` to what it should be. */
export function roleBindingWrites(
  condition: ServedOperatorCondition,
  existing: KubeObject | undefined,
): Write[] {
  const name = condition.metadata.name ?? '';
  const namespace = condition.metadata.namespace ?? '';
  // No namespace and no apiGroup on the subjects, as upstream: a RoleBinding's own namespace
  // is implied, and a ServiceAccount subject's empty apiGroup is what kube-apiserver leaves out
  // when it serves the binding (an explicit '' would never compare equal to the stored one).
  const subjects = (condition.spec?.serviceAccounts ?? []).map((sa) => ({
    kind: 'ServiceAccount',
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
        // The binding as read (possibly from a lagging mirror): a newer one is decided again.
        preconditions: {
          ...(existing.metadata.uid === undefined ? {} : { uid: existing.metadata.uid }),
          ...(existing.metadata.resourceVersion === undefined
            ? {}
            : { resourceVersion: existing.metadata.resourceVersion }),
        },
      },
      { op: 'create', object: intended },
    ];
  }
  if (ownedBy(existing, condition) && sameJson(existing['subjects'] ?? [], subjects)) return [];
  return takeOver(existing, intended.metadata.ownerReferences ?? [], { subjects });
}
