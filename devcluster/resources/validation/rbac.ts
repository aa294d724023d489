// RBAC kinds as kube 1.30's pkg/apis/rbac/validation checks them: rules need verbs (and
// resources, or non-resource URLs in ClusterRoles only), bindings a valid and immutable roleRef
// and subjects of a known kind.
import { isJsonObject, type JsonObject, type JsonValue } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import { goQuote, goStrings, invalid, invalidEach, notSupported, required } from './field.js';
import { dns1123SubdomainErrors, pathSegmentErrors } from './identifiers.js';
import { validateLabelSelector } from './meta.js';

const rbacGroup = 'rbac.authorization.k8s.io';

function textOf(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function strings(value: JsonValue | undefined): string[] | undefined {
  return Array.isArray(value) ? value.map((v) => textOf(v)) : undefined;
}

/** ValidatePolicyRule. */
function ruleCauses(rule: JsonObject, namespaced: boolean, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const verbs = strings(rule['verbs']) ?? [];
  if (verbs.length === 0)
    causes.push(required(`${path}.verbs`, 'verbs must contain at least one value'));
  const urls = strings(rule['nonResourceURLs']) ?? [];
  if (urls.length > 0) {
    const value = goStrings(urls);
    if (namespaced)
      causes.push(
        invalid(
          `${path}.nonResourceURLs`,
          value,
          'namespaced rules cannot apply to non-resource URLs',
        ),
      );
    const resourceFields = ['apiGroups', 'resources', 'resourceNames'];
    if (resourceFields.some((f) => (strings(rule[f]) ?? []).length > 0)) {
      causes.push(
        invalid(
          `${path}.nonResourceURLs`,
          value,
          'rules cannot apply to both regular resources and non-resource URLs',
        ),
      );
    }
    return causes;
  }
  if ((strings(rule['apiGroups']) ?? []).length === 0)
    causes.push(required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if ((strings(rule['resources']) ?? []).length === 0)
    causes.push(required(`${path}.resources`, 'resource rules must supply at least one resource'));
  return causes;
}

function rulesCauses(object: JsonObject, namespaced: boolean): StatusCause[] {
  const rules = object['rules'];
  const causes: StatusCause[] = [];
  (Array.isArray(rules) ? rules : []).forEach((rule, i) => {
    causes.push(...ruleCauses(isJsonObject(rule) ? rule : {}, namespaced, `rules[${i}]`));
  });
  return causes;
}

/** ValidateRole. */
export function validateRole(object: JsonObject): StatusCause[] {
  return rulesCauses(object, true);
}

/** ValidateClusterRole: rules, and an aggregationRule with at least one valid selector. */
export function validateClusterRole(object: JsonObject): StatusCause[] {
  const causes = rulesCauses(object, false);
  const aggregation = object['aggregationRule'];
  if (isJsonObject(aggregation)) {
    const selectors = aggregation['clusterRoleSelectors'];
    if (!Array.isArray(selectors) || selectors.length === 0) {
      causes.push(
        required(
          'aggregationRule.clusterRoleSelectors',
          'at least one clusterRoleSelector required if aggregationRule is non-nil',
        ),
      );
    } else {
      selectors.forEach((selector, i) => {
        causes.push(
          ...validateLabelSelector(selector, `aggregationRule.clusterRoleSelectors[${i}]`),
        );
      });
    }
  }
  return causes;
}

/** ValidateRoleBindingSubject. */
function subjectCauses(subject: JsonObject, namespaced: boolean, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = textOf(subject['name']);
  if (name === '') causes.push(required(`${path}.name`));
  const apiGroup = textOf(subject['apiGroup']);
  switch (textOf(subject['kind'])) {
    case 'ServiceAccount':
      if (name !== '')
        causes.push(...invalidEach(`${path}.name`, name, dns1123SubdomainErrors(name)));
      if (apiGroup !== '') causes.push(notSupported(`${path}.apiGroup`, apiGroup, ['']));
      if (!namespaced && textOf(subject['namespace']) === '')
        causes.push(required(`${path}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (apiGroup !== rbacGroup)
        causes.push(notSupported(`${path}.apiGroup`, apiGroup, [rbacGroup]));
      break;
    default:
      causes.push(
        notSupported(`${path}.kind`, textOf(subject['kind']), ['ServiceAccount', 'User', 'Group']),
      );
  }
  return causes;
}

function bindingCauses(object: JsonObject, namespaced: boolean): StatusCause[] {
  const roleRef = isJsonObject(object['roleRef']) ? object['roleRef'] : {};
  const causes: StatusCause[] = [];
  const apiGroup = textOf(roleRef['apiGroup']);
  if (apiGroup !== rbacGroup) causes.push(notSupported('roleRef.apiGroup', apiGroup, [rbacGroup]));
  const kind = textOf(roleRef['kind']);
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(kind)) causes.push(notSupported('roleRef.kind', kind, kinds));
  const name = textOf(roleRef['name']);
  if (name === '') causes.push(required('roleRef.name'));
  else causes.push(...invalidEach('roleRef.name', name, pathSegmentErrors(name)));
  const subjects = object['subjects'];
  (Array.isArray(subjects) ? subjects : []).forEach((subject, i) => {
    causes.push(
      ...subjectCauses(isJsonObject(subject) ? subject : {}, namespaced, `subjects[${i}]`),
    );
  });
  return causes;
}

/** ValidateRoleBinding. */
export function validateRoleBinding(object: JsonObject): StatusCause[] {
  return bindingCauses(object, true);
}

/** ValidateClusterRoleBinding. */
export function validateClusterRoleBinding(object: JsonObject): StatusCause[] {
  return bindingCauses(object, false);
}

function goRoleRef(roleRef: JsonValue | undefined): string {
  const ref = isJsonObject(roleRef) ? roleRef : {};
  return `rbac.RoleRef{APIGroup:${goQuote(textOf(ref['apiGroup']))}, Kind:${goQuote(textOf(ref['kind']))}, Name:${goQuote(textOf(ref['name']))}}`;
}

/** Validate(Cluster)RoleBindingUpdate: the roleRef may not change. */
export function roleRefImmutable(object: JsonObject, old: JsonObject): StatusCause[] {
  const ref = isJsonObject(object['roleRef']) ? object['roleRef'] : {};
  const oldRef = isJsonObject(old['roleRef']) ? old['roleRef'] : {};
  const same = ['apiGroup', 'kind', 'name'].every((k) => textOf(ref[k]) === textOf(oldRef[k]));
  return same ? [] : [invalid('roleRef', { goSyntax: goRoleRef(ref) }, 'cannot change roleRef')];
}
