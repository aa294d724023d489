// RBAC escalation prevention, as kube-apiserver's RBAC storage does it: a user may only create
// Roles/ClusterRoles granting permissions they hold (or with the `escalate` verb), and only bind
// roles whose permissions they hold (or with the `bind` verb). OLM's scoped installs rely on it.
import {
  authorize,
  nonResourceAttributes,
  type RbacSource,
  type RequestAttributes,
  type UserInfo,
} from '../auth/index.js';
import { ApiError } from './errors.js';
import {
  isJsonObject,
  stringItems,
  type JsonObject,
  type JsonValue,
} from '../../shared/kube/json.js';
import { storageKey } from '../resources/registry.js';
import type { ResourceType } from '../resources/types.js';
import type { ObjectStore } from '../storage/store.js';

const rbacGroup = 'rbac.authorization.k8s.io';

function attributes(
  user: UserInfo,
  namespace: string,
  verb: string,
  group: string,
  resource: string,
  name: string,
): RequestAttributes {
  const [base = '', subresource = ''] = resource.split('/', 2);
  return {
    user,
    verb,
    resourceRequest: true,
    apiGroup: group,
    apiVersion: '*',
    resource: base,
    subresource,
    namespace,
    name,
    path: '',
  };
}

/** Whether `user` holds every permission of `rule` in `namespace` ("" = cluster-wide). */
function holdsRule(user: UserInfo, rule: JsonObject, namespace: string, rbac: RbacSource): boolean {
  const verbs = stringItems(rule['verbs']);
  const urls = stringItems(rule['nonResourceURLs']);
  if (urls.length > 0) {
    return urls.every((path) =>
      verbs.every((verb) => authorize(nonResourceAttributes(user, verb, path), rbac).allowed),
    );
  }
  const names = stringItems(rule['resourceNames']);
  for (const group of stringItems(rule['apiGroups'])) {
    for (const resource of stringItems(rule['resources'])) {
      for (const verb of verbs) {
        for (const name of names.length > 0 ? names : ['']) {
          if (!authorize(attributes(user, namespace, verb, group, resource, name), rbac).allowed)
            return false;
        }
      }
    }
  }
  return true;
}

function ruleText(rule: JsonObject): string {
  const list = (key: string): string =>
    `[${stringItems(rule[key])
      .map((s) => JSON.stringify(s))
      .join(' ')}]`;
  const parts: string[] = [];
  if (stringItems(rule['apiGroups']).length > 0) parts.push(`APIGroups:${list('apiGroups')}`);
  if (stringItems(rule['resources']).length > 0) parts.push(`Resources:${list('resources')}`);
  if (stringItems(rule['resourceNames']).length > 0)
    parts.push(`ResourceNames:${list('resourceNames')}`);
  if (stringItems(rule['nonResourceURLs']).length > 0)
    parts.push(`NonResourceURLs:${list('nonResourceURLs')}`);
  parts.push(`Verbs:${list('verbs')}`);
  return `{${parts.join(', ')}}`;
}

function forbidden(type: ResourceType, name: string, user: UserInfo, why: string): ApiError {
  const groups = user.groups.map((g) => JSON.stringify(g)).join(' ');
  return new ApiError(
    'Forbidden',
    `${type.resource}.${type.group} "${name}" is forbidden: user "${user.username}" (groups=[${groups}]) ${why}`,
    {
      name,
      group: type.group,
      kind: type.resource,
    },
  );
}

/** Checks a Role, ClusterRole, RoleBinding or ClusterRoleBinding a non-admin user is writing. */
export function checkRbacEscalation(
  type: ResourceType,
  object: JsonObject,
  user: UserInfo,
  store: ObjectStore,
  rbac: RbacSource,
): void {
  if (type.group !== rbacGroup || user.groups.includes('system:masters')) return;
  const metadata = object['metadata'] as JsonObject;
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';
  // Every rule granted must be one the user holds already.
  const requireHeld = (granted: JsonValue | undefined): void => {
    const rules = Array.isArray(granted) ? granted.filter(isJsonObject) : [];
    const missing = rules.filter((rule) => !holdsRule(user, rule, namespace, rbac));
    if (missing.length > 0) {
      throw forbidden(
        type,
        name,
        user,
        `is attempting to grant RBAC permissions not currently held:\n${missing.map(ruleText).join('\n')}`,
      );
    }
  };
  if (type.kind === 'Role' || type.kind === 'ClusterRole') {
    if (
      authorize(attributes(user, namespace, 'escalate', rbacGroup, type.resource, name), rbac)
        .allowed
    )
      return;
    if (type.kind === 'ClusterRole' && isJsonObject(object['aggregationRule'])) {
      throw forbidden(
        type,
        name,
        user,
        'must have cluster-admin privileges to use the aggregationRule',
      );
    }
    requireHeld(object['rules']);
    return;
  }
  if (type.kind === 'RoleBinding' || type.kind === 'ClusterRoleBinding') {
    const roleRef = isJsonObject(object['roleRef']) ? object['roleRef'] : {};
    const refKind = typeof roleRef['kind'] === 'string' ? roleRef['kind'] : '';
    const refName = typeof roleRef['name'] === 'string' ? roleRef['name'] : '';
    const refResource = refKind === 'ClusterRole' ? 'clusterroles' : 'roles';
    if (
      authorize(attributes(user, namespace, 'bind', rbacGroup, refResource, refName), rbac).allowed
    )
      return;
    const role = store.get(
      storageKey(rbacGroup, refResource),
      refKind === 'ClusterRole' ? '' : namespace,
      refName,
    );
    requireHeld(role?.['rules']);
  }
}
