// OperatorGroup (operators.coreos.com/v1, also served as v1alpha2): the unit of multitenancy,
// selecting the namespaces its operators watch.
import { z } from 'zod';
import { UpgradeStrategyName, codeValues } from './codes.js';
import {
  conditionListSchema,
  kubeTime,
  labelSelectorSchema,
  objectMetaSchema,
  objectReferenceSchema,
  stringSet,
} from './meta.js';

const targetSelection = {
  selector: labelSelectorSchema
    .optional()
    .describe("Selector selects the OperatorGroup's target namespaces."),
  targetNamespaces: stringSet(
    'An explicit set of namespaces to target. If it is set, Selector is ignored.',
  ).optional(),
  serviceAccountName: z
    .string()
    .optional()
    .describe('Service account used to install operators of this group.'),
  staticProvidedAPIs: z
    .boolean()
    .optional()
    .describe('Tells OLM not to update the providedAPIs annotation.'),
};

/** OperatorGroup v1 `spec`. */
export const operatorGroupSpecSchema = z.object({
  ...targetSelection,
  upgradeStrategy: z
    .enum(codeValues(UpgradeStrategyName))
    .default('Default')
    .describe(
      'How OLM upgrades operators of this group. Default: a CSV moves to Replacing only from ' +
        'Succeeded, so a failed install or upgrade blocks the next one. ' +
        'TechPreviewUnsafeFailForward: a CSV may also be replaced from Failed, and a failed ' +
        'InstallPlan does not block a new resolution; unsafe unless you know the operators well.',
    ),
});
/** OperatorGroup v1 `spec`. */
export type OperatorGroupSpec = z.infer<typeof operatorGroupSpecSchema>;

/** OperatorGroup v1 `status`. */
export const operatorGroupStatusSchema = z.object({
  namespaces: stringSet('The set of target namespaces ("" means all).').optional(),
  serviceAccountRef: objectReferenceSchema.optional(),
  lastUpdated: kubeTime('The last time the status was updated.'),
  conditions: conditionListSchema.optional(),
});
/** OperatorGroup v1 `status`. */
export type OperatorGroupStatus = z.infer<typeof operatorGroupStatusSchema>;

/** An OperatorGroup (v1) object. */
export const operatorGroupSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    // Upstream defaults the whole spec, so an OperatorGroup without one has the Default strategy.
    spec: operatorGroupSpecSchema.default({ upgradeStrategy: 'Default' }),
    status: operatorGroupStatusSchema.optional(),
  })
  .describe('OperatorGroup is the unit of multitenancy for OLM managed operators.');
/** An OperatorGroup (v1). */
export type OperatorGroup = z.infer<typeof operatorGroupSchema>;

/** An OperatorGroup as served at v1alpha2 (no upgrade strategy, conditions or service account ref). */
export const operatorGroupV1alpha2Schema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec: z.object(targetSelection).optional(),
    status: z
      .object({
        namespaces: stringSet().optional(),
        lastUpdated: kubeTime(),
      })
      .optional(),
  })
  .describe('OperatorGroup is the unit of multitenancy for OLM managed operators.');
/** An OperatorGroup (v1alpha2). */
export type OperatorGroupV1alpha2 = z.infer<typeof operatorGroupV1alpha2Schema>;

/**
 * The group's upgrade strategy, Default unless it asks for TechPreviewUnsafeFailForward (as
 * upstream's `OperatorGroup.UpgradeStrategy()`). Reads objects that were stored before the
 * field became upstream's string too: olmq once stored `{name: <strategy>}`.
 */
export function upgradeStrategyOf(og: {
  spec?: { upgradeStrategy?: unknown } | undefined;
}): UpgradeStrategyName {
  const value: unknown = og.spec?.upgradeStrategy;
  const name =
    typeof value === 'object' && value !== null ? (value as { name?: unknown }).name : value;
  return name === UpgradeStrategyName.TechPreviewUnsafeFailForward
    ? UpgradeStrategyName.TechPreviewUnsafeFailForward
    : UpgradeStrategyName.Default;
}
