// A CSV's requirements (upstream's requirementAndPermissionStatus): the API server's version
// against minKubeVersion, the CRDs it owns or requires, present and served, the native APIs it
// needs, and the service accounts of its install strategy with each PolicyRule checked against
// the RBAC that exists (rule-check.ts). Pure.
import type {
  CRDDescription,
  RequirementStatus,
} from '../../../shared/api/clusterserviceversion.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import { crdServed } from '../crds.js';
import type { Csv } from '../csv-status.js';
import { ruleJson, ruleSatisfied } from './rule-check.js';
import type { Strategy } from './strategy.js';
import type { CsvNamespaceSnapshot } from './types.js';

// The CRDs a CSV owns or requires (owned ones are implicitly required), deduplicated (the owned
// description wins) and sorted by name, as upstream's GetAllCRDDescriptions.
const crdsOf = (csv: Csv): CRDDescription[] => {
  const byName = new Map<string, CRDDescription>();
  for (const d of csv.spec.customresourcedefinitions?.required ?? []) byName.set(d.name, d);
  for (const d of csv.spec.customresourcedefinitions?.owned ?? []) byName.set(d.name, d);
  return [...byName.keys()].sort().map((name) => byName.get(name) as CRDDescription);
};

/** Names of every CRD the CSVs own or require. */
export function crdNamesOf(csvs: readonly Csv[]): string[] {
  return [...new Set(csvs.flatMap((c) => crdsOf(c).map((d) => d.name)))];
}

/** Upstream's minKubeVersion row: the CSV's minimum against the API server's version. */
export function minKubeVersionRow(
  csv: Csv,
  serverVersion: string | undefined,
): RequirementStatus | undefined {
  const min = csv.spec.minKubeVersion ?? '';
  if (min === '') return undefined;
  const row = {
    group: 'operators.coreos.com',
    version: 'v1alpha1',
    kind: 'ClusterServiceVersion',
    name: csv.metadata.name ?? '',
  };
  const failed = (message: string): RequirementStatus => ({
    ...row,
    status: 'PresentNotSatisfied',
    message,
  });
  if (serverVersion === undefined) return failed('Server version discovery error');
  const server = semver(serverVersion.replace(/^v/, '').split('-')[0] ?? '');
  if (server === undefined) return failed('Server version parsing error');
  const wanted = semver(min.replace(/^v/, ''));
  if (wanted === undefined) return failed('CSV version parsing error');
  if (compareSemver(wanted, server) > 0) {
    return failed(
      `CSV version requirement not met: minKubeVersion (${min}) > server version (${server.text})`,
    );
  }
  return {
    ...row,
    status: 'Present',
    message: `CSV minKubeVersion (${min}) less than server version (${serverVersion})`,
  };
}

interface Semver {
  parts: [number, number, number];
  pre: string;
  text: string;
}

// A dotted-tri version (go-semver's strict form: major.minor.patch, optional pre-release).
function semver(text: string): Semver | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(text);
  if (m === null) return undefined;
  return { parts: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ?? '', text };
}

function compareSemver(a: Semver, b: Semver): number {
  for (let i = 0; i < 3; i++) {
    const d = (a.parts[i] ?? 0) - (b.parts[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (a.pre === b.pre) return 0;
  if (a.pre === '') return 1;
  if (b.pre === '') return -1;
  return a.pre < b.pre ? -1 : 1;
}

/** The key of a native API in `RequirementsContext.nativeApis`. */
export const nativeApiKey = (gvk: { group: string; version: string; kind: string }): string =>
  `${gvk.group}/${gvk.version}/${gvk.kind}`;

// Upstream's nativeAPIs rows: each API the CSV needs from the cluster, served or not.
function nativeApiRows(csv: Csv, served: ReadonlyMap<string, boolean>): RequirementStatus[] {
  return (csv.spec.nativeAPIs ?? []).map((api) => {
    const row = { ...api, name: `${api.version}.${api.group}` };
    return served.get(nativeApiKey(api)) === true
      ? { ...row, status: 'Present', message: 'Native API exists' }
      : { ...row, status: 'NotPresent', message: 'Native API does not exist' };
  });
}

// Whether a ServiceAccount belongs to another CSV (owned by a CSV, not by this one).
const ownedByOtherCsv = (sa: { metadata: KubeObject['metadata'] }, csv: Csv): boolean => {
  const refs = sa.metadata.ownerReferences ?? [];
  return (
    refs.some((r) => r.kind === 'ClusterServiceVersion') &&
    !refs.some((r) => r.uid === csv.metadata.uid)
  );
};

// Upstream's permission rows: per service account of the strategy, present and not another
// CSV's, with one dependent per PolicyRule saying whether the existing RBAC grants it.
function accountRows(csv: Csv, strategy: Strategy, s: RequirementsSnapshot): RequirementStatus[] {
  const rows = new Map<string, RequirementStatus>();
  const check = (perms: Strategy['permissions'], scope: 'namespaced' | 'cluster'): void => {
    for (const perm of perms) {
      const name = perm.serviceAccountName;
      const row: RequirementStatus = rows.get(name) ?? {
        group: '',
        version: 'v1',
        kind: 'ServiceAccount',
        name,
        status: 'Present',
        message: '',
      };
      const sa = s.serviceAccounts.find((x) => x.metadata.name === name);
      if (sa === undefined) {
        rows.set(name, { ...row, status: 'NotPresent', message: 'Service account does not exist' });
        continue;
      }
      if (ownedByOtherCsv(sa, csv)) {
        rows.set(name, {
          ...row,
          status: 'PresentNotSatisfied',
          message: 'Service account is owned by another ClusterServiceVersion',
        });
        continue;
      }
      const rbac = s.requirements?.rbac;
      if (rbac === undefined) {
        rows.set(name, row);
        continue;
      }
      let next = row;
      const dependents = [...(row.dependents ?? [])];
      for (const rule of perm.rules) {
        const ok = ruleSatisfied(
          rbac,
          { namespace: s.namespace, name },
          scope === 'cluster' ? '' : s.namespace,
          rule,
        );
        dependents.push({
          group: 'rbac.authorization.k8s.io',
          version: 'v1',
          kind: 'PolicyRule',
          status: ok ? 'Satisfied' : 'NotSatisfied',
          message: `${scope} rule:${ruleJson(rule)}`,
        });
        if (!ok) {
          next = {
            ...next,
            status: 'PresentNotSatisfied',
            message: 'Policy rule not satisfied for service account',
          };
        }
      }
      rows.set(name, dependents.length === 0 ? next : { ...next, dependents });
    }
  };
  check(strategy.permissions, 'namespaced');
  check(strategy.clusterPermissions, 'cluster');
  return [...rows.values()];
}

/** What the requirement checks read of a namespace pass. */
export type RequirementsSnapshot = Pick<
  CsvNamespaceSnapshot,
  'namespace' | 'crds' | 'serviceAccounts' | 'requirements'
>;

/**
 * Upstream's requirement rows, in its order: minKubeVersion, CRDs, native APIs, service accounts
 * with their PolicyRule checks. The minKubeVersion, native API and rule checks need
 * `s.requirements` (read while a CSV is new or Pending); without it they are left out.
 */
export function requirementStatus(
  csv: Csv,
  strategy: Strategy,
  s: RequirementsSnapshot,
): { rows: RequirementStatus[]; met: boolean } {
  const rows: RequirementStatus[] = [];
  if (s.requirements !== undefined) {
    const minKube = minKubeVersionRow(csv, s.requirements.serverVersion);
    if (minKube !== undefined) rows.push(minKube);
  }
  for (const d of crdsOf(csv)) {
    const row = {
      group: 'apiextensions.k8s.io',
      version: 'v1',
      kind: 'CustomResourceDefinition',
      name: d.name,
    };
    const crd = s.crds.get(d.name);
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
  if (s.requirements !== undefined) rows.push(...nativeApiRows(csv, s.requirements.nativeApis));
  rows.push(...accountRows(csv, strategy, s));
  return { rows, met: rows.every((r) => r.status === 'Present') };
}
