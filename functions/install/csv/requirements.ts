// A CSV's requirements (upstream's requirement rows): the CRDs it owns or requires, present and
// served, and the service accounts of its install strategy. Pure.
import type {
  CRDDescription,
  RequirementStatus,
} from '../../../shared/api/clusterserviceversion.js';
import { crdServed, type Crd } from '../crds.js';
import type { Csv } from '../csv-status.js';
import type { Strategy } from './strategy.js';
import type { CsvNamespaceSnapshot } from './types.js';

// The CRDs a CSV owns or requires (owned ones are implicitly required).
const crdsOf = (csv: Csv): CRDDescription[] => [
  ...(csv.spec.customresourcedefinitions?.owned ?? []),
  ...(csv.spec.customresourcedefinitions?.required ?? []),
];

/** Names of every CRD the CSVs own or require. */
export function crdNamesOf(csvs: readonly Csv[]): string[] {
  return [...new Set(csvs.flatMap((c) => crdsOf(c).map((d) => d.name)))];
}

/** Upstream's requirement rows for CRDs and service accounts. */
export function requirementStatus(
  csv: Csv,
  strategy: Strategy,
  crds: ReadonlyMap<string, Crd>,
  serviceAccounts: CsvNamespaceSnapshot['serviceAccounts'],
): { rows: RequirementStatus[]; met: boolean } {
  const rows: RequirementStatus[] = [];
  for (const d of crdsOf(csv)) {
    const row = {
      group: 'apiextensions.k8s.io',
      version: 'v1',
      kind: 'CustomResourceDefinition',
      name: d.name,
    };
    const crd = crds.get(d.name);
    if (crd === undefined) {
      rows.push({ ...row, status: 'NotPresent', message: 'CRD is not present' });
      continue;
    }
    if (
      d.version !== undefined &&
      d.version !== '' &&
      !(crd.spec?.versions ?? []).some((v) => v.name === d.version && v.served !== false)
    ) {
      rows.push({ ...row, status: 'NotPresent', message: 'CRD version not served' });
      continue;
    }
    if (crdServed(crd)) {
      rows.push({
        ...row,
        status: 'Present',
        message: 'CRD is present and Established condition is true',
        ...(crd.metadata.uid === undefined ? {} : { uuid: crd.metadata.uid }),
      });
    } else {
      rows.push({
        ...row,
        status: 'PresentNotAvailable',
        message: 'CRD is present but the Established condition is False (not available)',
      });
    }
  }
  const accounts = [...strategy.permissions, ...strategy.clusterPermissions].map(
    (p) => p.serviceAccountName,
  );
  for (const name of [...new Set(accounts)]) {
    const row = { group: '', version: 'v1', kind: 'ServiceAccount', name };
    const sa = serviceAccounts.find((s) => s.metadata.name === name);
    if (sa === undefined) {
      rows.push({ ...row, status: 'NotPresent', message: 'Service account does not exist' });
      continue;
    }
    rows.push({
      ...row,
      status: 'Present',
      message: '',
      ...(sa.metadata.uid === undefined ? {} : { uuid: sa.metadata.uid }),
    });
  }
  return { rows, met: rows.every((r) => r.status === 'Present') };
}
