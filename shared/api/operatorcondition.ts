// OperatorCondition (operators.coreos.com/v2, also served as v1): conditions an operator reports
// to OLM (e.g. Upgradeable), with administrator overrides.
import { z } from 'zod';
import { conditionListSchema, conditionSchema, objectMetaSchema } from './meta.js';

const conditionTargets = {
  serviceAccounts: z.array(z.string()).optional(),
  deployments: z.array(z.string()).optional(),
  overrides: z.array(conditionSchema).optional(),
};

/** An OperatorCondition (v2) object. */
export const operatorConditionSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec: z
      .object({ ...conditionTargets, conditions: z.array(conditionSchema).optional() })
      .optional(),
    status: z.object({ conditions: conditionListSchema.optional() }).optional(),
  })
  .describe(
    'OperatorCondition is a Custom Resource of type `OperatorCondition` which is used to convey information to OLM about the state of an operator.',
  );
/** An OperatorCondition (v2). */
export type OperatorCondition = z.infer<typeof operatorConditionSchema>;

/** An OperatorCondition as served at v1 (no spec.conditions). */
export const operatorConditionV1Schema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec: z.object(conditionTargets).optional(),
    status: z.object({ conditions: conditionListSchema.optional() }).optional(),
  })
  .describe(
    'OperatorCondition is a Custom Resource of type `OperatorCondition` which is used to convey information to OLM about the state of an operator.',
  );
/** An OperatorCondition (v1). */
export type OperatorConditionV1 = z.infer<typeof operatorConditionV1Schema>;
