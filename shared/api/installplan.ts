// InstallPlan (operators.coreos.com/v1alpha1): the steps that install one resolution's bundles.
import { z } from 'zod';
import {
  Approval,
  BundleLookupConditionType,
  InstallPlanConditionReason,
  InstallPlanConditionType,
  InstallPlanPhase,
  StepStatus,
  codeValues,
} from './codes.js';
import {
  conditionStatusSchema,
  kubeTime,
  objectMetaSchema,
  objectReferenceSchema,
} from './meta.js';

/** Approval policy: Automatic or Manual. */
export const approvalSchema = z
  .enum(codeValues(Approval))
  .describe(
    'Approval is the user approval policy for an InstallPlan. It must be one of "Automatic" or "Manual".',
  );

/** InstallPlan `spec`. */
export const installPlanSpecSchema = z.object({
  source: z.string().optional(),
  sourceNamespace: z.string().optional(),
  clusterServiceVersionNames: z.array(z.string()),
  approval: approvalSchema,
  approved: z.boolean(),
  generation: z.int().optional(),
});
/** InstallPlan `spec`. */
export type InstallPlanSpec = z.infer<typeof installPlanSpecSchema>;

/** An InstallPlan condition (Installed is the one OLM sets). */
export const installPlanConditionSchema = z.object({
  type: z.enum(codeValues(InstallPlanConditionType)).optional(),
  status: conditionStatusSchema.optional(),
  lastUpdateTime: kubeTime().optional(),
  lastTransitionTime: kubeTime().optional(),
  reason: z.enum(codeValues(InstallPlanConditionReason)).optional(),
  message: z.string().optional(),
});
/** An InstallPlan condition. */
export type InstallPlanCondition = z.infer<typeof installPlanConditionSchema>;

/** The resource a step creates; `manifest` holds its JSON (or a ConfigMap reference for unpacked bundles). */
export const stepResourceSchema = z.object({
  sourceName: z.string(),
  sourceNamespace: z.string(),
  group: z.string(),
  version: z.string(),
  kind: z.string(),
  name: z.string(),
  manifest: z.string().optional(),
});
/** A step resource. */
export type StepResource = z.infer<typeof stepResourceSchema>;

/** One step of a plan: a resource and its progress. */
export const stepSchema = z.object({
  resolving: z.string().describe('Name of the CSV this step belongs to.'),
  resource: stepResourceSchema,
  optional: z.boolean().optional(),
  status: z.enum(codeValues(StepStatus)),
});
/** An InstallPlan step. */
export type Step = z.infer<typeof stepSchema>;

/** A condition of a bundle lookup. */
export const bundleLookupConditionSchema = z.object({
  type: z.enum(codeValues(BundleLookupConditionType)).describe('Type of condition.'),
  status: conditionStatusSchema,
  reason: z.string().optional().describe("The reason for the condition's last transition."),
  message: z.string().optional(),
  lastUpdateTime: kubeTime().optional(),
  lastTransitionTime: kubeTime().optional(),
});
/** A bundle lookup condition. */
export type BundleLookupCondition = z.infer<typeof bundleLookupConditionSchema>;

/** A request to pull and unpack a bundle image into the cluster. */
export const bundleLookupSchema = z.object({
  path: z
    .string()
    .describe(
      "Path refers to the location of a bundle to pull. It's typically an image reference.",
    ),
  identifier: z.string().describe('The catalog-unique name of the operator (the CSV name).'),
  replaces: z.string().describe('The name of the bundle to replace with the one found at Path.'),
  catalogSourceRef: objectReferenceSchema,
  conditions: z.array(bundleLookupConditionSchema).optional(),
  properties: z.string().optional().describe('The effective properties of the unpacked bundle.'),
});
/** A bundle lookup. */
export type BundleLookup = z.infer<typeof bundleLookupSchema>;

/** InstallPlan `status`. */
export const installPlanStatusSchema = z.object({
  phase: z.enum(codeValues(InstallPlanPhase)),
  conditions: z.array(installPlanConditionSchema).optional(),
  catalogSources: z.array(z.string()),
  plan: z.array(stepSchema).optional(),
  bundleLookups: z.array(bundleLookupSchema).optional(),
  attenuatedServiceAccountRef: objectReferenceSchema
    .optional()
    .describe('The service account used for a scoped install.'),
  startTime: kubeTime('Time the plan started installing.').optional(),
  message: z.string().optional().describe('Why the plan is still retrying, when it is.'),
});
/** InstallPlan `status`. */
export type InstallPlanStatus = z.infer<typeof installPlanStatusSchema>;

/** An InstallPlan object. */
export const installPlanSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec: installPlanSpecSchema,
    status: installPlanStatusSchema.optional(),
  })
  .describe('InstallPlan defines the installation of a set of operators.');
/** An InstallPlan. */
export type InstallPlan = z.infer<typeof installPlanSchema>;
