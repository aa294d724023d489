// PolicyRule matching exactly as kube's RBAC authorizer does it (rbac.RuleAllows).
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import type { RequestAttributes } from './types.js';

/** A PolicyRule with every list present (absent lists read as empty, as in Go). */
export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

function stringList(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Reads one stored PolicyRule. */
export function policyRuleFromJson(rule: JsonObject): PolicyRule {
  return {
    verbs: stringList(rule['verbs']),
    apiGroups: stringList(rule['apiGroups']),
    resources: stringList(rule['resources']),
    resourceNames: stringList(rule['resourceNames']),
    nonResourceURLs: stringList(rule['nonResourceURLs']),
  };
}

/** Reads the `rules` of a stored Role or ClusterRole. */
export function policyRulesOf(role: JsonObject): PolicyRule[] {
  const rules = role['rules'];
  return Array.isArray(rules) ? rules.filter(isJsonObject).map(policyRuleFromJson) : [];
}

/** The stored form of a rule: Go's field order, empty lists omitted (omitempty). */
export function policyRuleToJson(rule: PolicyRule): JsonObject {
  const out: JsonObject = { verbs: [...rule.verbs] };
  if (rule.apiGroups.length > 0) out['apiGroups'] = [...rule.apiGroups];
  if (rule.resources.length > 0) out['resources'] = [...rule.resources];
  if (rule.resourceNames.length > 0) out['resourceNames'] = [...rule.resourceNames];
  if (rule.nonResourceURLs.length > 0) out['nonResourceURLs'] = [...rule.nonResourceURLs];
  return out;
}

function listsEqual(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Field-by-field equality, order-sensitive, empty and absent lists equal (equality.Semantic). */
export function policyRulesEqual(a: PolicyRule, b: PolicyRule): boolean {
  return (
    listsEqual(a.verbs, b.verbs) &&
    listsEqual(a.apiGroups, b.apiGroups) &&
    listsEqual(a.resources, b.resources) &&
    listsEqual(a.resourceNames, b.resourceNames) &&
    listsEqual(a.nonResourceURLs, b.nonResourceURLs)
  );
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === '*' || v === verb);
}

function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return rule.apiGroups.some((g) => g === '*' || g === group);
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return rule.resources.some(
    (r) =>
      r === '*' ||
      r === combined ||
      // `*/scale` grants the scale subresource of every resource.
      (subresource !== '' && r.length === subresource.length + 2 && r === `*/${subresource}`),
  );
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(name);
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return rule.nonResourceURLs.some((url) => {
    if (url === '*' || url === path) return true;
    // A trailing `*` is a prefix match (kube trims every trailing `*`).
    return url.endsWith('*') && path.startsWith(url.replace(/\*+$/, ''));
  });
}

/** Whether `rule` grants the request described by `attributes`. */
export function ruleAllows(attributes: RequestAttributes, rule: PolicyRule): boolean {
  if (attributes.resourceRequest) {
    const combined =
      attributes.subresource === ''
        ? attributes.resource
        : `${attributes.resource}/${attributes.subresource}`;
    return (
      verbMatches(rule, attributes.verb) &&
      apiGroupMatches(rule, attributes.apiGroup) &&
      resourceMatches(rule, combined, attributes.subresource) &&
      resourceNameMatches(rule, attributes.name)
    );
  }
  return verbMatches(rule, attributes.verb) && nonResourceURLMatches(rule, attributes.path);
}
