// The table of built-in kinds and their validation, keyed `<group>/<Kind>` ("" group for core).
import type { JsonObject } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import { validateNetworkPolicy, validatePodDisruptionBudget } from './policy.js';
import {
  roleRefImmutable,
  validateClusterRole,
  validateClusterRoleBinding,
  validateRole,
  validateRoleBinding,
} from './rbac.js';
import { validateService, validateServiceUpdate } from './service.js';
import type { KindValidation } from './types.js';
import {
  validateMutatingWebhookConfiguration,
  validateValidatingWebhookConfiguration,
} from './webhooks.js';
import {
  selectorImmutable,
  validateCronJob,
  validateDeployment,
  validateJob,
  validatePod,
  validateReplicaSet,
} from './workloads.js';

const rbac = 'rbac.authorization.k8s.io';
const admission = 'admissionregistration.k8s.io';

const kinds: Readonly<Record<string, KindValidation>> = {
  '/Pod': { validate: validatePod },
  '/Service': { validate: validateService, validateUpdate: validateServiceUpdate },
  'apps/Deployment': { validate: validateDeployment, validateUpdate: selectorImmutable },
  'apps/ReplicaSet': { validate: validateReplicaSet, validateUpdate: selectorImmutable },
  'batch/Job': { validate: validateJob },
  'batch/CronJob': { validate: validateCronJob },
  [`${rbac}/Role`]: { validate: validateRole },
  [`${rbac}/ClusterRole`]: { validate: validateClusterRole },
  [`${rbac}/RoleBinding`]: { validate: validateRoleBinding, validateUpdate: roleRefImmutable },
  [`${rbac}/ClusterRoleBinding`]: {
    validate: validateClusterRoleBinding,
    validateUpdate: roleRefImmutable,
  },
  [`${admission}/ValidatingWebhookConfiguration`]: {
    validate: validateValidatingWebhookConfiguration,
  },
  [`${admission}/MutatingWebhookConfiguration`]: { validate: validateMutatingWebhookConfiguration },
  'policy/PodDisruptionBudget': { validate: validatePodDisruptionBudget },
  'networking.k8s.io/NetworkPolicy': { validate: validateNetworkPolicy },
};

/**
 * The causes kube-apiserver 1.30 would refuse a built-in object with (after its defaults):
 * the kind's own checks, then, on update, those against the stored object. Throws
 * QuantityError for a malformed resource quantity (a decoding error in kube).
 */
export function validateBuiltinKind(
  group: string,
  kind: string,
  object: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const validation = kinds[`${group}/${kind}`];
  if (validation === undefined) return [];
  const causes = validation.validate(object);
  if (old !== undefined && validation.validateUpdate !== undefined)
    causes.push(...validation.validateUpdate(object, old));
  return causes;
}
