// Operator (operators.coreos.com/v1, cluster-scoped): the Operator API. One per operator, named
// `<package>.<namespace>`, listing the components labelled `operators.coreos.com/<name>` with
// their status conditions (upstream's operator and adoption controllers).
import { z } from 'zod';
import { kubeTime, labelSelectorSchema, objectMetaSchema, objectReferenceSchema } from './meta.js';

/** One condition of a component, as copied from it (CSVs: their phase, as a condition). */
export const componentConditionSchema = z.object({
  type: z.string().describe('Type of condition.'),
  status: z.string().describe('Status of the condition, one of True, False, Unknown.'),
  reason: z.string().optional().describe("The reason for the condition's last transition."),
  message: z
    .string()
    .optional()
    .describe('A human readable message indicating details about the transition.'),
  lastUpdateTime: kubeTime('Last time the condition was probed').optional(),
  lastTransitionTime: kubeTime(
    'Last time the condition transitioned from one status to another.',
  ).optional(),
});
/** A component's condition. */
export type ComponentCondition = z.infer<typeof componentConditionSchema>;

/** A reference to a component, enriched with its status conditions. */
export const richReferenceSchema = objectReferenceSchema
  .extend({
    conditions: z
      .array(componentConditionSchema)
      .optional()
      .describe('Conditions represents the latest state of the component.'),
  })
  .describe('RichReference is a reference to a resource, enriched with its status conditions.');
/** A component reference. */
export type RichReference = z.infer<typeof richReferenceSchema>;

/** Operator `status`. */
export const operatorStatusSchema = z
  .object({
    components: z
      .object({
        labelSelector: labelSelectorSchema.describe(
          "LabelSelector is a label query over a set of resources used to select the operator's components",
        ),
        refs: z
          .array(richReferenceSchema)
          .optional()
          .describe(
            "Refs are a set of references to the operator's component resources, selected with LabelSelector.",
          ),
      })
      .optional()
      .describe('Components describes resources that compose the operator.'),
  })
  .describe('OperatorStatus defines the observed state of an Operator and its components');
/** Operator `status`. */
export type OperatorStatus = z.infer<typeof operatorStatusSchema>;

/** An Operator object. */
export const operatorSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec: z.object({}).optional().describe('OperatorSpec defines the desired state of Operator'),
    status: operatorStatusSchema.optional(),
  })
  .describe('Operator represents a cluster operator.');
/** An Operator. */
export type Operator = z.infer<typeof operatorSchema>;
