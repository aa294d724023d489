// OLMConfig (operators.coreos.com/v1, cluster-scoped singleton named "cluster"): OLM feature switches.
import { z } from 'zod';
import { conditionListSchema, objectMetaSchema } from './meta.js';

/** Name of the only OLMConfig OLM reads. */
export const OLM_CONFIG_NAME = 'cluster';

/** OLMConfig `spec`. */
export const olmConfigSpecSchema = z.object({
  features: z
    .object({
      disableCopiedCSVs: z
        .boolean()
        .optional()
        .describe('Disables copied CSVs for operators installed in AllNamespaces mode.'),
      packageServerSyncInterval: z
        .string()
        .regex(/^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/)
        .optional()
        .describe('How often the package server resyncs catalogs, as a Go duration.'),
    })
    .optional(),
});
/** OLMConfig `spec`. */
export type OlmConfigSpec = z.infer<typeof olmConfigSpecSchema>;

/** An OLMConfig object. */
export const olmConfigSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec: olmConfigSpecSchema.optional(),
    status: z.object({ conditions: conditionListSchema.optional() }).optional(),
  })
  .describe('OLMConfig is a resource responsible for configuring OLM.');
/** An OLMConfig. */
export type OlmConfig = z.infer<typeof olmConfigSchema>;
