// Subscription (operators.coreos.com/v1alpha1): keeps an operator installed and up to date from a catalog.
import { z } from 'zod';
import { SubscriptionConditionType, SubscriptionState, codeValues } from './codes.js';
import { approvalSchema } from './installplan.js';
import {
  conditionStatusSchema,
  kubeTime,
  labelSelectorSchema,
  objectMetaSchema,
  objectReferenceSchema,
  opaqueObject,
  stringMap,
} from './meta.js';

/** corev1.EnvVar; `valueFrom` is kept opaque. */
export const envVarSchema = z.object({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: opaqueObject('A corev1.EnvVarSource.').optional(),
});
/** An environment variable. */
export type EnvVar = z.infer<typeof envVarSchema>;

/** corev1.VolumeMount. */
export const volumeMountSchema = z.object({
  name: z.string(),
  mountPath: z.string(),
  readOnly: z.boolean().optional(),
  recursiveReadOnly: z.string().optional(),
  mountPropagation: z.string().optional(),
  subPath: z.string().optional(),
  subPathExpr: z.string().optional(),
});
/** A volume mount. */
export type VolumeMount = z.infer<typeof volumeMountSchema>;

/** Overrides applied to the operator's deployments (`spec.config`). */
export const subscriptionConfigSchema = z.object({
  selector: labelSelectorSchema.optional().describe('Ignored by OLM, kept for compatibility.'),
  nodeSelector: stringMap().optional(),
  tolerations: z.array(opaqueObject('A corev1.Toleration.')).optional(),
  resources: opaqueObject("A corev1.ResourceRequirements, replacing every container's.").optional(),
  envFrom: z.array(opaqueObject('A corev1.EnvFromSource.')).optional(),
  env: z.array(envVarSchema).optional(),
  volumes: z.array(opaqueObject('A corev1.Volume.')).optional(),
  volumeMounts: z.array(volumeMountSchema).optional(),
  affinity: opaqueObject('A corev1.Affinity.').optional(),
  annotations: stringMap('Added to the deployments and their pods.').optional(),
});
/** Subscription `spec.config`. */
export type SubscriptionConfig = z.infer<typeof subscriptionConfigSchema>;

/** Subscription `spec`. */
export const subscriptionSpecSchema = z.object({
  source: z.string().describe('Name of the CatalogSource.'),
  sourceNamespace: z.string().describe('Namespace of the CatalogSource.'),
  name: z.string().describe('Package name.'),
  channel: z.string().optional(),
  startingCSV: z.string().optional(),
  installPlanApproval: approvalSchema.optional(),
  config: subscriptionConfigSchema.optional(),
});
/** Subscription `spec`. */
export type SubscriptionSpec = z.infer<typeof subscriptionSpecSchema>;

/** A Subscription condition. */
export const subscriptionConditionSchema = z.object({
  type: z.enum(codeValues(SubscriptionConditionType)).describe('type of Subscription condition'),
  status: conditionStatusSchema,
  reason: z
    .string()
    .optional()
    .describe("one-word CamelCase reason for the condition's last transition"),
  message: z.string().optional(),
  lastHeartbeatTime: kubeTime().optional(),
  lastTransitionTime: kubeTime().optional(),
});
/** A Subscription condition. */
export type SubscriptionCondition = z.infer<typeof subscriptionConditionSchema>;

/** The subscription's view of one catalog's health. */
export const subscriptionCatalogHealthSchema = z.object({
  catalogSourceRef: objectReferenceSchema,
  lastUpdated: kubeTime(),
  healthy: z.boolean(),
});
/** A catalog health entry. */
export type SubscriptionCatalogHealth = z.infer<typeof subscriptionCatalogHealthSchema>;

/** Subscription `status`. */
export const subscriptionStatusSchema = z.object({
  currentCSV: z.string().optional().describe('The CSV the Subscription is progressing to.'),
  installedCSV: z.string().optional().describe('The CSV currently installed by the Subscription.'),
  installplan: z
    .object({ apiVersion: z.string(), kind: z.string(), name: z.string(), uuid: z.string() })
    .optional()
    .describe('Deprecated: use installPlanRef.'),
  state: z.enum(codeValues(SubscriptionState)).optional(),
  reason: z.string().optional(),
  installPlanGeneration: z.int().optional(),
  installPlanRef: objectReferenceSchema.optional(),
  catalogHealth: z.array(subscriptionCatalogHealthSchema).optional(),
  conditions: z.array(subscriptionConditionSchema).optional(),
  lastUpdated: kubeTime('The last time the Subscription status was updated.'),
});
/** Subscription `status`. */
export type SubscriptionStatus = z.infer<typeof subscriptionStatusSchema>;

/** A Subscription object. */
export const subscriptionSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec: subscriptionSpecSchema,
    status: subscriptionStatusSchema.optional(),
  })
  .describe('Subscription keeps operators up to date by tracking changes to Catalogs.');
/** A Subscription. */
export type Subscription = z.infer<typeof subscriptionSchema>;
