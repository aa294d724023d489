// The install function's work keys, one type per reconciler (per queue). Triggers name work
// only through these.
import { workKeyType } from '../../shared/runtime/work-keys.js';

/** One InstallPlan, executed step by step. */
export const installPlanKey = workKeyType('install-plan', ['namespace', 'name']);

/** The CSVs of one namespace (a CSV's phase depends on its neighbours and its group). */
export const csvNamespaceKey = workKeyType('install-csv', ['namespace']);

/** One OperatorCondition (named after its CSV). */
export const operatorConditionKey = workKeyType('install-operator-condition', [
  'namespace',
  'name',
]);

/** The CSVs of one namespace that failed for good, retried when its RBAC changes. */
export const rbacRetryKey = workKeyType('install-rbac-retry', ['namespace']);
