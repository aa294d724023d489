// The functions of this build: their names and their modules, loaded lazily so a replica of one
// function never loads another's code. `olmq run` and `olmq up` (through system/) host them;
// cli/commands.ts takes the names for `olmq run <function>`.
import type { CreateFunction } from '../shared/runtime/function-module.js';
import { catalogSourceKey } from './catalog/keys.js';
import * as copyCsvKeys from './copy-csv/keys.js';
import * as installKeys from './install/keys.js';
import * as operatorKeys from './operator/keys.js';
import { planKey } from './plan/keys.js';
import * as rbacKeys from './rbac/keys.js';
import { resolveKey } from './resolve/keys.js';

/** The functions `olmq run` can host, one per OLM concern, in the order `olmq up` starts them. */
export const functionNames = [
  'catalog',
  'resolve',
  'plan',
  'install',
  'rbac',
  'copy-csv',
  'operator',
] as const;

/** One of functionNames. */
export type FunctionName = (typeof functionNames)[number];

/** Function name → lazy loader of its module. */
export const functionModules: Readonly<Record<FunctionName, () => Promise<CreateFunction>>> = {
  catalog: () => import('./catalog/index.js').then((m) => m.createFunction),
  resolve: () => import('./resolve/index.js').then((m) => m.createFunction),
  plan: () => import('./plan/index.js').then((m) => m.createFunction),
  install: () => import('./install/index.js').then((m) => m.createFunction),
  rbac: () => import('./rbac/index.js').then((m) => m.createFunction),
  'copy-csv': () => import('./copy-csv/index.js').then((m) => m.createFunction),
  operator: () => import('./operator/index.js').then((m) => m.createFunction),
};

/**
 * The functions whose replicas keep a live copy of the mirror (shared/bus/mirror-copy.ts) when
 * run as their own processes: those on the path of every Subscription, whose reconciles read
 * many objects of a few kinds. Not rbac and copy-csv, which reconcile each namespace of a
 * cluster of thousands: following every change of such a cluster costs them more CPU than their
 * reads save. (`olmq up` runs every function in one process, whose copy all of them read.)
 */
export const keepsMirrorCopy: ReadonlySet<string> = new Set<FunctionName>([
  'catalog',
  'resolve',
  'plan',
  'install',
  'operator',
]);

/**
 * The queues of each function: one per work-key type, i.e. per definition its module returns
 * (each has a durable work consumer per served cluster, `<queue>-work-<cluster>`, which
 * deployments scale on). From the
 * functions' keys.ts files, which load nothing else.
 */
export const functionQueues: Readonly<Record<FunctionName, readonly string[]>> = {
  catalog: [catalogSourceKey.queue],
  resolve: [resolveKey.queue],
  plan: [planKey.queue],
  install: [
    installKeys.installPlanKey,
    installKeys.csvNamespaceKey,
    installKeys.operatorConditionKey,
    installKeys.rbacRetryKey,
  ].map((k) => k.queue),
  rbac: [
    rbacKeys.groupsKey,
    rbacKeys.csvKey,
    rbacKeys.namespaceKey,
    rbacKeys.tenantsKey,
    rbacKeys.sweepKey,
  ].map((k) => k.queue),
  'copy-csv': [copyCsvKeys.namespaceKey, copyCsvKeys.sourceKey, copyCsvKeys.olmConfigKey].map(
    (k) => k.queue,
  ),
  operator: [operatorKeys.adoptionKey, operatorKeys.operatorKey].map((k) => k.queue),
};
