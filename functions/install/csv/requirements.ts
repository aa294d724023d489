// A CSV's requirements (upstream's requirement rows): the CRDs it owns or requires, present and
// served, and the service accounts of its install strategy. Pure.
import type { RequirementStatus } from '../../../shared/api/clusterserviceversion.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import { crdServed } from '../crds.js';
import type { CsvObject } from '../csv-status.js';
import type { Strategy } from './strategy.js';

const ownedCrds = (csv: CsvObject): { name: string; version?: string }[] =>
  (
    csv.spec?.['customresourcedefinitions'] as
      { owned?: { name: string; version?: string }[] } | undefined
  )?.owned ?? [];
const requiredCrds = (csv: CsvObject): { name: string; version?: string }[] =>
  (
    csv.spec?.['customresourcedefinitions'] as
      { required?: { name: string; version?: string }[] } | undefined
  )?.required ?? [];

/** Names of every CRD the CSVs own or require. */
export function crdNamesOf(csvs: readonly CsvObject[]): string[] {
  return [
    ...new Set(csvs.flatMap((c) => [...ownedCrds(c), ...requiredCrds(c)].map((d) => d.name))),
  ];
}

/** Upstream's requirement rows for CRDs and service accounts. */
export function requirementStatus(
  csv: CsvObject,
  strategy: Strategy,
  crds: ReadonlyMap<string, KubeObject>,
  serviceAccounts: readonly KubeObject[],
): { rows: RequirementStatus[]; met: boolean } {
  const rows: RequirementStatus[] = [];
  for (const d of [...ownedCrds(csv), ...requiredCrds(csv)]) {
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
    const versions = ((
      crd['spec'] as { versions?: { name: string; served?: boolean }[] } | undefined
    )?.versions ?? []) as { name: string; served?: boolean }[];
    if (
      d.version !== undefined &&
      d.version !== '' &&
      !versions.some((v) => v.name === d.version && v.served !== false)
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
