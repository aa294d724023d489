// A CSV namespace snapshot for the CSV lifecycle's pure decisions: the namespace ns1 with the
// given CSVs and OperatorGroups, nothing else in it unless `extra` says so.
import type { CsvNamespaceSnapshot } from '../../functions/install/csv/types.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { CsvNamespaceSnapshot as Fixture, CsvObject } from './install-fixtures.js';

export function csvNamespaceSnapshot(
  now: Date,
  csvs: CsvObject[],
  operatorGroups: KubeObject[],
  extra: Partial<Fixture> = {},
): CsvNamespaceSnapshot {
  return {
    namespace: 'ns1',
    now,
    csvs,
    operatorGroups,
    crds: new Map(),
    serviceAccounts: [],
    deployments: [],
    subscriptions: [],
    clusterRbac: [],
    certificates: new Map(),
    existing: new Map(),
    webhookConfigurations: [],
    ...extra,
  };
}
