// ServiceAccount identities and the well-known groups, as kube-apiserver names them.
import type { UserInfo } from './types.js';

/** Group every authenticated request carries. */
export const allAuthenticatedGroup = 'system:authenticated';
/** Group of anonymous requests (never produced here: anonymous access is refused). */
export const allUnauthenticatedGroup = 'system:unauthenticated';
/** Username of anonymous requests. */
export const anonymousUsername = 'system:anonymous';
/** Members of this group pass every authorization check. */
export const privilegedGroup = 'system:masters';

const serviceAccountUsernamePrefix = 'system:serviceaccount:';
const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** `system:serviceaccount:<namespace>:<name>`. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${serviceAccountUsernamePrefix}${namespace}:${name}`;
}

/** `system:serviceaccounts` and `system:serviceaccounts:<namespace>`. */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

function isDnsSubdomain(value: string): boolean {
  return value.length <= 253 && value.split('.').every((label) => dnsLabel.test(label));
}

/**
 * The namespace and name of a ServiceAccount username, or undefined when `username` is not one
 * (kube also requires both parts to be valid object names, otherwise it is a plain user).
 */
export function splitServiceAccountUsername(
  username: string,
): { namespace: string; name: string } | undefined {
  if (!username.startsWith(serviceAccountUsernamePrefix)) return undefined;
  const parts = username.slice(serviceAccountUsernamePrefix.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace = '', name = ''] = parts;
  if (namespace.length > 63 || !dnsLabel.test(namespace) || !isDnsSubdomain(name)) {
    return undefined;
  }
  return { namespace, name };
}

/** Adds `system:authenticated` unless the user already has it or `system:unauthenticated` (kube's AuthenticatedGroupAdder). */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.username === anonymousUsername) return user;
  if (user.groups.some((g) => g === allAuthenticatedGroup || g === allUnauthenticatedGroup)) {
    return user;
  }
  return { ...user, groups: [...user.groups, allAuthenticatedGroup] };
}
