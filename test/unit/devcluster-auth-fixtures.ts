// Builders of RBAC objects and request attributes for the auth room's tests.
import type { JsonObject } from '../../shared/kube/json.js';
import type { RbacSource, RequestAttributes, UserInfo } from '../../devcluster/auth/index.js';

/** An RbacSource over a fixed list of RBAC objects (kind decides where each goes). */
export function rbacOf(objects: readonly JsonObject[]): RbacSource {
  const ofKind = (kind: string, namespace?: string): JsonObject[] =>
    objects.filter((o) => {
      if (o['kind'] !== kind) return false;
      if (namespace === undefined) return true;
      const metadata = o['metadata'] as JsonObject | undefined;
      return metadata?.['namespace'] === namespace;
    });
  return {
    roles: (namespace) => ofKind('Role', namespace),
    roleBindings: (namespace) => ofKind('RoleBinding', namespace),
    clusterRoles: () => ofKind('ClusterRole'),
    clusterRoleBindings: () => ofKind('ClusterRoleBinding'),
  };
}

/** A ClusterRole with `rules` and `labels`. */
export function clusterRole(
  name: string,
  rules: JsonObject[],
  labels: Record<string, string> = {},
): JsonObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels },
    rules,
  };
}

/** A namespaced Role. */
export function role(namespace: string, name: string, rules: JsonObject[]): JsonObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace },
    rules,
  };
}

/** A binding subject; ServiceAccounts may leave the namespace out. */
export type SubjectSpec =
  | { kind: 'User' | 'Group'; name: string }
  | { kind: 'ServiceAccount'; name: string; namespace?: string };

function subjectJson(subject: SubjectSpec): JsonObject {
  const out: JsonObject = { kind: subject.kind, name: subject.name };
  if (subject.kind === 'ServiceAccount') {
    if (subject.namespace !== undefined) out['namespace'] = subject.namespace;
  } else {
    out['apiGroup'] = 'rbac.authorization.k8s.io';
  }
  return out;
}

/** A ClusterRoleBinding to the ClusterRole `roleName`. */
export function clusterRoleBinding(
  name: string,
  roleName: string,
  subjects: SubjectSpec[],
): JsonObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
    subjects: subjects.map(subjectJson),
  };
}

/** A RoleBinding to a Role or a ClusterRole. */
export function roleBinding(
  namespace: string,
  name: string,
  roleRef: { kind: 'Role' | 'ClusterRole'; name: string },
  subjects: SubjectSpec[],
): JsonObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
    subjects: subjects.map(subjectJson),
  };
}

/** A user authenticated by certificate, member of devs. */
export const alice: UserInfo = { username: 'alice', groups: ['devs', 'system:authenticated'] };

/** A resource request; unspecified fields are empty, as kube's RequestInfo leaves them. */
export function resourceRequest(
  user: UserInfo,
  verb: string,
  fields: Partial<Omit<RequestAttributes, 'user' | 'verb' | 'resourceRequest'>> & {
    resource: string;
  },
): RequestAttributes {
  return {
    user,
    verb,
    resourceRequest: true,
    apiGroup: '',
    apiVersion: 'v1',
    subresource: '',
    namespace: '',
    name: '',
    path: '',
    ...fields,
  };
}

/** A non-resource request such as GET /healthz. */
export { nonResourceAttributes as pathRequest } from '../../devcluster/auth/index.js';
