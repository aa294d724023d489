// The ClusterRole aggregation controller's computation (clusterroleaggregation.syncClusterRole).
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import type { PolicyRule } from './policy-rule.js';
import { policyRuleFromJson, policyRulesEqual, policyRuleToJson } from './policy-rule.js';

type Labels = Readonly<Record<string, string>>;

function metadataOf(object: JsonObject): JsonObject {
  const metadata = object['metadata'];
  return isJsonObject(metadata) ? metadata : {};
}

function nameOf(object: JsonObject): string {
  const name = metadataOf(object)['name'];
  return typeof name === 'string' ? name : '';
}

/** The labels of an object, as a selector sees them. */
export function labelsOf(object: JsonObject): Labels {
  const labels = metadataOf(object)['labels'];
  const out: Record<string, string> = {};
  if (!isJsonObject(labels)) return out;
  for (const [key, value] of Object.entries(labels))
    if (typeof value === 'string') out[key] = value;
  return out;
}

function stringList(value: JsonValue | undefined): string[] | undefined {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return undefined;
  return value.every((v) => typeof v === 'string') ? value : undefined;
}

/** A compiled label selector: a predicate over labels. */
export type LabelPredicate = (labels: Labels) => boolean;

/**
 * Compiles a metav1.LabelSelector (matchLabels AND matchExpressions; `{}` matches everything),
 * or returns undefined when it is invalid (kube then fails the whole sync).
 */
export function compileLabelSelector(selector: JsonObject): LabelPredicate | undefined {
  const tests: LabelPredicate[] = [];
  const matchLabels = selector['matchLabels'];
  if (isJsonObject(matchLabels)) {
    for (const [key, value] of Object.entries(matchLabels)) {
      if (typeof value !== 'string') return undefined;
      tests.push((labels) => labels[key] === value);
    }
  } else if (matchLabels !== undefined && matchLabels !== null) {
    return undefined;
  }
  const expressions = selector['matchExpressions'] ?? [];
  if (!Array.isArray(expressions)) return undefined;
  for (const expression of expressions) {
    if (!isJsonObject(expression)) return undefined;
    const key = expression['key'];
    const values = stringList(expression['values']);
    if (typeof key !== 'string' || values === undefined) return undefined;
    switch (expression['operator']) {
      case 'In':
        if (values.length === 0) return undefined;
        tests.push((labels) => labels[key] !== undefined && values.includes(labels[key]));
        break;
      case 'NotIn':
        if (values.length === 0) return undefined;
        tests.push((labels) => labels[key] === undefined || !values.includes(labels[key]));
        break;
      case 'Exists':
        if (values.length > 0) return undefined;
        tests.push((labels) => labels[key] !== undefined);
        break;
      case 'DoesNotExist':
        if (values.length > 0) return undefined;
        tests.push((labels) => labels[key] === undefined);
        break;
      default:
        return undefined;
    }
  }
  return (labels) => tests.every((test) => test(labels));
}

function selectorsOf(clusterRole: JsonObject): JsonValue[] | undefined {
  const rule = clusterRole['aggregationRule'];
  if (!isJsonObject(rule)) return undefined;
  const selectors = rule['clusterRoleSelectors'];
  return Array.isArray(selectors) ? selectors : [];
}

function rulesOf(clusterRole: JsonObject): PolicyRule[] {
  const rules = clusterRole['rules'];
  return Array.isArray(rules) ? rules.filter(isJsonObject).map(policyRuleFromJson) : [];
}

/**
 * Rules of one aggregated ClusterRole: per selector in order, the matching ClusterRoles (itself
 * excluded) sorted by name, each rule appended unless an equal rule is already there. Undefined
 * when a selector is invalid (the controller then leaves the role as it is).
 */
function aggregate(
  target: JsonObject,
  selectors: JsonValue[],
  all: readonly JsonObject[],
): PolicyRule[] | undefined {
  const targetName = nameOf(target);
  const rules: PolicyRule[] = [];
  for (const selector of selectors) {
    const matches = isJsonObject(selector) ? compileLabelSelector(selector) : undefined;
    if (matches === undefined) return undefined;
    const selected = all
      .filter((role) => nameOf(role) !== targetName && matches(labelsOf(role)))
      .sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
    for (const role of selected) {
      for (const rule of rulesOf(role)) {
        if (!rules.some((existing) => policyRulesEqual(existing, rule))) rules.push(rule);
      }
    }
  }
  return rules;
}

/**
 * What one sync of the aggregation controller gives `target` from the ClusterRoles as they are
 * now (one level: an aggregated role feeding it counts with its current rules), or undefined
 * when `target` has no aggregationRule or an invalid selector.
 */
export function aggregatedRulesOf(
  target: JsonObject,
  all: readonly JsonObject[],
): JsonObject[] | undefined {
  const selectors = selectorsOf(target);
  if (selectors === undefined) return undefined;
  return aggregate(target, selectors, all)?.map(policyRuleToJson);
}

/**
 * The selectors of a ClusterRole's aggregationRule as one predicate over another role's labels,
 * or undefined when it has none (or an invalid one, which selects nothing).
 */
export function aggregationSelects(clusterRole: JsonObject): LabelPredicate | undefined {
  const selectors = selectorsOf(clusterRole);
  if (selectors === undefined) return undefined;
  const compiled = selectors.map((s) => (isJsonObject(s) ? compileLabelSelector(s) : undefined));
  if (compiled.some((c) => c === undefined)) return undefined;
  return (labels) => compiled.some((c) => c?.(labels) === true);
}

function withRules(role: JsonObject, rules: PolicyRule[]): JsonObject {
  return { ...role, rules: rules.map(policyRuleToJson) };
}

/**
 * The rules each ClusterRole with an aggregationRule should hold (name → rules), as the aggregation
 * controller computes them. Aggregated roles can feed others (edit into admin); the controller
 * converges over several syncs, this returns the converged result in one call.
 */
export function aggregatedRules(clusterRoles: readonly JsonObject[]): Map<string, JsonObject[]> {
  let current = [...clusterRoles];
  const result = new Map<string, PolicyRule[]>();
  // Each pass settles at least one more level of nesting; a cycle stops at the bound.
  for (let pass = 0; pass <= clusterRoles.length; pass++) {
    let changed = false;
    const next = current.map((role) => {
      const selectors = selectorsOf(role);
      if (selectors === undefined) return role;
      const rules = aggregate(role, selectors, current);
      if (rules === undefined) return role;
      const previous = result.get(nameOf(role));
      if (
        previous === undefined ||
        previous.length !== rules.length ||
        previous.some((rule, i) => !policyRulesEqual(rule, rules[i] ?? rule))
      ) {
        changed = true;
      }
      result.set(nameOf(role), rules);
      return withRules(role, rules);
    });
    current = next;
    if (!changed) break;
  }
  return new Map([...result].map(([name, rules]) => [name, rules.map(policyRuleToJson)]));
}
