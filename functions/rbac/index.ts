// The rbac function: OperatorGroup targets and status, member CSV annotations, namespace
// labels, the generated RBAC (aggregated, per-API, AllNamespaces and tenant roles) and the
// olm.providedAPIs rules between groups. See README.md.
export { createFunction, rbacDefinitions } from './function.js';
export { csvKey, groupsKey, namespaceKey, sweepKey, tenantsKey } from './keys.js';
