// kube-apiserver's RBAC authorizer: walk the bindings that apply to a user, stop at the first
// rule that allows the request; remember resolution errors to explain a denial.
import type { JsonObject } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import { goQuote } from './go-quote.js';
import { privilegedGroup, serviceAccountUsername } from './identity.js';
import type { Decision, RbacSource, RequestAttributes, UserInfo } from './types.js';
import type { PolicyRule } from './policy-rule.js';
import { policyRulesOf, ruleAllows } from './policy-rule.js';

interface Subject {
  kind: string;
  name: string;
  namespace: string;
}

interface RoleRef {
  kind: string;
  name: string;
}

function stringField(object: JsonObject | undefined, key: string): string {
  const value = object?.[key];
  return typeof value === 'string' ? value : '';
}

function metadataField(object: JsonObject, key: string): string {
  const metadata = object['metadata'];
  return isJsonObject(metadata) ? stringField(metadata, key) : '';
}

function subjectsOf(binding: JsonObject): Subject[] {
  const subjects = binding['subjects'];
  if (!Array.isArray(subjects)) return [];
  return subjects.filter(isJsonObject).map((s) => ({
    kind: stringField(s, 'kind'),
    name: stringField(s, 'name'),
    namespace: stringField(s, 'namespace'),
  }));
}

function roleRefOf(binding: JsonObject): RoleRef {
  const ref = binding['roleRef'];
  const roleRef = isJsonObject(ref) ? ref : undefined;
  return { kind: stringField(roleRef, 'kind'), name: stringField(roleRef, 'name') };
}

function appliesToUser(user: UserInfo, subject: Subject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.username === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      // A RoleBinding may name a ServiceAccount of its own namespace without a namespace.
      const namespace = subject.namespace !== '' ? subject.namespace : bindingNamespace;
      return namespace !== '' && user.username === serviceAccountUsername(namespace, subject.name);
    }
    default:
      return false;
  }
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') {
    const namespace = subject.namespace !== '' ? subject.namespace : bindingNamespace;
    return `${subject.kind} ${goQuote(`${subject.name}/${namespace}`)}`;
  }
  return `${subject.kind} ${goQuote(subject.name)}`;
}

function notFound(resource: string, name: string): string {
  return `${resource}.rbac.authorization.k8s.io ${goQuote(name)} not found`;
}

/** Rules a binding's roleRef points at, or the error kube's rule resolver reports. */
function roleReferenceRules(
  ref: RoleRef,
  bindingNamespace: string,
  rbac: RbacSource,
): PolicyRule[] | { error: string } {
  const byName = (o: JsonObject): boolean => metadataField(o, 'name') === ref.name;
  switch (ref.kind) {
    case 'Role': {
      const role = bindingNamespace === '' ? undefined : rbac.roles(bindingNamespace).find(byName);
      return role === undefined ? { error: notFound('role', ref.name) } : policyRulesOf(role);
    }
    case 'ClusterRole': {
      const role = rbac.clusterRoles().find(byName);
      return role === undefined
        ? { error: notFound('clusterrole', ref.name) }
        : policyRulesOf(role);
    }
    default:
      return { error: `unsupported role reference kind: ${goQuote(ref.kind)}` };
  }
}

/** Called per rule (with the binding that grants it) or per resolution error; false stops the walk. */
type RuleVisitor = (
  source: string,
  rule: PolicyRule | undefined,
  error: string | undefined,
) => boolean;

/**
 * Visits the rules of one binding if one of its subjects is the user; false when the visitor
 * asked to stop. `bindingNamespace` is "" for ClusterRoleBindings.
 */
function visitBinding(
  binding: JsonObject,
  bindingNamespace: string,
  user: UserInfo,
  rbac: RbacSource,
  visit: RuleVisitor,
): boolean {
  const subject = subjectsOf(binding).find((s) => appliesToUser(user, s, bindingNamespace));
  if (subject === undefined) return true;
  const ref = roleRefOf(binding);
  const rules = roleReferenceRules(ref, bindingNamespace, rbac);
  if (!Array.isArray(rules)) return visit('', undefined, rules.error);
  const name = metadataField(binding, 'name');
  // RBAC names a RoleBinding "<name>/<namespace>" when it explains a decision.
  const described =
    bindingNamespace === ''
      ? `ClusterRoleBinding ${goQuote(name)}`
      : `RoleBinding ${goQuote(`${name}/${bindingNamespace}`)}`;
  const source = `${described} of ${ref.kind} ${goQuote(ref.name)} to ${describeSubject(subject, bindingNamespace)}`;
  return rules.every((rule) => visit(source, rule, undefined));
}

/** ClusterRoleBindings first, then the RoleBindings of `namespace` (kube's VisitRulesFor order). */
function visitRulesFor(
  user: UserInfo,
  namespace: string,
  rbac: RbacSource,
  visit: RuleVisitor,
): void {
  for (const binding of rbac.clusterRoleBindings()) {
    if (!visitBinding(binding, '', user, rbac, visit)) return;
  }
  if (namespace === '') return;
  for (const binding of rbac.roleBindings(namespace)) {
    if (!visitBinding(binding, namespace, user, rbac, visit)) return;
  }
}

/** Go's utilerrors.NewAggregate(...).Error(): one message as is, several as `[a, b]`, duplicates once. */
function aggregateErrors(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  if (unique.length === 1) return unique[0] ?? '';
  return `[${unique.join(', ')}]`;
}

/** RBAC decision; members of system:masters are always allowed. */
export function authorize(attributes: RequestAttributes, rbac: RbacSource): Decision {
  // kube-apiserver puts a privileged-group authorizer before RBAC; it allows without a reason.
  if (attributes.user.groups.includes(privilegedGroup)) return { allowed: true, reason: '' };
  let reason = '';
  const errors: string[] = [];
  visitRulesFor(attributes.user, attributes.namespace, rbac, (source, rule, error) => {
    if (rule !== undefined && ruleAllows(attributes, rule)) {
      reason = `RBAC: allowed by ${source}`;
      return false;
    }
    if (error !== undefined) errors.push(error);
    return true;
  });
  if (reason !== '') return { allowed: true, reason };
  return errors.length === 0
    ? { allowed: false, reason: '' }
    : { allowed: false, reason: '', evaluationError: `RBAC: ${aggregateErrors(errors)}` };
}

/** A ResourceRule of a SelfSubjectRulesReview (empty lists omitted, as kube serializes them). */
function resourceRuleJson(rule: PolicyRule): JsonObject {
  const out: JsonObject = { verbs: [...rule.verbs] };
  if (rule.apiGroups.length > 0) out['apiGroups'] = [...rule.apiGroups];
  out['resources'] = [...rule.resources];
  if (rule.resourceNames.length > 0) out['resourceNames'] = [...rule.resourceNames];
  return out;
}

/** SelfSubjectRulesReview status for a user in a namespace. */
export function rulesReview(
  user: UserInfo,
  namespace: string,
  rbac: RbacSource,
): {
  resourceRules: JsonObject[];
  nonResourceRules: JsonObject[];
  incomplete: boolean;
  evaluationError?: string;
} {
  const resourceRules: JsonObject[] = [];
  const nonResourceRules: JsonObject[] = [];
  const errors: string[] = [];
  visitRulesFor(user, namespace, rbac, (_source, rule, error) => {
    if (rule !== undefined && rule.resources.length > 0) resourceRules.push(resourceRuleJson(rule));
    if (rule !== undefined && rule.nonResourceURLs.length > 0) {
      nonResourceRules.push({ verbs: [...rule.verbs], nonResourceURLs: [...rule.nonResourceURLs] });
    }
    if (error !== undefined) errors.push(error);
    return true;
  });
  // RBAC reports resolution errors but never marks its answer incomplete.
  return errors.length === 0
    ? { resourceRules, nonResourceRules, incomplete: false }
    : {
        resourceRules,
        nonResourceRules,
        incomplete: false,
        evaluationError: aggregateErrors(errors),
      };
}
