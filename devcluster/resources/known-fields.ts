// Top-level and metadata fields of the built-in kinds, so fieldValidation=Strict/Warn catches
// typos in them as kube-apiserver does (nested fields of built-ins are not modelled).
import { isJsonObject, type JsonObject } from '../../shared/kube/json.js';

const objectMetaFields = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

const specStatus = ['spec', 'status'];

const topLevel: Record<string, readonly string[]> = {
  '/Namespace': specStatus,
  '/ConfigMap': ['data', 'binaryData', 'immutable'],
  '/Secret': ['data', 'stringData', 'type', 'immutable'],
  '/ServiceAccount': ['secrets', 'imagePullSecrets', 'automountServiceAccountToken'],
  '/Service': specStatus,
  '/Pod': specStatus,
  '/Event': [
    'involvedObject',
    'reason',
    'message',
    'source',
    'firstTimestamp',
    'lastTimestamp',
    'count',
    'type',
    'eventTime',
    'series',
    'action',
    'related',
    'reportingComponent',
    'reportingInstance',
  ],
  'apps/Deployment': specStatus,
  'apps/ReplicaSet': specStatus,
  'rbac.authorization.k8s.io/Role': ['rules'],
  'rbac.authorization.k8s.io/ClusterRole': ['rules', 'aggregationRule'],
  'rbac.authorization.k8s.io/RoleBinding': ['subjects', 'roleRef'],
  'rbac.authorization.k8s.io/ClusterRoleBinding': ['subjects', 'roleRef'],
  'apiextensions.k8s.io/CustomResourceDefinition': specStatus,
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': ['webhooks'],
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': ['webhooks'],
  'apiregistration.k8s.io/APIService': specStatus,
  'coordination.k8s.io/Lease': ['spec'],
  'batch/Job': specStatus,
  'batch/CronJob': specStatus,
  'policy/PodDisruptionBudget': specStatus,
  'networking.k8s.io/NetworkPolicy': ['spec'],
  'networking.k8s.io/Ingress': specStatus,
  'networking.k8s.io/IngressClass': ['spec'],
};

/** Unknown fields of metadata, as paths ("metadata.lables"). */
export function unknownMetadataFields(metadata: unknown): string[] {
  if (!isJsonObject(metadata)) return [];
  return Object.keys(metadata)
    .filter((k) => !objectMetaFields.has(k))
    .map((k) => `metadata.${k}`);
}

/** Unknown top-level and metadata fields of a built-in kind's object (empty for kinds not listed). */
export function unknownBuiltinFields(group: string, kind: string, object: JsonObject): string[] {
  const known = topLevel[`${group}/${kind}`];
  if (known === undefined) return [];
  const unknown = Object.keys(object).filter(
    (k) => k !== 'apiVersion' && k !== 'kind' && k !== 'metadata' && !known.includes(k),
  );
  return [...unknown, ...unknownMetadataFields(object['metadata'])];
}
