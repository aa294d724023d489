// ClusterServiceVersion (operators.coreos.com/v1alpha1): how to install one version of an operator.
// Fields, JSON names and requiredness follow upstream operator-framework/api; parts that are
// embedded Kubernetes types (a DeploymentSpec, webhook rules' details) are kept as opaque objects.
import { z } from 'zod';
import {
  CsvPhase,
  CsvReason,
  RequirementStatusReason,
  WebhookAdmissionType,
  codeValues,
} from './codes.js';
import {
  goString,
  groupVersionKindSchema,
  iconSchema,
  intOrString,
  kubeTime,
  labelSelectorSchema,
  objectMetaSchema,
  policyRuleSchema,
  serverDefault,
  stringMap,
} from './meta.js';

/** One install mode and whether the CSV supports it. */
export const installModeSchema = z.object({
  type: z
    .string()
    .describe(
      'InstallModeType: OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces. Other values are accepted, as upstream does, and count as unsupported modes.',
    ),
  supported: z.boolean(),
});
/** An install mode of a CSV. */
export type InstallMode = z.infer<typeof installModeSchema>;

// The embedded DeploymentSpec stays open except on the way to the fields that upstream's CRD
// (generated from the Kubernetes types) defaults, so stored CSVs carry the same defaults there.
const containerPortsSchema = z
  .array(
    z.looseObject({
      protocol: serverDefault(z.string(), 'TCP')
        .optional()
        .describe('Protocol for port. Must be UDP, TCP, or SCTP. Defaults to "TCP".'),
    }),
  )
  .optional();
const containersSchema = z.array(z.looseObject({ ports: containerPortsSchema })).optional();
const deploymentSpecSchema = z
  .looseObject({
    template: z
      .looseObject({
        spec: z
          .looseObject({
            containers: containersSchema,
            initContainers: containersSchema,
            ephemeralContainers: containersSchema,
          })
          .optional(),
      })
      .optional(),
  })
  .describe('An apps/v1 DeploymentSpec.');

/** A deployment the install strategy creates. */
export const strategyDeploymentSpecSchema = z.object({
  name: z.string(),
  spec: deploymentSpecSchema,
  label: stringMap('Labels of the Deployment.').optional(),
});
/** A deployment of the install strategy. */
export type StrategyDeploymentSpec = z.infer<typeof strategyDeploymentSpecSchema>;

/** RBAC rules granted to a service account of the operator. */
export const strategyDeploymentPermissionsSchema = z.object({
  serviceAccountName: z.string(),
  rules: z.array(policyRuleSchema),
});
/** Permissions of an operator service account. */
export type StrategyDeploymentPermissions = z.infer<typeof strategyDeploymentPermissionsSchema>;

/** The parsed `deployment` install strategy. */
export const strategyDetailsDeploymentSchema = z.object({
  deployments: z.array(strategyDeploymentSpecSchema),
  permissions: z.array(strategyDeploymentPermissionsSchema).optional(),
  clusterPermissions: z.array(strategyDeploymentPermissionsSchema).optional(),
});
/** The `deployment` install strategy. */
export type StrategyDetailsDeployment = z.infer<typeof strategyDetailsDeploymentSchema>;

/** `spec.install`: the strategy name (only "deployment" is installable) and its details. */
export const namedInstallStrategySchema = z
  .object({
    strategy: z
      .string()
      .describe('Install strategy name; "deployment" is the only one OLM can run.'),
    spec: strategyDetailsDeploymentSchema.optional(),
  })
  .describe(
    'NamedInstallStrategy represents the block of an ClusterServiceVersion resource where the install strategy is specified.',
  );
/** `spec.install`. */
export type NamedInstallStrategy = z.infer<typeof namedInstallStrategySchema>;

/** A spec, status or action descriptor of an owned API (UI hints). */
export const descriptorSchema = z.object({
  path: z.string(),
  displayName: z.string().optional(),
  description: z.string().optional(),
  'x-descriptors': z.array(z.string()).optional(),
  value: z
    .string()
    .optional()
    .describe('Raw JSON value, base64-encoded as Go encodes json.RawMessage.'),
});
/** A spec/status/action descriptor. */
export type Descriptor = z.infer<typeof descriptorSchema>;

/** A Kubernetes resource type a custom resource uses. */
export const apiResourceReferenceSchema = z.object({
  name: goString(
    'Plural name of the referenced resource type; empty if it is not a custom resource.',
  ),
  kind: goString('Kind of the referenced resource type.'),
  version: goString('API Version of the referenced resource type.'),
});
/** A resource reference. */
export type APIResourceReference = z.infer<typeof apiResourceReferenceSchema>;

// What a CSV says about each API it owns or requires, CRD or APIService alike.
const apiPresentationFields = {
  displayName: z.string().optional(),
  description: z.string().optional(),
  resources: z.array(apiResourceReferenceSchema).optional(),
  statusDescriptors: z.array(descriptorSchema).optional(),
  specDescriptors: z.array(descriptorSchema).optional(),
  actionDescriptors: z.array(descriptorSchema).optional(),
};

/** An owned or required CRD (`name` is `<plural>.<group>`). */
export const crdDescriptionSchema = z.object({
  name: z.string(),
  version: z.string(),
  kind: z.string(),
  ...apiPresentationFields,
});
/** A CRD description. */
export type CRDDescription = z.infer<typeof crdDescriptionSchema>;

/** An owned or required aggregated API (APIService `<version>.<group>`). */
export const apiServiceDescriptionSchema = z.object({
  name: z.string(),
  group: z.string(),
  version: z.string(),
  kind: z.string(),
  deploymentName: z.string().optional(),
  containerPort: z.int32().optional(),
  ...apiPresentationFields,
});
/** An APIService description. */
export type APIServiceDescription = z.infer<typeof apiServiceDescriptionSchema>;

/** An admissionregistration/v1 RuleWithOperations. */
export const ruleWithOperationsSchema = z.object({
  operations: z.array(z.string()).optional(),
  apiGroups: z.array(z.string()).optional(),
  apiVersions: z.array(z.string()).optional(),
  resources: z.array(z.string()).optional(),
  scope: z.string().optional(),
});
/** A webhook rule. */
export type RuleWithOperations = z.infer<typeof ruleWithOperationsSchema>;

/** A webhook the operator serves (`spec.webhookdefinitions[]`). */
export const webhookDescriptionSchema = z.object({
  generateName: z.string(),
  type: z.enum(codeValues(WebhookAdmissionType)),
  deploymentName: z.string().optional(),
  containerPort: z.int32().min(1).max(65535).default(443),
  targetPort: intOrString().optional(),
  rules: z.array(ruleWithOperationsSchema).optional(),
  failurePolicy: z.string().optional(),
  matchPolicy: z.string().optional(),
  objectSelector: labelSelectorSchema.optional(),
  sideEffects: z.string(),
  timeoutSeconds: z.int32().optional(),
  admissionReviewVersions: z.array(z.string()),
  reinvocationPolicy: z.string().optional(),
  webhookPath: z.string().optional(),
  conversionCRDs: z.array(z.string()).optional(),
});
/** A webhook description. */
export type WebhookDescription = z.infer<typeof webhookDescriptionSchema>;

/** A person or team maintaining the operator. */
export const maintainerSchema = z.object({
  name: z.string().optional(),
  email: z.string().optional(),
});

/** A named link (provider, documentation). */
export const appLinkSchema = z.object({
  name: z.string().optional(),
  url: z.string().optional(),
});

/** An image the operator uses. */
export const relatedImageSchema = z.object({
  name: goString(),
  image: goString(),
});

/** ClusterServiceVersion `spec`. */
export const clusterServiceVersionSpecSchema = z.object({
  install: namedInstallStrategySchema,
  version: z.string().optional().describe('The semantic version of the operator.'),
  release: z
    .string()
    .max(20)
    .regex(/^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/)
    .optional()
    .describe(
      'Packaging release of the operator version: dot-separated alphanumeric identifiers, at most 20 characters.',
    ),
  maturity: z.string().optional(),
  customresourcedefinitions: z
    .object({
      owned: z.array(crdDescriptionSchema).optional(),
      required: z.array(crdDescriptionSchema).optional(),
    })
    .optional()
    .describe('CRDs the operator owns or requires; owned CRDs are implicitly required.'),
  apiservicedefinitions: z
    .object({
      owned: z.array(apiServiceDescriptionSchema).optional(),
      required: z.array(apiServiceDescriptionSchema).optional(),
    })
    .optional()
    .describe('Aggregated APIs the operator owns or requires.'),
  webhookdefinitions: z.array(webhookDescriptionSchema).optional(),
  nativeAPIs: z.array(groupVersionKindSchema).optional(),
  minKubeVersion: z.string().optional(),
  displayName: z.string().describe('The name of the operator in display format.'),
  description: z.string().optional(),
  keywords: z.array(z.string()).optional(),
  maintainers: z.array(maintainerSchema).optional(),
  provider: appLinkSchema.optional().describe('The publishing entity behind the operator.'),
  links: z.array(appLinkSchema).optional(),
  icon: z.array(iconSchema).optional(),
  installModes: z
    .array(installModeSchema)
    .optional()
    .describe('InstallModes specify supported installation types'),
  replaces: z.string().optional().describe('The name of a CSV this one replaces.'),
  labels: stringMap().optional(),
  annotations: stringMap().optional(),
  selector: labelSelectorSchema.optional().describe('Label selector for related resources.'),
  cleanup: z
    .object({ enabled: z.boolean() })
    .optional()
    .describe('Cleanup behaviour when the CSV is deleted (unused by OLM).'),
  skips: z.array(z.string()).optional(),
  relatedImages: z.array(relatedImageSchema).optional(),
});
/** ClusterServiceVersion `spec`. */
export type ClusterServiceVersionSpec = z.infer<typeof clusterServiceVersionSpecSchema>;

const csvPhaseSchema = z.enum(codeValues(CsvPhase));
const csvReasonSchema = z.enum(codeValues(CsvReason));
const requirementStatusReasonSchema = z.enum(codeValues(RequirementStatusReason));

/** One entry of the CSV's phase history (`status.conditions[]`). */
export const clusterServiceVersionConditionSchema = z.object({
  phase: csvPhaseSchema.optional(),
  message: z.string().optional(),
  reason: csvReasonSchema.optional(),
  lastUpdateTime: kubeTime().optional(),
  lastTransitionTime: kubeTime().optional(),
});
/** A CSV phase-history entry. */
export type ClusterServiceVersionCondition = z.infer<typeof clusterServiceVersionConditionSchema>;

/** Status of a dependent of a requirement (e.g. one RBAC rule of a service account). */
export const dependentStatusSchema = z.object({
  group: z.string(),
  version: z.string(),
  kind: z.string(),
  status: requirementStatusReasonSchema,
  uuid: z.string().optional(),
  message: z.string().optional(),
});
/** A dependent status. */
export type DependentStatus = z.infer<typeof dependentStatusSchema>;

/** Status of one requirement (CRD, APIService, service account, native API). */
export const requirementStatusSchema = z.object({
  group: z.string(),
  version: z.string(),
  kind: z.string(),
  name: z.string(),
  status: requirementStatusReasonSchema,
  message: z.string(),
  uuid: z.string().optional(),
  dependents: z.array(dependentStatusSchema).optional(),
});
/** A requirement status. */
export type RequirementStatus = z.infer<typeof requirementStatusSchema>;

/** ClusterServiceVersion `status`. */
export const clusterServiceVersionStatusSchema = z.object({
  phase: csvPhaseSchema.optional().describe('Current condition of the ClusterServiceVersion'),
  message: z.string().optional(),
  reason: csvReasonSchema.optional(),
  lastUpdateTime: kubeTime().optional(),
  lastTransitionTime: kubeTime().optional(),
  conditions: z.array(clusterServiceVersionConditionSchema).optional(),
  requirementStatus: z.array(requirementStatusSchema).optional(),
  certsLastUpdated: kubeTime().optional(),
  certsRotateAt: kubeTime().optional(),
  cleanup: z
    .object({
      pendingDeletion: z
        .array(
          z.object({
            group: z.string(),
            kind: z.string(),
            instances: z.array(z.object({ name: z.string(), namespace: z.string().optional() })),
          }),
        )
        .optional(),
    })
    .optional(),
});
/** ClusterServiceVersion `status`. */
export type ClusterServiceVersionStatus = z.infer<typeof clusterServiceVersionStatusSchema>;

/** A ClusterServiceVersion object. */
export const clusterServiceVersionSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec: clusterServiceVersionSpecSchema,
    status: clusterServiceVersionStatusSchema.optional(),
  })
  .describe('ClusterServiceVersion is a Custom Resource of type `ClusterServiceVersionSpec`.');
/** A ClusterServiceVersion. */
export type ClusterServiceVersion = z.infer<typeof clusterServiceVersionSchema>;
