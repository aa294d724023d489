// Public surface of the auth room: who is calling (certificates, tokens, impersonation) and
// what they may do (RBAC, as kube-apiserver's RBAC authorizer decides it).
// CONTRACT (owned by the auth helper; bodies are filled in on its branch).
import type { JsonObject } from '../json.js';

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

export interface Decision {
  allowed: boolean;
  /** Why, in RBAC's words (which binding allowed it), or "" when denied. */
  reason: string;
}

/** Read access to the RBAC objects as currently stored (plain Kubernetes JSON). */
export interface RbacSource {
  roles(namespace: string): readonly JsonObject[];
  roleBindings(namespace: string): readonly JsonObject[];
  clusterRoles(): readonly JsonObject[];
  clusterRoleBindings(): readonly JsonObject[];
}

/** RBAC decision; members of system:masters are always allowed. */
export declare function authorize(attributes: RequestAttributes, rbac: RbacSource): Decision;

/**
 * The Forbidden message kube-apiserver writes, e.g. `User "system:serviceaccount:ns:sa" cannot
 * create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`.
 */
export declare function forbiddenMessage(attributes: RequestAttributes): string;

/** SelfSubjectRulesReview status for a user in a namespace. */
export declare function rulesReview(
  user: UserInfo,
  namespace: string,
  rbac: RbacSource,
): {
  resourceRules: JsonObject[];
  nonResourceRules: JsonObject[];
  incomplete: boolean;
  evaluationError?: string;
};

/** The rules each ClusterRole with an aggregationRule should hold (name → rules), as the aggregation controller computes them. */
export declare function aggregatedRules(
  clusterRoles: readonly JsonObject[],
): Map<string, JsonObject[]>;

/** Default RBAC objects of a fresh cluster (cluster-admin, admin/edit/view, system:* roles and bindings). */
export declare function bootstrapRbac(): JsonObject[];

/** PEM material for the server and its admin client. */
export interface ClusterCertificates {
  caCertPem: string;
  caKeyPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  adminCertPem: string;
  adminKeyPem: string;
}

/** A fresh CA, a serving certificate for `hosts` (DNS names and IPs) and an admin client certificate (CN=admin, O=system:masters). */
export declare function createClusterCertificates(
  hosts: readonly string[],
): Promise<ClusterCertificates>;

/** Issues a ServiceAccount token (TokenRequest), verifiable by `authenticate`. */
export declare function issueServiceAccountToken(
  signingKeyPem: string,
  serviceAccount: { namespace: string; name: string; uid: string },
  expirationSeconds: number,
  now: Date,
): { token: string; expirationTimestamp: string };

/** What `authenticate` needs from the request and the cluster. */
export interface AuthenticationInput {
  /** Peer certificate of the TLS connection, if any (node's tls.PeerCertificate subject fields). */
  clientCertificate?: { commonName: string; organizations: string[] } | undefined;
  authorizationHeader?: string | undefined;
  /** Impersonate-User, Impersonate-Group (repeated), Impersonate-Uid, Impersonate-Extra-* headers. */
  headers: Record<string, string | string[] | undefined>;
}

export interface AuthenticationContext {
  signingKeyPem: string;
  /** Static bearer tokens (admin kubeconfig may use one). */
  staticTokens: ReadonlyMap<string, UserInfo>;
  /** Whether a ServiceAccount (and its uid) still exists, so tokens of deleted accounts fail. */
  serviceAccountUid(namespace: string, name: string): string | undefined;
  rbac: RbacSource;
  now: Date;
}

/** Outcome of authentication + impersonation: the effective user, or an HTTP error to answer with. */
export type AuthenticationResult =
  | { ok: true; user: UserInfo; impersonatedBy?: UserInfo }
  | { ok: false; code: 401 | 403; reason: 'Unauthorized' | 'Forbidden'; message: string };

/** Authenticates a request (client cert, static or ServiceAccount bearer token; anonymous is refused) and applies impersonation headers after authorizing the `impersonate` verb. */
export declare function authenticate(
  input: AuthenticationInput,
  context: AuthenticationContext,
): AuthenticationResult;
