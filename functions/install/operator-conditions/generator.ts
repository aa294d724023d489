// The OperatorCondition generator (upstream's, run in the CSV namespace pass): one
// OperatorCondition (operators.coreos.com/v2) per non-copied CSV, same name and namespace,
// controlled by the CSV, listing the strategy's deployments and service accounts. Pure.
import type {
  ClusterServiceVersionSpec,
  StrategyDetailsDeployment,
} from '../../../shared/api/clusterserviceversion.js';
import { csvComponentLabels } from '../../../shared/api/component-labels.js';
import type { Write } from '../../../shared/kube/executor.js';
import type { Csv } from '../csv-status.js';
import { sameJson } from '../hash.js';
import { controllerRef } from '../kube-writes.js';
import { operatorConditionApiVersion, type ServedOperatorCondition } from './types.js';

/**
 * A CSV as the generator reads it: its identity and whatever strategy it has (any strategy, not
 * only a valid one, is read for its names).
 */
export type GeneratorCsv = Pick<Csv, 'apiVersion' | 'kind' | 'metadata'> & {
  spec?: Partial<ClusterServiceVersionSpec> | undefined;
};

const strategySpecOf = (csv: GeneratorCsv): Partial<StrategyDetailsDeployment> =>
  csv.spec?.install?.spec ?? {};

const named = (value: unknown): value is string => typeof value === 'string' && value !== '';
const list = <T>(entries: T[] | undefined): T[] => (Array.isArray(entries) ? entries : []);

/** Service accounts of the CSV's strategy, clusterPermissions first; `default` when none (upstream). */
export function conditionServiceAccounts(csv: GeneratorCsv): string[] {
  const spec = strategySpecOf(csv);
  const accounts = [...list(spec.clusterPermissions), ...list(spec.permissions)]
    .map((p) => p.serviceAccountName)
    .filter(named);
  return accounts.length === 0 ? ['default'] : accounts;
}

/** Deployment names of the CSV's strategy. */
export function conditionDeployments(csv: GeneratorCsv): string[] {
  return list(strategySpecOf(csv).deployments)
    .map((d) => d.name)
    .filter(named);
}

const live = (csv: GeneratorCsv): boolean =>
  csv.metadata.deletionTimestamp === undefined &&
  csv.metadata.labels?.['olm.copiedFrom'] === undefined;

/** The generator's write for the CSV's OperatorCondition, or undefined when it is as wanted. */
function generatorWrite(
  csv: GeneratorCsv,
  existing: ServedOperatorCondition | undefined,
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
          // The CSV's Operators, as adoption would label the condition a moment later.
          labels: csvComponentLabels(csv),
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
  csvs: readonly GeneratorCsv[],
  conditions: ReadonlyMap<string, ServedOperatorCondition>,
): Write[] {
  return csvs.flatMap((csv) => {
    if (!live(csv)) return [];
    const write = generatorWrite(csv, conditions.get(csv.metadata.name ?? ''));
    return write === undefined ? [] : [write];
  });
}
