// Whether the RBAC that exists grants a service account one PolicyRule of a CSV (upstream's
// CSVRuleChecker: the rule unfolded into one request per verb × group × resource × name ×
// non-resource URL, each put to kube's RBAC authorization over the cluster's Roles, RoleBindings,
// ClusterRoles and ClusterRoleBindings). The account is matched as a user without groups, as
// upstream's checker asks. Pure.
import type { PolicyRule } from '../../../shared/api/meta.js';
import type {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
} from '../../../shared/api/core.js';
import type { Served } from '../../../shared/kube/served.js';

/** The RBAC a rule check reads: the CSV namespace's Roles/RoleBindings and the cluster's. */
export interface RbacView {
  roles: readonly Served<Role>[];
  roleBindings: readonly Served<RoleBinding>[];
  clusterRoles: readonly Served<ClusterRole>[];
  clusterRoleBindings: readonly Served<ClusterRoleBinding>[];
}

/** One request the rule stands for ("" where the rule lists nothing). */
interface Request {
  verb: string;
  group: string;
  resource: string;
  name: string;
  path: string;
}

const orEmpty = (list: readonly string[] | undefined): readonly string[] =>
  list === undefined || list.length === 0 ? [''] : list;

function requestsOf(rule: PolicyRule): Request[] {
  const out: Request[] = [];
  for (const verb of rule.verbs)
    for (const group of orEmpty(rule.apiGroups))
      for (const resource of orEmpty(rule.resources))
        for (const name of orEmpty(rule.resourceNames))
          for (const path of orEmpty(rule.nonResourceURLs))
            out.push({ verb, group, resource, name, path });
  return out;
}

const has = (list: readonly string[] | undefined, value: string): boolean =>
  (list ?? []).some((v) => v === '*' || v === value);

/** Whether `granting` allows `r` (kube's RuleAllows for a request without subresource). */
function allows(granting: PolicyRule, r: Request): boolean {
  if (!has(granting.verbs, r.verb)) return false;
  if (r.path !== '') {
    return (granting.nonResourceURLs ?? []).some(
      (u) => u === '*' || u === r.path || (u.endsWith('*') && r.path.startsWith(u.slice(0, -1))),
    );
  }
  const names = granting.resourceNames ?? [];
  return (
    has(granting.apiGroups, r.group) &&
    has(granting.resources, r.resource) &&
    (names.length === 0 || names.includes(r.name))
  );
}

interface Account {
  namespace: string;
  name: string;
}

function bindsAccount(subjects: RoleBinding['subjects'], sa: Account): boolean {
  return (subjects ?? []).some(
    (s) =>
      (s.kind === 'ServiceAccount' && s.name === sa.name && s.namespace === sa.namespace) ||
      (s.kind === 'User' && s.name === `system:serviceaccount:${sa.namespace}:${sa.name}`),
  );
}

/** The rules granted to `sa` in `namespace` ("" for cluster scope: cluster bindings only). */
function grantedRules(view: RbacView, sa: Account, namespace: string): PolicyRule[] {
  const clusterRole = (name: string): PolicyRule[] =>
    view.clusterRoles.find((r) => r.metadata.name === name)?.rules ?? [];
  const rules: PolicyRule[] = [];
  for (const b of view.clusterRoleBindings) {
    if (b.roleRef.kind === 'ClusterRole' && bindsAccount(b.subjects, sa))
      rules.push(...clusterRole(b.roleRef.name));
  }
  if (namespace === '') return rules;
  for (const b of view.roleBindings) {
    if (b.metadata.namespace !== namespace || !bindsAccount(b.subjects, sa)) continue;
    if (b.roleRef.kind === 'ClusterRole') rules.push(...clusterRole(b.roleRef.name));
    else {
      const role = view.roles.find(
        (r) => r.metadata.namespace === namespace && r.metadata.name === b.roleRef.name,
      );
      rules.push(...(role?.rules ?? []));
    }
  }
  return rules;
}

/** Whether every request of `rule` is allowed to `sa` in `namespace` ("" for cluster scope). */
export function ruleSatisfied(
  view: RbacView,
  sa: Account,
  namespace: string,
  rule: PolicyRule,
): boolean {
  const granted = grantedRules(view, sa, namespace);
  return requestsOf(rule).every((r) => granted.some((g) => allows(g, r)));
}

/** A rule as Go's encoding/json writes an rbacv1.PolicyRule (field order, empty lists left out). */
export function ruleJson(rule: PolicyRule): string {
  const list = (l: readonly string[] | undefined) =>
    l !== undefined && l.length > 0 ? l : undefined;
  return JSON.stringify({
    verbs: rule.verbs,
    apiGroups: list(rule.apiGroups),
    resources: list(rule.resources),
    resourceNames: list(rule.resourceNames),
    nonResourceURLs: list(rule.nonResourceURLs),
  });
}
