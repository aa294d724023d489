// Shared building blocks of Kubernetes objects (apimachinery meta/v1 and the few core/v1 and
// rbac/v1 pieces the OLM kinds embed). The CRD generator (./crd/openapi.ts) understands every
// construct used here, so schemas built from these blocks turn into structural schemas.
import { z } from 'zod';
import { ConditionStatus, codeValues } from './codes.js';

/** A metav1.Time: an RFC 3339 timestamp such as "2026-01-02T03:04:05Z". */
export function kubeTime(description?: string): z.ZodISODateTime {
  const schema = z.iso.datetime({ offset: true });
  return description === undefined ? schema : schema.describe(description);
}

/**
 * A Kubernetes type we embed but do not model (a DeploymentSpec, an Affinity, ...): any JSON
 * object, kept whole. Becomes `x-kubernetes-preserve-unknown-fields: true` in a CRD.
 */
export function opaqueObject(description?: string): z.ZodRecord<z.ZodString, z.ZodUnknown> {
  const schema = z.record(z.string(), z.unknown());
  return description === undefined ? schema : schema.describe(description);
}

/** An intstr.IntOrString (a port, a resource.Quantity). Becomes `x-kubernetes-int-or-string`. */
export function intOrString(
  description?: string,
): z.ZodUnion<readonly [z.ZodNumberFormat, z.ZodString]> {
  const schema = z.union([z.int(), z.string()]);
  return description === undefined ? schema : schema.describe(description);
}

/** A map[string]string (labels, annotations, node selectors). */
export function stringMap(description?: string): z.ZodRecord<z.ZodString, z.ZodString> {
  const schema = z.record(z.string(), z.string());
  return description === undefined ? schema : schema.describe(description);
}

/**
 * A string upstream declares without `omitempty`. The CRD requires it, yet bundles often omit it:
 * upstream decodes manifests into Go structs and re-encodes them, which turns a missing value into
 * "". Defaulting to "" reproduces that, so manifests that install upstream install here.
 */
export function goString(description?: string): z.ZodDefault<z.ZodString> {
  const schema = z.string().default('');
  return description === undefined ? schema : schema.describe(description);
}

/** The zod metadata key of a default only the API server applies (see `serverDefault`). */
export const SERVER_DEFAULT_KEY = 'x-olmq-server-default';

/**
 * A field whose CRD carries `default: value` while parsing leaves it absent. Upstream's CRDs
 * default some fields of embedded Kubernetes types (a container port's protocol), so stored
 * objects carry them; its controllers decode bundles into Go structs, which do not, so what
 * olmq derives from a bundle (InstallPlan steps) must not either.
 */
export function serverDefault<T extends z.ZodType>(schema: T, value: string | number | boolean): T {
  return schema.meta({ [SERVER_DEFAULT_KEY]: value });
}

/** Status of a condition: True, False or Unknown. */
export const conditionStatusSchema = z
  .enum(codeValues(ConditionStatus))
  .describe('status of the condition, one of True, False, Unknown');

/** metav1.OwnerReference. */
export const ownerReferenceSchema = z.object({
  apiVersion: z.string().describe('API version of the referent.'),
  kind: z.string().describe('Kind of the referent.'),
  name: z.string().describe('Name of the referent.'),
  uid: z.string().describe('UID of the referent.'),
  controller: z
    .boolean()
    .optional()
    .describe('If true, this reference points to the managing controller.'),
  blockOwnerDeletion: z
    .boolean()
    .optional()
    .describe(
      'If true, the owner cannot be deleted from the key-value store until this reference is removed.',
    ),
});
/** metav1.OwnerReference. */
export type OwnerReference = z.infer<typeof ownerReferenceSchema>;

/** metav1.ObjectMeta: the fields a client may send; server-managed ones are accepted as read. */
export const objectMetaSchema = z.object({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional().describe('Opaque; compare for equality only.'),
  generation: z.int().optional(),
  creationTimestamp: kubeTime().optional(),
  deletionTimestamp: kubeTime().optional(),
  deletionGracePeriodSeconds: z.int().optional(),
  labels: stringMap().optional(),
  annotations: stringMap().optional(),
  ownerReferences: z.array(ownerReferenceSchema).optional(),
  finalizers: z.array(z.string()).optional(),
  managedFields: z.array(opaqueObject()).optional(),
});
/** metav1.ObjectMeta. */
export type ObjectMeta = z.infer<typeof objectMetaSchema>;

/** corev1.ObjectReference, as OLM statuses use it (service accounts, catalogs, plans). */
export const objectReferenceSchema = z.object({
  apiVersion: z.string().optional().describe('API version of the referent.'),
  kind: z.string().optional().describe('Kind of the referent.'),
  name: z.string().optional().describe('Name of the referent.'),
  namespace: z.string().optional().describe('Namespace of the referent.'),
  uid: z.string().optional().describe('UID of the referent.'),
  resourceVersion: z
    .string()
    .optional()
    .describe('Specific resourceVersion to which this reference is made, if any.'),
  fieldPath: z
    .string()
    .optional()
    .describe('If referring to a piece of an object instead of an entire object.'),
});
/** corev1.ObjectReference. */
export type ObjectReference = z.infer<typeof objectReferenceSchema>;

/** One requirement of a label selector. */
export const labelSelectorRequirementSchema = z.object({
  key: z.string().describe('key is the label key that the selector applies to.'),
  operator: z.string().describe('operator is one of In, NotIn, Exists and DoesNotExist.'),
  values: z.array(z.string()).optional(),
});
/** metav1.LabelSelectorRequirement. */
export type LabelSelectorRequirement = z.infer<typeof labelSelectorRequirementSchema>;

/** metav1.LabelSelector. An empty selector matches everything; an absent one, nothing. */
export const labelSelectorSchema = z.object({
  matchExpressions: z.array(labelSelectorRequirementSchema).optional(),
  matchLabels: stringMap().optional(),
});
/** metav1.LabelSelector. */
export type LabelSelector = z.infer<typeof labelSelectorSchema>;

/** metav1.Condition, the standard condition of newer kinds (CatalogSource, OperatorGroup, ...). */
export const conditionSchema = z.object({
  type: z
    .string()
    .max(316)
    .regex(
      /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
    )
    .describe('type of condition in CamelCase or in foo.example.com/CamelCase.'),
  status: conditionStatusSchema,
  observedGeneration: z
    .int()
    .min(0)
    .optional()
    .describe('the .metadata.generation that the condition was set based upon.'),
  lastTransitionTime: kubeTime(
    'the last time the condition transitioned from one status to another.',
  ),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .describe("a programmatic identifier for the condition's last transition."),
  message: z
    .string()
    .max(32768)
    .describe('a human readable message indicating details about the transition.'),
});
/** metav1.Condition. */
export type Condition = z.infer<typeof conditionSchema>;

/**
 * A status condition list: at most one condition per type, so server-side apply merges entries
 * by type (`x-kubernetes-list-type: map`, keyed by `type`).
 */
export const conditionListSchema = z
  .array(conditionSchema)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });

/** A list of unique strings (`x-kubernetes-list-type: set`). */
export function stringSet(description?: string): z.ZodArray<z.ZodString> {
  const schema = z.array(z.string()).meta({ 'x-kubernetes-list-type': 'set' });
  return description === undefined ? schema : schema.describe(description);
}

/** metav1.GroupVersionKind. */
export const groupVersionKindSchema = z.object({
  group: z.string(),
  version: z.string(),
  kind: z.string(),
});
/** metav1.GroupVersionKind. */
export type GroupVersionKind = z.infer<typeof groupVersionKindSchema>;

/** rbacv1.PolicyRule. */
export const policyRuleSchema = z.object({
  verbs: z
    .array(z.string())
    .describe(
      'Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule.',
    ),
  apiGroups: z.array(z.string()).optional(),
  resources: z.array(z.string()).optional(),
  resourceNames: z.array(z.string()).optional(),
  nonResourceURLs: z.array(z.string()).optional(),
});
/** rbacv1.PolicyRule. */
export type PolicyRule = z.infer<typeof policyRuleSchema>;

/** An icon (CSV `spec.icon[]`, CatalogSource `spec.icon`). */
export const iconSchema = z.object({
  base64data: z.string(),
  mediatype: z.string(),
});
/** An icon. */
export type Icon = z.infer<typeof iconSchema>;
