// Contract types of the auth room: identities, request attributes, decisions, the RBAC objects
// read at every call, and what authentication needs and answers.
import type { JsonObject } from '../../shared/kube/json.js';

/** An authenticated identity (user.Info). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** Request attributes the authorizer judges (authorizer.Attributes). */
export interface RequestAttributes {
  user: UserInfo;
  /** get, list, watch, create, update, patch, delete, deletecollection, impersonate, ... */
  verb: string;
  resourceRequest: boolean;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** Request path, for non-resource requests. */
  path: string;
}

/** An authorization decision (authorizer.Decision with its reason). */
export interface Decision {
  allowed: boolean;
  /** Why, in RBAC's words (which binding allowed it), or "" when denied. */
  reason: string;
  /**
   * When denied: RBAC's resolution errors (e.g. `RBAC: clusterrole.rbac.authorization.k8s.io "x"
   * not found`), which kube appends to the Forbidden message; absent when there were none.
   */
  evaluationError?: string;
}

/** Read access to the RBAC objects as currently stored (plain Kubernetes JSON). */
export interface RbacSource {
  roles(namespace: string): readonly JsonObject[];
  roleBindings(namespace: string): readonly JsonObject[];
  clusterRoles(): readonly JsonObject[];
  clusterRoleBindings(): readonly JsonObject[];
}

/** PEM material for the server and its admin client. */
export interface ClusterCertificates {
  caCertPem: string;
  caKeyPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  adminCertPem: string;
  adminKeyPem: string;
}

/** What `authenticate` needs from the request and the cluster. */
export interface AuthenticationInput {
  /**
   * Peer certificate of the TLS connection, only when the TLS layer verified it against the
   * cluster CA (`socket.authorized`): subject CN, and O as a list (node gives a string for one O).
   */
  clientCertificate?: { commonName: string; organizations: string[] } | undefined;
  authorizationHeader?: string | undefined;
  /**
   * Impersonate-User, Impersonate-Group (repeated), Impersonate-Uid, Impersonate-Extra-* headers
   * (any letter case). Pass node's `req.headersDistinct`: with `req.headers`, repeated values arrive
   * joined by ", " and are split back on it.
   */
  headers: Record<string, string | string[] | undefined>;
}

/** Which account a verified token is for, when it was issued, and its id (for revocation). */
export interface IssuedToken {
  namespace: string;
  name: string;
  /** `iat`, in seconds since the epoch. */
  issuedAt: number;
  jti: string;
}

/** What `authenticate` needs from the cluster: keys, tokens, ServiceAccounts, RBAC and the clock. */
export interface AuthenticationContext {
  signingKeyPem: string;
  /** Static bearer tokens (admin kubeconfig may use one). */
  staticTokens: ReadonlyMap<string, UserInfo>;
  /** Whether a ServiceAccount (and its uid) still exists, so tokens of deleted accounts fail. */
  serviceAccountUid(namespace: string, name: string): string | undefined;
  /** Whether a ServiceAccount token was revoked (the devcluster's token rotation hook). */
  tokenRevoked?: ((token: IssuedToken) => boolean) | undefined;
  rbac: RbacSource;
  now: Date;
}

/** Outcome of authentication + impersonation: the effective user, or an HTTP error to answer with. */
export type AuthenticationResult =
  | { ok: true; user: UserInfo; impersonatedBy?: UserInfo }
  | { ok: false; code: 401 | 403; reason: 'Unauthorized' | 'Forbidden'; message: string }
  /** Impersonation headers without Impersonate-User: kube answers 500 too. */
  | { ok: false; code: 500; reason: 'InternalError'; message: string };
