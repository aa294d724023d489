// CatalogSource (operators.coreos.com/v1alpha1): a repository of operator packages.
import { z } from 'zod';
import {
  CatalogSourceReason,
  GrpcConnectionState,
  SecurityContextConfig,
  codeValues,
} from './codes.js';
import {
  conditionListSchema,
  iconSchema,
  intOrString,
  kubeTime,
  objectMetaSchema,
  opaqueObject,
  stringMap,
} from './meta.js';

/** Overrides of the registry pod of an image-backed catalog. */
export const grpcPodConfigSchema = z.object({
  nodeSelector: stringMap().optional(),
  tolerations: z.array(opaqueObject('A corev1.Toleration.')).optional(),
  affinity: opaqueObject('A corev1.Affinity.').optional(),
  priorityClassName: z.string().optional(),
  securityContextConfig: z
    .enum(codeValues(SecurityContextConfig))
    .default('legacy')
    .describe('legacy or restricted: the pod security profile of the registry pod.'),
  memoryTarget: intOrString(
    'A resource.Quantity: the GOMEMLIMIT and memory request of the pod.',
  ).optional(),
  extractContent: z
    .object({
      cacheDir: z.string().describe('The directory storing the pre-calculated API cache.'),
      catalogDir: z.string().describe('The directory storing the file-based catalog contents.'),
    })
    .optional(),
});
/** CatalogSource `spec.grpcPodConfig`. */
export type GrpcPodConfig = z.infer<typeof grpcPodConfigSchema>;

/** CatalogSource `spec`. */
export const catalogSourceSpecSchema = z.object({
  sourceType: z
    .string()
    .describe(
      'grpc, configmap or internal. Other values are accepted and reported as SpecInvalidError in status.',
    ),
  priority: z
    .int()
    .optional()
    .describe('Weight for dependency resolution; higher is preferred (default 0).'),
  configMap: z.string().optional(),
  address: z
    .string()
    .optional()
    .describe('host:port of a running registry; ignored when image is set.'),
  image: z.string().optional(),
  grpcPodConfig: grpcPodConfigSchema.optional(),
  updateStrategy: z
    .object({
      registryPoll: z
        .object({ interval: z.string().optional().describe('A Go duration such as 15m.') })
        .optional(),
    })
    .optional(),
  secrets: z.array(z.string()).optional(),
  displayName: z.string().optional(),
  description: z.string().optional(),
  publisher: z.string().optional(),
  icon: iconSchema.optional(),
});
/** CatalogSource `spec`. */
export type CatalogSourceSpec = z.infer<typeof catalogSourceSpecSchema>;

/** CatalogSource `status`. */
export const catalogSourceStatusSchema = z.object({
  message: z.string().optional(),
  reason: z.enum(codeValues(CatalogSourceReason)).optional(),
  latestImageRegistryPoll: kubeTime().optional(),
  configMapReference: z
    .object({
      name: z.string(),
      namespace: z.string(),
      uid: z.string().optional(),
      resourceVersion: z.string().optional(),
      lastUpdateTime: kubeTime().optional(),
    })
    .optional(),
  registryService: z
    .object({
      protocol: z.string().optional(),
      serviceName: z.string().optional(),
      serviceNamespace: z.string().optional(),
      port: z.string().optional(),
      createdAt: kubeTime().optional(),
    })
    .optional(),
  connectionState: z
    .object({
      address: z.string().optional(),
      lastObservedState: z.enum(codeValues(GrpcConnectionState)),
      lastConnect: kubeTime().optional(),
    })
    .optional(),
  conditions: conditionListSchema.optional(),
});
/** CatalogSource `status`. */
export type CatalogSourceStatus = z.infer<typeof catalogSourceStatusSchema>;

/** A CatalogSource object. */
export const catalogSourceSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec: catalogSourceSpecSchema,
    status: catalogSourceStatusSchema.optional(),
  })
  .describe('CatalogSource is a repository of CSVs, CRDs, and operator packages.');
/** A CatalogSource. */
export type CatalogSource = z.infer<typeof catalogSourceSchema>;
