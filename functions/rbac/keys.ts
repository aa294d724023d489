// The rbac function's work keys, one type per definition (per queue). Triggers and decisions
// name work only through these.
import { workKeyType } from '../../shared/runtime/work-keys.js';

/** Every OperatorGroup of one namespace, synced together (upstream syncOperatorGroups). */
export const groupsKey = workKeyType('rbac-groups', ['namespace']);

/** One non-copied CSV: its provided-API gate, per-API roles and AllNamespaces RBAC. */
export const csvKey = workKeyType('rbac-csv', ['namespace', 'name']);

/** One namespace: its group labels and tenant RBAC (upstream syncNamespace). */
export const namespaceKey = workKeyType('rbac-namespace', ['namespace']);

/** An operator (its CSV) whose Roles changed: fans out to the namespaces it targets. */
export const tenantsKey = workKeyType('rbac-tenants', ['namespace', 'name']);

/** Labels of vanished groups, removed cluster-wide (one key per cluster). */
export const sweepKey = workKeyType('rbac-sweep', []);
