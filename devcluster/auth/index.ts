// Public surface of the auth room: who is calling (certificates, tokens, impersonation) and
// what they may do (RBAC, as kube-apiserver's RBAC authorizer decides it).
// The contract types are in types.ts; the functions live in the files named by the exports.
//
// Per request the API layer calls `authenticate` (401/403/500 answers come ready-made), then
// `authorize` with the effective user; on a denial it answers `forbiddenStatus(attributes,
// decision)`. The RBAC objects are read through an `RbacSource` at every call, so changes apply
// at once; ClusterRoles with an aggregationRule get their rules from `aggregatedRulesOf` (the
// aggregation controller's job, run for each aggregated role a ClusterRole change may feed).
export type {
  UserInfo,
  RequestAttributes,
  Decision,
  RbacSource,
  ClusterCertificates,
  AuthenticationInput,
  AuthenticationContext,
  AuthenticationResult,
} from './types.js';
export { authenticate } from './authentication.js';
export {
  aggregatedRules,
  aggregatedRulesOf,
  aggregationSelects,
  labelsOf,
  type LabelPredicate,
} from './aggregation.js';
export { nonResourceAttributes } from './attributes.js';
export { bootstrapRbac } from './bootstrap-policy.js';
export { createClusterCertificates } from './certificates.js';
export { forbiddenMessage, forbiddenStatus, forbiddenStatusMessage } from './forbidden.js';
export { authorize, rulesReview } from './rbac-authorizer.js';
export {
  createServiceAccountSigningKey,
  InvalidSigningKeyError,
  issueServiceAccountToken,
  serviceAccountIssuer,
  UnsupportedSigningKeyError,
  verifyServiceAccountToken,
} from './service-account-token.js';
export type { TokenRejection, TokenVerification } from './service-account-token.js';
export type { IssuedToken } from './types.js';
