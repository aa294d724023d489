// Request attributes built in one place for every caller that asks the authorizer about a
// non-resource URL: the HTTP front end, access reviews and RBAC escalation checks.
import type { RequestAttributes, UserInfo } from './types.js';

/** Attributes of a request for a non-resource URL (/healthz, /apis, ...): only verb and path count. */
export function nonResourceAttributes(
  user: UserInfo,
  verb: string,
  path: string,
): RequestAttributes {
  return {
    user,
    verb,
    resourceRequest: false,
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
    path,
  };
}
