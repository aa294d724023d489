// The wording of kube-apiserver's 403 answers (responsewriters.Forbidden + errors.NewForbidden).
import { toStatus, type Status, type StatusDetails } from '../../shared/kube/status.js';
import { goQuote } from './go-quote.js';
import type { Decision, RequestAttributes } from './types.js';

/**
 * `User "u" cannot <verb> resource "<res>[/<sub>]" in API group "<g>" (in the namespace "<ns>"|at the
 * cluster scope)`, or `User "u" cannot <verb> path "<path>"` for non-resource requests.
 */
export function forbiddenMessage(attributes: RequestAttributes): string {
  const user = goQuote(attributes.user.username);
  if (!attributes.resourceRequest) {
    return `User ${user} cannot ${attributes.verb} path ${goQuote(attributes.path)}`;
  }
  const resource =
    attributes.subresource === ''
      ? attributes.resource
      : `${attributes.resource}/${attributes.subresource}`;
  const scope =
    attributes.namespace === ''
      ? 'at the cluster scope'
      : `in the namespace ${goQuote(attributes.namespace)}`;
  return `User ${user} cannot ${attributes.verb} resource ${goQuote(resource)} in API group ${goQuote(attributes.apiGroup)} ${scope}`;
}

/**
 * The full Status message: `<resource>[.<group>] ["<name>"] is forbidden: <why>` (or
 * `forbidden: <why>` for non-resource requests), where `<why>` is {@link forbiddenMessage} plus
 * RBAC's evaluation errors when there were any.
 */
export function forbiddenStatusMessage(attributes: RequestAttributes, decision?: Decision): string {
  let why = forbiddenMessage(attributes);
  if (decision?.evaluationError !== undefined && decision.evaluationError !== '') {
    why += `: ${decision.evaluationError}`;
  }
  if (attributes.resource === '' && attributes.apiGroup === '') return `forbidden: ${why}`;
  const qualified =
    attributes.apiGroup === ''
      ? attributes.resource
      : `${attributes.resource}.${attributes.apiGroup}`;
  return attributes.name === ''
    ? `${qualified} is forbidden: ${why}`
    : `${qualified} ${goQuote(attributes.name)} is forbidden: ${why}`;
}

/** The 403 Status object kube-apiserver answers with (details name/group/kind = resource). */
export function forbiddenStatus(attributes: RequestAttributes, decision?: Decision): Status {
  const details: StatusDetails = {};
  if (attributes.name !== '') details.name = attributes.name;
  if (attributes.apiGroup !== '') details.group = attributes.apiGroup;
  if (attributes.resource !== '') details.kind = attributes.resource;
  return toStatus('Forbidden', forbiddenStatusMessage(attributes, decision), details);
}
