// Who is calling: client certificate or bearer token (static or ServiceAccount), then the
// Impersonate-* headers, each authorized with the `impersonate` verb (kube's WithImpersonation).
import { forbiddenStatusMessage } from './forbidden.js';
import {
  allAuthenticatedGroup,
  allUnauthenticatedGroup,
  anonymousUsername,
  serviceAccountGroups,
  serviceAccountUsername,
  splitServiceAccountUsername,
  withAuthenticatedGroup,
} from './identity.js';
import type {
  AuthenticationContext,
  AuthenticationInput,
  AuthenticationResult,
  RequestAttributes,
  UserInfo,
} from './types.js';
import { authorize } from './rbac-authorizer.js';
import { verifyServiceAccountToken } from './service-account-token.js';

const unauthorized: AuthenticationResult = {
  ok: false,
  code: 401,
  reason: 'Unauthorized',
  message: 'Unauthorized',
};

const impersonateUserHeader = 'impersonate-user';
const impersonateGroupHeader = 'impersonate-group';
const impersonateUidHeader = 'impersonate-uid';
const impersonateExtraPrefix = 'impersonate-extra-';

/** The bearer token of an Authorization header, as kube's bearertoken authenticator reads it. */
function bearerToken(header: string | undefined): string | undefined {
  const value = header?.trim() ?? '';
  if (value === '') return undefined;
  const parts = value.split(' ');
  if (parts.length < 2 || parts[0]?.toLowerCase() !== 'bearer') return undefined;
  const token = parts[1] ?? '';
  return token === '' ? undefined : token;
}

/** The identity the credentials prove, before impersonation, or undefined (401). */
function authenticatedUser(
  input: AuthenticationInput,
  context: AuthenticationContext,
): UserInfo | undefined {
  // kube's authenticator union tries the client certificate before bearer tokens.
  const certificate = input.clientCertificate;
  if (certificate !== undefined && certificate.commonName !== '') {
    return withAuthenticatedGroup({
      username: certificate.commonName,
      groups: [...certificate.organizations],
    });
  }
  const token = bearerToken(input.authorizationHeader);
  if (token === undefined) return undefined;
  const staticUser = context.staticTokens.get(token);
  if (staticUser !== undefined) return withAuthenticatedGroup(staticUser);
  const verified = verifyServiceAccountToken(
    token,
    context.signingKeyPem,
    (namespace, name) => context.serviceAccountUid(namespace, name),
    context.now,
    context.tokenRevoked,
  );
  return verified.ok ? withAuthenticatedGroup(verified.user) : undefined;
}

/**
 * Every value of a header. Node joins repeated headers with ", " in `req.headers`; pass
 * `req.headersDistinct` to keep values containing ", " intact.
 */
function headerValues(headers: AuthenticationInput['headers'], name: string): string[] {
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    if (Array.isArray(value)) values.push(...value);
    else values.push(...value.split(', '));
  }
  return values;
}

function firstHeaderValue(headers: AuthenticationInput['headers'], name: string): string {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return Array.isArray(value) ? (value[0] ?? '') : value;
  }
  return '';
}

/** Go's url.PathUnescape, falling back to the raw key as kube does on a bad escape. */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** One thing the caller asks to act as, with the attributes of its `impersonate` check. */
interface ImpersonationRequest {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  namespace: string;
  name: string;
  /** UserExtra key. */
  extraKey: string;
}

function impersonationRequests(
  headers: AuthenticationInput['headers'],
): ImpersonationRequest[] | { error: string } {
  const requests: ImpersonationRequest[] = [];
  const requestedUser = firstHeaderValue(headers, impersonateUserHeader);
  if (requestedUser !== '') {
    const account = splitServiceAccountUsername(requestedUser);
    requests.push(
      account !== undefined
        ? { kind: 'ServiceAccount', namespace: account.namespace, name: account.name, extraKey: '' }
        : { kind: 'User', namespace: '', name: requestedUser, extraKey: '' },
    );
  }
  for (const group of headerValues(headers, impersonateGroupHeader)) {
    requests.push({ kind: 'Group', namespace: '', name: group, extraKey: '' });
  }
  const extraKeys = new Set(
    Object.keys(headers)
      .map((key) => key.toLowerCase())
      .filter((key) => key.startsWith(impersonateExtraPrefix)),
  );
  for (const header of extraKeys) {
    const extraKey = unescapeExtraKey(header.slice(impersonateExtraPrefix.length));
    for (const value of headerValues(headers, header)) {
      requests.push({ kind: 'UserExtra', namespace: '', name: value, extraKey });
    }
  }
  const requestedUid = firstHeaderValue(headers, impersonateUidHeader);
  if (requestedUid !== '')
    requests.push({ kind: 'UID', namespace: '', name: requestedUid, extraKey: '' });
  if (requestedUser === '' && requests.length > 0) {
    return {
      error: 'requested impersonation of groups, extra or uid without impersonating a user',
    };
  }
  return requests;
}

/**
 * What each kind of impersonation is checked as. Core kinds carry no API version in kube's
 * request; extras and uids are authentication.k8s.io/v1 resources.
 */
const impersonatedResources: Readonly<
  Record<ImpersonationRequest['kind'], { apiGroup: string; apiVersion: string; resource: string }>
> = {
  User: { apiGroup: '', apiVersion: '', resource: 'users' },
  ServiceAccount: { apiGroup: '', apiVersion: '', resource: 'serviceaccounts' },
  Group: { apiGroup: '', apiVersion: '', resource: 'groups' },
  UserExtra: { apiGroup: 'authentication.k8s.io', apiVersion: 'v1', resource: 'userextras' },
  UID: { apiGroup: 'authentication.k8s.io', apiVersion: 'v1', resource: 'uids' },
};

function impersonateAttributes(
  requestor: UserInfo,
  request: ImpersonationRequest,
): RequestAttributes {
  return {
    user: requestor,
    verb: 'impersonate',
    resourceRequest: true,
    ...impersonatedResources[request.kind],
    // The extra key is the subresource: `userextras/scopes`.
    subresource: request.extraKey,
    namespace: request.namespace,
    name: request.name,
    path: '',
  };
}

/** Authenticates a request (client cert, static or ServiceAccount bearer token; anonymous is refused) and applies impersonation headers after authorizing the `impersonate` verb. */
export function authenticate(
  input: AuthenticationInput,
  context: AuthenticationContext,
): AuthenticationResult {
  const requestor = authenticatedUser(input, context);
  if (requestor === undefined) return unauthorized;
  const requests = impersonationRequests(input.headers);
  if (!Array.isArray(requests)) {
    return { ok: false, code: 500, reason: 'InternalError', message: requests.error };
  }
  if (requests.length === 0) return { ok: true, user: requestor };

  // Groups named explicitly are the whole truth, system:authenticated included or not.
  const groupsSpecified = requests.some((r) => r.kind === 'Group');
  let username = '';
  let groups: string[] = [];
  let uid = '';
  const extra: Record<string, string[]> = {};
  for (const request of requests) {
    switch (request.kind) {
      case 'ServiceAccount':
        username = serviceAccountUsername(request.namespace, request.name);
        if (!groupsSpecified) groups = serviceAccountGroups(request.namespace);
        break;
      case 'User':
        username = request.name;
        break;
      case 'Group':
        groups.push(request.name);
        break;
      case 'UserExtra':
        (extra[request.extraKey] ??= []).push(request.name);
        break;
      case 'UID':
        uid = request.name;
        break;
    }
    const attributes = impersonateAttributes(requestor, request);
    const decision = authorize(attributes, context.rbac);
    if (!decision.allowed) {
      return {
        ok: false,
        code: 403,
        reason: 'Forbidden',
        message: forbiddenStatusMessage(attributes, decision),
      };
    }
  }

  if (username !== anonymousUsername) {
    if (!groups.some((g) => g === allAuthenticatedGroup || g === allUnauthenticatedGroup)) {
      groups.push(allAuthenticatedGroup);
    }
  } else if (!groups.includes(allUnauthenticatedGroup)) {
    groups.push(allUnauthenticatedGroup);
  }
  const user: UserInfo = {
    username,
    groups,
    ...(uid !== '' ? { uid } : {}),
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
  return { ok: true, user, impersonatedBy: requestor };
}
