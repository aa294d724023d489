// The OperatorCondition generator (upstream's, run in the CSV namespace pass): one
// OperatorCondition (operators.coreos.com/v2) per non-copied CSV, same name and namespace,
// controlled by the CSV, listing the strategy's deployments and service accounts. Pure.
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Write } from '../../../shared/kube/executor.js';
import { sameJson } from '../hash.js';
import { controllerRef } from '../kube-writes.js';
import { operatorConditionApiVersion, type OperatorConditionObject } from './types.js';

interface StrategySpecLike {
  deployments?: { name?: unknown }[];
  permissions?: { serviceAccountName?: unknown }[];
  clusterPermissions?: { serviceAccountName?: unknown }[];
}

function strategySpecOf(csv: KubeObject): StrategySpecLike {
  const spec = (csv['spec'] ?? {}) as { install?: { spec?: StrategySpecLike } };
  return spec.install?.spec ?? {};
}

const named = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** Service accounts of the CSV's strategy, clusterPermissions first; `default` when none (upstream). */
export function conditionServiceAccounts(csv: KubeObject): string[] {
  const spec = strategySpecOf(csv);
  const list = (entries: unknown): { serviceAccountName?: unknown }[] =>
    Array.isArray(entries) ? (entries as { serviceAccountName?: unknown }[]) : [];
  const accounts = [...list(spec.clusterPermissions), ...list(spec.permissions)]
    .map((p) => p.serviceAccountName)
    .filter(named);
  return accounts.length === 0 ? ['default'] : accounts;
}

/** Deployment names of the CSV's strategy. */
export function conditionDeployments(csv: KubeObject): string[] {
  const deployments = strategySpecOf(csv).deployments;
  return (Array.isArray(deployments) ? deployments : []).map((d) => d.name).filter(named);
}

const live = (csv: KubeObject): boolean =>
  csv.metadata.deletionTimestamp === undefined &&
  csv.metadata.labels?.['olm.copiedFrom'] === undefined;

/** The generator's write for the CSV's OperatorCondition, or undefined when it is as wanted. */
function generatorWrite(
  csv: KubeObject,
  existing: OperatorConditionObject | undefined,
): Write | undefined {
  const owners = [controllerRef(csv)];
  const deployments = conditionDeployments(csv);
  const serviceAccounts = conditionServiceAccounts(csv);
  if (existing === undefined) {
    return {
      op: 'create',
      object: {
        apiVersion: operatorConditionApiVersion,
        kind: 'OperatorCondition',
        metadata: {
          name: csv.metadata.name ?? '',
          namespace: csv.metadata.namespace ?? '',
          ownerReferences: owners,
        },
        spec: { deployments, serviceAccounts },
      },
    };
  }
  if (
    sameJson(existing.metadata.ownerReferences ?? [], owners) &&
    sameJson(existing.spec?.deployments ?? [], deployments) &&
    sameJson(existing.spec?.serviceAccounts ?? [], serviceAccounts)
  ) {
    return undefined;
  }
  return {
    op: 'update',
    object: {
      ...existing,
      metadata: { ...existing.metadata, ownerReferences: owners },
      spec: { ...existing.spec, deployments, serviceAccounts },
    },
  };
}

/**
 * The generator's writes for a namespace: a condition for each live (not copied, not deleted)
 * CSV that lacks one, and the CSV's owner reference, deployments and service accounts put back
 * on one that differs. `conditions` are the namespace's OperatorConditions by name.
 */
export function generatorWrites(
  csvs: readonly KubeObject[],
  conditions: ReadonlyMap<string, KubeObject>,
): Write[] {
  return csvs.flatMap((csv) => {
    if (!live(csv)) return [];
    const write = generatorWrite(csv, conditions.get(csv.metadata.name ?? ''));
    return write === undefined ? [] : [write];
  });
}
