// The review kinds answered on create and never stored: SubjectAccessReview,
// SelfSubjectAccessReview, LocalSubjectAccessReview, SelfSubjectRulesReview, TokenReview and
// SelfSubjectReview.
import {
  authenticate,
  authorize,
  nonResourceAttributes,
  rulesReview,
  type AuthenticationContext,
  type RbacSource,
  type RequestAttributes,
  type UserInfo,
} from '../../../auth/index.js';
import { badRequest } from '../../../api/errors.js';
import { apiVersionOf } from '../../../resources/registry.js';
import { kubeTime } from '../../../../shared/kube/time.js';
import { sendJson } from '../answers.js';
import type { ResourceRequest } from '../types.js';
import {
  isJsonObject,
  stringItems,
  type JsonObject,
  type JsonValue,
} from '../../../../shared/kube/json.js';

function obj(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {};
}

function str(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function accessStatus(
  spec: JsonObject,
  user: UserInfo,
  rbac: RbacSource,
  namespaceOverride?: string,
): JsonObject {
  const resource = spec['resourceAttributes'];
  const nonResource = spec['nonResourceAttributes'];
  let attributes: RequestAttributes;
  if (isJsonObject(resource)) {
    attributes = {
      user,
      verb: str(resource['verb']),
      resourceRequest: true,
      apiGroup: str(resource['group']),
      apiVersion: str(resource['version']),
      resource: str(resource['resource']),
      subresource: str(resource['subresource']),
      namespace: namespaceOverride ?? str(resource['namespace']),
      name: str(resource['name']),
      path: '',
    };
  } else if (isJsonObject(nonResource)) {
    attributes = nonResourceAttributes(user, str(nonResource['verb']), str(nonResource['path']));
  } else {
    throw badRequest('spec.resourceAttributes or spec.nonResourceAttributes is required');
  }
  const decision = authorize(attributes, rbac);
  const status: JsonObject = { allowed: decision.allowed };
  if (decision.reason !== '') status['reason'] = decision.reason;
  if (decision.evaluationError) status['evaluationError'] = decision.evaluationError;
  return status;
}

/** Answers a review object for `kind`, created by `requester`; returns the object with its status. */
export function answerReview(
  kind: string,
  body: JsonObject,
  requester: UserInfo,
  namespace: string,
  rbac: RbacSource,
  authContext: AuthenticationContext,
): JsonObject {
  const spec = obj(body['spec']);
  const result: JsonObject = {
    ...body,
    metadata: { ...obj(body['metadata']), creationTimestamp: null },
  };
  switch (kind) {
    case 'SelfSubjectAccessReview':
      result['status'] = accessStatus(spec, requester, rbac);
      break;
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview': {
      const user: UserInfo = { username: str(spec['user']), groups: stringItems(spec['groups']) };
      if (typeof spec['uid'] === 'string') user.uid = spec['uid'];
      result['status'] = accessStatus(
        spec,
        user,
        rbac,
        kind === 'LocalSubjectAccessReview' ? namespace : undefined,
      );
      break;
    }
    case 'SelfSubjectRulesReview': {
      const review = rulesReview(requester, str(spec['namespace']), rbac);
      const status: JsonObject = {
        resourceRules: review.resourceRules,
        nonResourceRules: review.nonResourceRules,
        incomplete: review.incomplete,
      };
      if (review.evaluationError !== undefined) status['evaluationError'] = review.evaluationError;
      result['status'] = status;
      break;
    }
    case 'SelfSubjectReview': {
      // The requester as authenticated (or impersonated), stamped now, as kube's REST does.
      const userInfo: JsonObject = { username: requester.username };
      if (requester.uid !== undefined) userInfo['uid'] = requester.uid;
      userInfo['groups'] = requester.groups;
      if (requester.extra !== undefined && Object.keys(requester.extra).length > 0)
        userInfo['extra'] = requester.extra;
      result['metadata'] = { creationTimestamp: kubeTime(new Date()) };
      result['status'] = { userInfo };
      break;
    }
    case 'TokenReview': {
      const outcome = authenticate(
        { authorizationHeader: `Bearer ${str(spec['token'])}`, headers: {} },
        authContext,
      );
      if (outcome.ok) {
        const user: JsonObject = { username: outcome.user.username, groups: outcome.user.groups };
        if (outcome.user.uid !== undefined) user['uid'] = outcome.user.uid;
        result['status'] = { authenticated: true, user, audiences: stringItems(spec['audiences']) };
      } else {
        result['status'] = { authenticated: false, user: {}, error: outcome.message };
      }
      break;
    }
    default:
      throw badRequest(`${kind} cannot be created here`);
  }
  return result;
}

/** Answers the create of a review: 201 with the review and its status. */
export function createReview(request: ResourceRequest, body: JsonObject): void {
  const { res, type, user, namespace, server } = request;
  const answer = answerReview(
    type.kind,
    { ...body, apiVersion: apiVersionOf(type.group, type.version), kind: type.kind },
    user,
    namespace,
    server.rbac,
    server.authContext(),
  );
  sendJson(res, 201, answer);
}
