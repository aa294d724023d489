// The RBAC objects OLM generates around OperatorGroups: the three aggregated ClusterRoles of a
// group, the per-API ClusterRoles of an operator's owned CRDs and APIServices, and the copies of
// an operator's Roles/RoleBindings for its targets (cluster-wide for AllNamespaces groups, per
// target namespace otherwise). Names, verbs and labels are upstream's. Pure.
import { sha224Base62 } from '../kube/names.js';
import { OlmLabel, OlmLabelPrefix } from '../api/codes.js';
import type { KubeObject } from '../kube/client.js';
import { apiKeyHash, type ApiKey, type ApiSet } from './provided-apis.js';

/** The three access levels, in upstream's order. */
export const roleSuffixes = ['admin', 'edit', 'view'] as const;
/** An access level. */
export type RoleSuffix = (typeof roleSuffixes)[number];

/** Verbs of each access level. */
export const verbsForSuffix: Readonly<Record<RoleSuffix, readonly string[]>> = {
  admin: ['*'],
  edit: ['create', 'update', 'patch', 'delete'],
  view: ['get', 'list', 'watch'],
};

/** A PolicyRule (rbac.authorization.k8s.io/v1). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** An rbac.authorization.k8s.io/v1 ClusterRole or Role. */
export interface RoleObject extends KubeObject {
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors: { matchLabels: Record<string, string> }[] } | null;
}

/** An rbac.authorization.k8s.io/v1 ClusterRoleBinding or RoleBinding. */
export interface BindingObject extends KubeObject {
  subjects?: { kind: string; name: string; namespace?: string; apiGroup?: string }[];
  roleRef: { apiGroup: string; kind: string; name: string };
}

const rbacApiVersion = 'rbac.authorization.k8s.io/v1';
const kubeResourceNameLimit = 253;

/**
 * `olm.og.<group>.<suffix>-<base62(sha224("<ns>/<name>/<suffix>"))>`, the group name cut so
 * the whole stays within 253 characters (upstream getClusterRoleName).
 */
export function aggregateClusterRoleName(
  namespace: string,
  name: string,
  suffix: RoleSuffix,
): string {
  const hash = sha224Base62(`${namespace}/${name}/${suffix}`);
  const limit = kubeResourceNameLimit - 'olm.og..-'.length - suffix.length - hash.length;
  const group = name.length < limit ? name : name.slice(0, limit);
  return `olm.og.${group}.${suffix}-${hash}`;
}

/** The label a per-API ClusterRole carries so its group's aggregated role selects it. */
export function aggregationLabel(api: ApiKey, suffix: RoleSuffix): string {
  return `${OlmLabelPrefix.AggregateToOperatorGroup}${apiKeyHash(api)}-${suffix}`;
}

/** Owner labels (upstream ownerutil.OwnerLabel) pointing at `owner` of `kind`. */
export function ownerLabels(
  owner: { name: string; namespace?: string | undefined },
  kind: string,
): Record<string, string> {
  return {
    [OlmLabel.Owner]: owner.name,
    [OlmLabel.OwnerNamespace]: owner.namespace ?? '',
    [OlmLabel.OwnerKind]: kind,
  };
}

/** The label selector of objects owned (by labels) by `owner` of `kind`. */
export function ownerSelector(
  owner: { name: string; namespace?: string | undefined },
  kind: string,
): string {
  return Object.entries(ownerLabels(owner, kind))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** The aggregated ClusterRole of a group at one access level, selecting its APIs' roles. */
export function aggregateClusterRole(
  group: { name: string; namespace: string },
  suffix: RoleSuffix,
  apis: ApiSet,
): RoleObject {
  const selectors = apis
    .keys()
    .map((api) => aggregationLabel(api, suffix))
    .sort()
    .map((label) => ({ matchLabels: { [label]: 'true' } }));
  return {
    apiVersion: rbacApiVersion,
    kind: 'ClusterRole',
    metadata: {
      name: aggregateClusterRoleName(group.namespace, group.name, suffix),
      labels: { ...ownerLabels(group, 'OperatorGroup'), [OlmLabel.Managed]: 'true' },
    },
    ...(selectors.length > 0 ? { aggregationRule: { clusterRoleSelectors: selectors } } : {}),
  };
}

/** An API object a per-API ClusterRole is owned by (its CRD or APIService). */
export interface ApiOwner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

function providedApiClusterRole(
  name: string,
  suffix: RoleSuffix,
  rule: PolicyRule,
  api: ApiKey,
  owner: ApiOwner,
): RoleObject {
  return {
    apiVersion: rbacApiVersion,
    kind: 'ClusterRole',
    metadata: {
      name,
      labels: {
        [`${OlmLabelPrefix.AggregateToClusterRole}${suffix}`]: 'true',
        [aggregationLabel(api, suffix)]: 'true',
        [OlmLabel.Managed]: 'true',
      },
      ownerReferences: [{ ...owner, blockOwnerDeletion: false, controller: false }],
    },
    rules: [rule],
  };
}

/**
 * The ClusterRoles of one owned CRD (`<plural>.<group>` at `version`): `<crd>-<v>-admin`,
 * `-edit`, `-view` on the resource, and `<crd>-<v>-crdview` (get on the CRD itself).
 */
export function crdClusterRoles(
  owned: { name: string; version: string; kind: string },
  crd: ApiOwner,
): RoleObject[] {
  const dot = owned.name.indexOf('.');
  if (dot <= 0) throw new Error(`invalid parsing of name '${owned.name}': want <plural>.<group>`);
  const plural = owned.name.slice(0, dot);
  const group = owned.name.slice(dot + 1);
  const api = { group, version: owned.version, kind: owned.kind };
  const prefix = `${owned.name}-${owned.version}-`;
  return [
    ...roleSuffixes.map((suffix) =>
      providedApiClusterRole(
        prefix + suffix,
        suffix,
        { verbs: [...verbsForSuffix[suffix]], apiGroups: [group], resources: [plural] },
        api,
        crd,
      ),
    ),
    providedApiClusterRole(
      `${prefix}crdview`,
      'view',
      {
        verbs: ['get'],
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: [owned.name],
      },
      api,
      crd,
    ),
  ];
}

/** The ClusterRoles of one owned APIService: `<name>-<version>-admin|edit|view`. */
export function apiServiceClusterRoles(
  owned: { name: string; group: string; version: string; kind: string },
  apiService: ApiOwner,
): RoleObject[] {
  const api = { group: owned.group, version: owned.version, kind: owned.kind };
  return roleSuffixes.map((suffix) =>
    providedApiClusterRole(
      `${owned.name}-${owned.version}-${suffix}`,
      suffix,
      { verbs: [...verbsForSuffix[suffix]], apiGroups: [owned.group], resources: [owned.name] },
      api,
      apiService,
    ),
  );
}

/** Whether an existing role matches the intended labels, rules and aggregation rule. */
export function roleMatches(existing: RoleObject, intended: RoleObject): boolean {
  return (
    sameRecord(existing.metadata.labels, intended.metadata.labels) &&
    // An aggregated role's rules are the aggregation controller's to fill, not ours.
    (intended.aggregationRule !== undefined ||
      canonical(existing.rules ?? []) === canonical(intended.rules ?? [])) &&
    canonical(existing.aggregationRule ?? null) === canonical(intended.aggregationRule ?? null)
  );
}

/** Whether every label of `want` is on `have` with the same value, and nothing else. */
export function sameRecord(
  have: Readonly<Record<string, string>> | undefined,
  want: Readonly<Record<string, string>> | undefined,
): boolean {
  const a = Object.keys(have ?? {});
  const b = Object.keys(want ?? {});
  return a.length === b.length && b.every((k) => have?.[k] === want?.[k]);
}

/** JSON with object keys sorted and empty-vs-missing fields folded, for comparisons. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const inner = (v as Record<string, unknown>)[k];
      if (inner === undefined || (Array.isArray(inner) && inner.length === 0)) continue;
      sorted[k] = inner;
    }
    return sorted;
  });
}

/** AllNamespaces: the ClusterRole lifted from an operator's Role (its rules + view namespaces). */
export function singletonClusterRole(role: RoleObject): RoleObject {
  return {
    apiVersion: rbacApiVersion,
    kind: 'ClusterRole',
    metadata: { name: role.metadata.name ?? '', labels: { ...role.metadata.labels } },
    rules: [
      ...(role.rules ?? []),
      { verbs: [...verbsForSuffix.view], apiGroups: [''], resources: ['namespaces'] },
    ],
  };
}

/** AllNamespaces: the ClusterRoleBinding lifted from an operator's RoleBinding. */
export function singletonClusterRoleBinding(binding: BindingObject): BindingObject {
  return {
    apiVersion: rbacApiVersion,
    kind: 'ClusterRoleBinding',
    metadata: { name: binding.metadata.name ?? '', labels: { ...binding.metadata.labels } },
    subjects: binding.subjects ?? [],
    roleRef: {
      apiGroup: binding.roleRef.apiGroup,
      kind: 'ClusterRole',
      name: binding.roleRef.name,
    },
  };
}

/** The copied CSV a tenant Role/RoleBinding belongs to in its target namespace. */
export interface TenantOwner {
  name: string;
  namespace: string;
  uid: string;
}

function tenantMetadata(
  source: KubeObject,
  owner: TenantOwner,
  operatorNamespace: string,
): KubeObject['metadata'] {
  return {
    name: source.metadata.name ?? '',
    namespace: owner.namespace,
    labels: {
      ...source.metadata.labels,
      ...ownerLabels(owner, 'ClusterServiceVersion'),
      [OlmLabel.CopiedFrom]: operatorNamespace,
      [OlmLabel.Managed]: 'true',
    },
    ownerReferences: [
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        name: owner.name,
        uid: owner.uid,
        blockOwnerDeletion: false,
        controller: false,
      },
    ],
  };
}

/** Single/MultiNamespace: an operator's Role copied into a target namespace. */
export function tenantRole(
  role: RoleObject,
  owner: TenantOwner,
  operatorNamespace: string,
): RoleObject {
  return {
    apiVersion: rbacApiVersion,
    kind: 'Role',
    metadata: tenantMetadata(role, owner, operatorNamespace),
    rules: role.rules ?? [],
  };
}

/** Single/MultiNamespace: an operator's RoleBinding copied into a target namespace. */
export function tenantRoleBinding(
  binding: BindingObject,
  owner: TenantOwner,
  operatorNamespace: string,
): BindingObject {
  return {
    apiVersion: rbacApiVersion,
    kind: 'RoleBinding',
    metadata: tenantMetadata(binding, owner, operatorNamespace),
    subjects: binding.subjects ?? [],
    roleRef: binding.roleRef,
  };
}

/** Whether `object` has an owner reference to uid `uid` (upstream ownerutil.IsOwnedBy). */
export function isOwnedBy(object: KubeObject, uid: string): boolean {
  return (object.metadata.ownerReferences ?? []).some((r) => r.uid === uid);
}
