// A CSV's owned APIServices as upstream's olm operator checks them (apiservices.go,
// install/apiservice.go): whether an existing APIService may be adopted, whether they are all
// Available, and whether the objects OLM made for them are all still there. Pure.
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Csv } from '../csv-status.js';
import type { CsvInPass } from './move.js';
import {
  authDelegatorBindingName,
  authReaderBindingName,
  authReaderNamespace,
  certificateSecretName,
  existingKey,
  ownedApiServicesOf,
  servedBy,
  serviceNameOf,
} from './webhooks.js';

/** Upstream's message for an owned APIService that cannot be adopted. */
export const apiServiceOwnerConflictMessage = 'unable to adopt APIService';

/** The name of an owned APIService: `<version>.<group>`. */
export const apiServiceName = (d: { version?: string; group?: string }): string =>
  `${d.version ?? ''}.${d.group ?? ''}`;

const existing = (c: CsvInPass, kind: string, ns: string | undefined, name: string) =>
  c.s.existing.get(existingKey(kind, ns, name));

/**
 * Upstream's IsAPIServiceAdoptable: the APIService names (by its olm.owner labels) this CSV,
 * the CSV it replaces, or a CSV that is being replaced or deleted. An APIService without those
 * labels, or owned by anything but a CSV, is not adoptable. Owners in other namespaces are
 * not read: one there counts as neither replaced nor deleted.
 */
export function apiServiceAdoptable(c: CsvInPass, apiService: KubeObject): boolean {
  const labels = apiService.metadata.labels ?? {};
  const kind = labels['olm.owner.kind'] ?? '';
  const name = labels['olm.owner'] ?? '';
  const namespace = labels['olm.owner.namespace'] ?? '';
  if (kind === '' || name === '' || namespace === '' || kind !== 'ClusterServiceVersion')
    return false;
  if (namespace !== c.s.namespace) return false;
  if (name === c.name) return true;
  const replaces = c.csv.spec?.replaces;
  if (replaces !== undefined && name === replaces && c.s.csvs.some((x) => x.metadata.name === name))
    return true;
  const owner = c.s.csvs.find((x) => x.metadata.name === name);
  const phase = owner?.status?.phase;
  return phase === 'Replacing' || phase === 'Deleting';
}

/** Whether an owned APIService exists that this CSV may not adopt (upstream: OwnerConflict). */
export function apiServiceOwnerConflict(c: CsvInPass): boolean {
  return ownedApiServicesOf(c.csv).some((d) => {
    const found = existing(c, 'APIService', undefined, apiServiceName(d));
    return found !== undefined && !apiServiceAdoptable(c, found);
  });
}

const available = (apiService: KubeObject): boolean =>
  (
    (apiService['status'] as { conditions?: { type?: string; status?: string }[] } | undefined)
      ?.conditions ?? []
  ).some((x) => x.type === 'Available' && x.status === 'True');

/** Upstream's areAPIServicesAvailable, without its discovery lookup: each exists and is Available. */
export function apiServicesAvailable(c: CsvInPass): boolean {
  return ownedApiServicesOf(c.csv).every((d) => {
    const found = existing(c, 'APIService', undefined, apiServiceName(d));
    return found !== undefined && available(found);
  });
}

/** Why upstream's checkAPIServiceResources fails, and whether reinstalling can help. */
export interface ApiServiceResourceProblem {
  message: string;
  /** False when an APIService cannot be adopted: reinstalling cannot help. */
  actionable: boolean;
}

const notFound = (resource: string, name: string): string => `${resource} "${name}" not found`;

/**
 * Upstream's checkAPIServiceResources, on what the pass read: each owned APIService exists,
 * may be adopted and points at its deployment's Service, which exists with its certificate
 * Secret, the Secret's Role and RoleBinding, the auth-delegator ClusterRoleBinding and the
 * kube-system auth-reader RoleBinding. Messages as Kubernetes' and upstream's errors, several
 * joined as `[a, b]` (an aggregate error). Certificates are the rotation check's.
 */
export function apiServiceResourceProblem(c: CsvInPass): ApiServiceResourceProblem | undefined {
  const errors: string[] = [];
  const ns = c.s.namespace;
  for (const d of ownedApiServicesOf(c.csv)) {
    const name = apiServiceName(d);
    const apiService = existing(c, 'APIService', undefined, name);
    if (apiService === undefined) {
      errors.push(notFound('apiservices.apiregistration.k8s.io', name));
      continue;
    }
    if (!apiServiceAdoptable(c, apiService)) {
      errors.push(`${name} is unadoptable`);
      return { message: aggregate(errors), actionable: false };
    }
    const service = serviceNameOf(servedBy(d));
    if (existing(c, 'Service', ns, service) === undefined) {
      errors.push(notFound('services', service));
      continue;
    }
    const ref = (apiService['spec'] as { service?: { name?: string; namespace?: string } })
      ?.service;
    if (ref?.name !== service || ref.namespace !== ns) {
      errors.push('found APIService and service reference mismatch');
      continue;
    }
    const secret = certificateSecretName(service);
    if (existing(c, 'Secret', ns, secret) === undefined) {
      errors.push(notFound('secrets', secret));
      continue;
    }
    const rbac = [
      ['Role', ns, secret, 'roles.rbac.authorization.k8s.io'],
      ['RoleBinding', ns, secret, 'rolebindings.rbac.authorization.k8s.io'],
      [
        'ClusterRoleBinding',
        undefined,
        authDelegatorBindingName(service),
        'clusterrolebindings.rbac.authorization.k8s.io',
      ],
      [
        'RoleBinding',
        authReaderNamespace,
        authReaderBindingName(service),
        'rolebindings.rbac.authorization.k8s.io',
      ],
    ] as const;
    for (const [kind, namespace, objectName, resource] of rbac) {
      if (existing(c, kind, namespace, objectName) === undefined)
        errors.push(notFound(resource, objectName));
    }
  }
  return errors.length === 0 ? undefined : { message: aggregate(errors), actionable: true };
}

// k8s.io/apimachinery's aggregate error text.
const aggregate = (errors: readonly string[]): string =>
  errors.length === 1 ? (errors[0] ?? '') : `[${errors.join(', ')}]`;

/** Whether the CSV owns any APIService. */
export const ownsApiServices = (csv: Csv): boolean => ownedApiServicesOf(csv).length > 0;
