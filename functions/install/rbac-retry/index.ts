// The rbac-retry room: another chance for CSVs that failed for good, when RBAC changes.
export { rbacRetryFunction } from './definition.js';
export type { RbacRetrySnapshot, RbacRetryWrites } from './types.js';
