// Core Kubernetes objects olmq reads or writes. We never own their full schema, so each is a
// loose object: the fields olmq uses are typed and validated, everything else is kept as is
// (a read-modify-write must not drop fields the server knows and we do not).
import { z } from 'zod';
import {
  conditionStatusSchema,
  kubeTime,
  labelSelectorSchema,
  objectMetaSchema,
  objectReferenceSchema,
  opaqueObject,
  policyRuleSchema,
  stringMap,
} from './meta.js';

/** metadata of a core object: typed like ObjectMeta, unknown fields kept. */
export const looseObjectMetaSchema = z.looseObject(objectMetaSchema.shape);

/** Builds the schema of a core object: apiVersion, kind, metadata plus the given fields. */
function coreObject<T extends z.core.$ZodLooseShape>(shape: T, description: string) {
  return z
    .looseObject({
      apiVersion: z.string().optional(),
      kind: z.string().optional(),
      metadata: looseObjectMetaSchema,
      ...shape,
    })
    .describe(description);
}

/** core/v1 Namespace. */
export const namespaceSchema = coreObject(
  { status: z.looseObject({ phase: z.string().optional() }).optional() },
  'A core/v1 Namespace.',
);
/** core/v1 Namespace. */
export type Namespace = z.infer<typeof namespaceSchema>;

/** core/v1 ConfigMap (ConfigMap catalogs, unpacked bundles). */
export const configMapSchema = coreObject(
  {
    data: stringMap().optional(),
    binaryData: stringMap('base64 values.').optional(),
    immutable: z.boolean().optional(),
  },
  'A core/v1 ConfigMap.',
);
/** core/v1 ConfigMap. */
export type ConfigMap = z.infer<typeof configMapSchema>;

/** core/v1 Secret (serving certificates, bundle secrets). */
export const secretSchema = coreObject(
  {
    type: z.string().optional(),
    data: stringMap('base64 values.').optional(),
    stringData: stringMap().optional(),
    immutable: z.boolean().optional(),
  },
  'A core/v1 Secret.',
);
/** core/v1 Secret. */
export type Secret = z.infer<typeof secretSchema>;

/** core/v1 ServiceAccount. */
export const serviceAccountSchema = coreObject(
  {
    secrets: z.array(objectReferenceSchema).optional(),
    imagePullSecrets: z.array(z.looseObject({ name: z.string().optional() })).optional(),
    automountServiceAccountToken: z.boolean().optional(),
  },
  'A core/v1 ServiceAccount.',
);
/** core/v1 ServiceAccount. */
export type ServiceAccount = z.infer<typeof serviceAccountSchema>;

/** One port of a Service. */
export const servicePortSchema = z.looseObject({
  name: z.string().optional(),
  protocol: z.string().optional(),
  port: z.int(),
  targetPort: z.union([z.int(), z.string()]).optional(),
  nodePort: z.int().optional(),
});

/** core/v1 Service (registry and webhook/APIService services). */
export const serviceSchema = coreObject(
  {
    spec: z
      .looseObject({
        type: z.string().optional(),
        selector: stringMap().optional(),
        ports: z.array(servicePortSchema).optional(),
        clusterIP: z.string().optional(),
      })
      .optional(),
    status: opaqueObject().optional(),
  },
  'A core/v1 Service.',
);
/** core/v1 Service. */
export type Service = z.infer<typeof serviceSchema>;

/** A container of a pod template, with the fields install overrides touch. */
export const containerSchema = z.looseObject({
  name: z.string(),
  image: z.string().optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  env: z.array(z.looseObject({ name: z.string(), value: z.string().optional() })).optional(),
  envFrom: z.array(opaqueObject()).optional(),
  volumeMounts: z.array(z.looseObject({ name: z.string(), mountPath: z.string() })).optional(),
  resources: opaqueObject().optional(),
  ports: z.array(opaqueObject()).optional(),
});
/** A container. */
export type Container = z.infer<typeof containerSchema>;

/** core/v1 PodSpec, the fields install overrides and the registry pod use. */
export const podSpecSchema = z.looseObject({
  serviceAccountName: z.string().optional(),
  containers: z.array(containerSchema),
  initContainers: z.array(containerSchema).optional(),
  volumes: z.array(z.looseObject({ name: z.string() })).optional(),
  nodeSelector: stringMap().optional(),
  tolerations: z.array(opaqueObject()).optional(),
  affinity: opaqueObject().optional(),
  priorityClassName: z.string().optional(),
  securityContext: opaqueObject().optional(),
  imagePullSecrets: z.array(z.looseObject({ name: z.string().optional() })).optional(),
});
/** core/v1 PodSpec. */
export type PodSpec = z.infer<typeof podSpecSchema>;

/** A pod condition (Ready, ...). */
export const podConditionSchema = z.looseObject({
  type: z.string(),
  status: conditionStatusSchema,
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: kubeTime().optional(),
});

/** core/v1 Pod (catalog registry pods). */
export const podSchema = coreObject(
  {
    spec: podSpecSchema.optional(),
    status: z
      .looseObject({
        phase: z.string().optional(),
        conditions: z.array(podConditionSchema).optional(),
        podIP: z.string().optional(),
        containerStatuses: z.array(opaqueObject()).optional(),
      })
      .optional(),
  },
  'A core/v1 Pod.',
);
/** core/v1 Pod. */
export type Pod = z.infer<typeof podSchema>;

/** A Deployment condition (Available, Progressing). */
export const deploymentConditionSchema = z.looseObject({
  type: z.string(),
  status: conditionStatusSchema,
  reason: z.string().optional(),
  message: z.string().optional(),
  lastUpdateTime: kubeTime().optional(),
  lastTransitionTime: kubeTime().optional(),
});

/** apps/v1 Deployment (the operator's deployments). */
export const deploymentSchema = coreObject(
  {
    spec: z.looseObject({
      replicas: z.int().optional(),
      selector: labelSelectorSchema,
      template: z.looseObject({
        metadata: looseObjectMetaSchema.optional(),
        spec: podSpecSchema,
      }),
      strategy: opaqueObject().optional(),
      revisionHistoryLimit: z.int().optional(),
      progressDeadlineSeconds: z.int().optional(),
    }),
    status: z
      .looseObject({
        observedGeneration: z.int().optional(),
        replicas: z.int().optional(),
        updatedReplicas: z.int().optional(),
        readyReplicas: z.int().optional(),
        availableReplicas: z.int().optional(),
        unavailableReplicas: z.int().optional(),
        conditions: z.array(deploymentConditionSchema).optional(),
      })
      .optional(),
  },
  'An apps/v1 Deployment.',
);
/** apps/v1 Deployment. */
export type Deployment = z.infer<typeof deploymentSchema>;

/** rbac/v1 RoleRef. */
export const roleRefSchema = z.looseObject({
  apiGroup: z.string(),
  kind: z.string(),
  name: z.string(),
});

/** rbac/v1 Subject. */
export const subjectSchema = z.looseObject({
  kind: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
  apiGroup: z.string().optional(),
});
/** An RBAC subject. */
export type Subject = z.infer<typeof subjectSchema>;

/** rbac/v1 Role. */
export const roleSchema = coreObject(
  { rules: z.array(policyRuleSchema).optional() },
  'An rbac/v1 Role.',
);
/** rbac/v1 Role. */
export type Role = z.infer<typeof roleSchema>;

/** rbac/v1 ClusterRole (with its aggregation rule). */
export const clusterRoleSchema = coreObject(
  {
    rules: z.array(policyRuleSchema).optional(),
    aggregationRule: z
      .looseObject({ clusterRoleSelectors: z.array(labelSelectorSchema).optional() })
      .optional(),
  },
  'An rbac/v1 ClusterRole.',
);
/** rbac/v1 ClusterRole. */
export type ClusterRole = z.infer<typeof clusterRoleSchema>;

/** rbac/v1 RoleBinding. */
export const roleBindingSchema = coreObject(
  { subjects: z.array(subjectSchema).optional(), roleRef: roleRefSchema },
  'An rbac/v1 RoleBinding.',
);
/** rbac/v1 RoleBinding. */
export type RoleBinding = z.infer<typeof roleBindingSchema>;

/** rbac/v1 ClusterRoleBinding. */
export const clusterRoleBindingSchema = coreObject(
  { subjects: z.array(subjectSchema).optional(), roleRef: roleRefSchema },
  'An rbac/v1 ClusterRoleBinding.',
);
/** rbac/v1 ClusterRoleBinding. */
export type ClusterRoleBinding = z.infer<typeof clusterRoleBindingSchema>;

/** One version of a CustomResourceDefinition. */
export const crdVersionSchema = z.looseObject({
  name: z.string(),
  served: z.boolean(),
  storage: z.boolean(),
  deprecated: z.boolean().optional(),
  schema: z.looseObject({ openAPIV3Schema: opaqueObject().optional() }).optional(),
  subresources: opaqueObject().optional(),
  additionalPrinterColumns: z.array(opaqueObject()).optional(),
});

/** apiextensions.k8s.io/v1 CustomResourceDefinition. */
export const customResourceDefinitionSchema = coreObject(
  {
    spec: z.looseObject({
      group: z.string(),
      names: z.looseObject({
        plural: z.string(),
        singular: z.string().optional(),
        kind: z.string(),
        listKind: z.string().optional(),
        shortNames: z.array(z.string()).optional(),
        categories: z.array(z.string()).optional(),
      }),
      scope: z.enum(['Namespaced', 'Cluster']),
      versions: z.array(crdVersionSchema),
      conversion: opaqueObject().optional(),
      preserveUnknownFields: z.boolean().optional(),
    }),
    status: z
      .looseObject({
        conditions: z
          .array(
            z.looseObject({
              type: z.string(),
              status: conditionStatusSchema,
              reason: z.string().optional(),
              message: z.string().optional(),
              lastTransitionTime: kubeTime().optional(),
            }),
          )
          .optional(),
        acceptedNames: opaqueObject().optional(),
        storedVersions: z.array(z.string()).optional(),
      })
      .optional(),
  },
  'An apiextensions.k8s.io/v1 CustomResourceDefinition.',
);
/** apiextensions.k8s.io/v1 CustomResourceDefinition. */
export type CustomResourceDefinition = z.infer<typeof customResourceDefinitionSchema>;

/** coordination.k8s.io/v1 Lease (watcher leader election). */
export const leaseSchema = coreObject(
  {
    spec: z
      .looseObject({
        holderIdentity: z.string().optional(),
        leaseDurationSeconds: z.int().optional(),
        acquireTime: z.string().optional().describe('MicroTime, RFC 3339 with microseconds.'),
        renewTime: z.string().optional().describe('MicroTime, RFC 3339 with microseconds.'),
        leaseTransitions: z.int().optional(),
      })
      .optional(),
  },
  'A coordination.k8s.io/v1 Lease.',
);
/** coordination.k8s.io/v1 Lease. */
export type Lease = z.infer<typeof leaseSchema>;

/** core/v1 Event (phase changes, warnings). */
export const eventSchema = coreObject(
  {
    involvedObject: objectReferenceSchema,
    reason: z.string().optional(),
    message: z.string().optional(),
    type: z.string().optional().describe('Normal or Warning.'),
    source: z
      .looseObject({ component: z.string().optional(), host: z.string().optional() })
      .optional(),
    firstTimestamp: kubeTime().optional(),
    lastTimestamp: kubeTime().optional(),
    count: z.int().optional(),
    reportingComponent: z.string().optional(),
    reportingInstance: z.string().optional(),
  },
  'A core/v1 Event.',
);
/** core/v1 Event. */
export type Event = z.infer<typeof eventSchema>;

/** apiregistration.k8s.io/v1 APIService (owned aggregated APIs). */
export const apiServiceSchema = coreObject(
  {
    spec: z.looseObject({
      service: z
        .looseObject({
          namespace: z.string().optional(),
          name: z.string().optional(),
          port: z.int().optional(),
        })
        .optional(),
      group: z.string().optional(),
      version: z.string().optional(),
      insecureSkipTLSVerify: z.boolean().optional(),
      caBundle: z.string().optional().describe('base64 PEM.'),
      groupPriorityMinimum: z.int(),
      versionPriority: z.int(),
    }),
    status: z
      .looseObject({
        conditions: z
          .array(
            z.looseObject({
              type: z.string(),
              status: conditionStatusSchema,
              reason: z.string().optional(),
              message: z.string().optional(),
              lastTransitionTime: kubeTime().optional(),
            }),
          )
          .optional(),
      })
      .optional(),
  },
  'An apiregistration.k8s.io/v1 APIService.',
);
/** apiregistration.k8s.io/v1 APIService. */
export type APIService = z.infer<typeof apiServiceSchema>;

/** One webhook of a webhook configuration. */
export const webhookSchema = z.looseObject({
  name: z.string(),
  clientConfig: z.looseObject({
    url: z.string().optional(),
    service: z
      .looseObject({
        namespace: z.string(),
        name: z.string(),
        path: z.string().optional(),
        port: z.int().optional(),
      })
      .optional(),
    caBundle: z.string().optional(),
  }),
  rules: z.array(opaqueObject()).optional(),
  failurePolicy: z.string().optional(),
  matchPolicy: z.string().optional(),
  namespaceSelector: labelSelectorSchema.optional(),
  objectSelector: labelSelectorSchema.optional(),
  sideEffects: z.string().optional(),
  timeoutSeconds: z.int().optional(),
  admissionReviewVersions: z.array(z.string()).optional(),
  reinvocationPolicy: z.string().optional(),
});
/** An admission webhook. */
export type Webhook = z.infer<typeof webhookSchema>;

/** admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration. */
export const validatingWebhookConfigurationSchema = coreObject(
  { webhooks: z.array(webhookSchema).optional() },
  'An admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration.',
);
/** admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration. */
export type ValidatingWebhookConfiguration = z.infer<typeof validatingWebhookConfigurationSchema>;

/** admissionregistration.k8s.io/v1 MutatingWebhookConfiguration. */
export const mutatingWebhookConfigurationSchema = coreObject(
  { webhooks: z.array(webhookSchema).optional() },
  'An admissionregistration.k8s.io/v1 MutatingWebhookConfiguration.',
);
/** admissionregistration.k8s.io/v1 MutatingWebhookConfiguration. */
export type MutatingWebhookConfiguration = z.infer<typeof mutatingWebhookConfigurationSchema>;
