// Stable codes of the OLM API: phases, reasons, condition types, enums, labels and annotations.
// These strings are public surface (kubectl output, `kubectl wait --for=condition=...`, alerts),
// identical to upstream OLM; test/unit/api-codes.test.ts pins every value so a change is deliberate.

/** The values of a const object, as a union type. */
export type ValueOf<T> = T[keyof T];

/** The values of a const object as a non-empty tuple, for `z.enum`. */
export function codeValues<T extends Record<string, string>>(
  codes: T,
): [ValueOf<T>, ...ValueOf<T>[]] {
  const values = Object.values(codes) as ValueOf<T>[];
  const [first, ...rest] = values;
  if (first === undefined) throw new Error('a code catalogue must not be empty');
  return [first, ...rest];
}

/** API group of every OLM kind. */
export const OLM_GROUP = 'operators.coreos.com';

/** Status of a Kubernetes condition (corev1.ConditionStatus / metav1.ConditionStatus). */
export const ConditionStatus = {
  True: 'True',
  False: 'False',
  Unknown: 'Unknown',
} as const;
/** One of True, False, Unknown. */
export type ConditionStatus = ValueOf<typeof ConditionStatus>;

/** Phases of a ClusterServiceVersion (`status.phase`); None is the empty string of a new CSV. */
export const CsvPhase = {
  None: '',
  Pending: 'Pending',
  InstallReady: 'InstallReady',
  Installing: 'Installing',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Unknown: 'Unknown',
  Replacing: 'Replacing',
  Deleting: 'Deleting',
} as const;
/** A ClusterServiceVersion phase. */
export type CsvPhase = ValueOf<typeof CsvPhase>;

/** Reasons of a ClusterServiceVersion (`status.reason`, `status.conditions[].reason`). */
export const CsvReason = {
  RequirementsUnknown: 'RequirementsUnknown',
  RequirementsNotMet: 'RequirementsNotMet',
  AllRequirementsMet: 'AllRequirementsMet',
  OwnerConflict: 'OwnerConflict',
  InstallComponentFailed: 'InstallComponentFailed',
  InstallComponentFailedNoRetry: 'InstallComponentFailedNoRetry',
  InvalidInstallStrategy: 'InvalidInstallStrategy',
  InstallWaiting: 'InstallWaiting',
  InstallSucceeded: 'InstallSucceeded',
  InstallCheckFailed: 'InstallCheckFailed',
  ComponentUnhealthy: 'ComponentUnhealthy',
  BeingReplaced: 'BeingReplaced',
  Replaced: 'Replaced',
  NeedsReinstall: 'NeedsReinstall',
  NeedsCertRotation: 'NeedsCertRotation',
  APIServiceResourceIssue: 'APIServiceResourceIssue',
  APIServiceResourcesNeedReinstall: 'APIServiceResourcesNeedReinstall',
  APIServiceInstallFailed: 'APIServiceInstallFailed',
  Copied: 'Copied',
  InvalidInstallModes: 'InvalidInstallModes',
  NoTargetNamespaces: 'NoTargetNamespaces',
  UnsupportedOperatorGroup: 'UnsupportedOperatorGroup',
  NoOperatorGroup: 'NoOperatorGroup',
  TooManyOperatorGroups: 'TooManyOperatorGroups',
  InterOperatorGroupOwnerConflict: 'InterOperatorGroupOwnerConflict',
  CannotModifyStaticOperatorGroupProvidedAPIs: 'CannotModifyStaticOperatorGroupProvidedAPIs',
  DetectedClusterChange: 'DetectedClusterChange',
  InvalidWebhookDescription: 'InvalidWebhookDescription',
  OperatorConditionNotUpgradeable: 'OperatorConditionNotUpgradeable',
  WaitingOnCleanup: 'WaitingOnCleanup',
} as const;
/** A ClusterServiceVersion reason. */
export type CsvReason = ValueOf<typeof CsvReason>;

/** Status of a CSV requirement or dependent (`status.requirementStatus[].status`). */
export const RequirementStatusReason = {
  Present: 'Present',
  NotPresent: 'NotPresent',
  PresentNotSatisfied: 'PresentNotSatisfied',
  PresentNotAvailable: 'PresentNotAvailable',
  Satisfied: 'Satisfied',
  NotSatisfied: 'NotSatisfied',
  DeploymentFound: 'DeploymentFound',
  DeploymentNotFound: 'DeploymentNotFound',
} as const;
/** A requirement or dependent status. */
export type RequirementStatusReason = ValueOf<typeof RequirementStatusReason>;

/** Install modes a CSV declares in `spec.installModes[].type`. */
export const InstallModeType = {
  OwnNamespace: 'OwnNamespace',
  SingleNamespace: 'SingleNamespace',
  MultiNamespace: 'MultiNamespace',
  AllNamespaces: 'AllNamespaces',
} as const;
/** An install mode type. */
export type InstallModeType = ValueOf<typeof InstallModeType>;

/** The only install strategy OLM knows (`spec.install.strategy`). */
export const InstallStrategyName = {
  Deployment: 'deployment',
} as const;
/** An install strategy name. */
export type InstallStrategyName = ValueOf<typeof InstallStrategyName>;

/** Kinds of webhook a CSV describes (`spec.webhookdefinitions[].type`). */
export const WebhookAdmissionType = {
  ValidatingAdmissionWebhook: 'ValidatingAdmissionWebhook',
  MutatingAdmissionWebhook: 'MutatingAdmissionWebhook',
  ConversionWebhook: 'ConversionWebhook',
} as const;
/** A webhook description type. */
export type WebhookAdmissionType = ValueOf<typeof WebhookAdmissionType>;

/** InstallPlan approval policy (InstallPlan `spec.approval`, Subscription `spec.installPlanApproval`). */
export const Approval = {
  Automatic: 'Automatic',
  Manual: 'Manual',
} as const;
/** An approval policy. */
export type Approval = ValueOf<typeof Approval>;

/** Phases of an InstallPlan (`status.phase`); None is the empty string of a new plan. */
export const InstallPlanPhase = {
  None: '',
  Planning: 'Planning',
  RequiresApproval: 'RequiresApproval',
  Installing: 'Installing',
  Complete: 'Complete',
  Failed: 'Failed',
} as const;
/** An InstallPlan phase. */
export type InstallPlanPhase = ValueOf<typeof InstallPlanPhase>;

/** Condition types of an InstallPlan. */
export const InstallPlanConditionType = {
  Resolved: 'Resolved',
  Installed: 'Installed',
} as const;
/** An InstallPlan condition type. */
export type InstallPlanConditionType = ValueOf<typeof InstallPlanConditionType>;

/** Condition reasons of an InstallPlan. */
export const InstallPlanConditionReason = {
  PlanUnknown: 'PlanUnknown',
  InstallCheckFailed: 'InstallCheckFailed',
  DependenciesConflict: 'DependenciesConflict',
  InstallComponentFailed: 'InstallComponentFailed',
} as const;
/** An InstallPlan condition reason. */
export type InstallPlanConditionReason = ValueOf<typeof InstallPlanConditionReason>;

/** Status of one InstallPlan step (`status.plan[].status`). */
export const StepStatus = {
  Unknown: 'Unknown',
  NotPresent: 'NotPresent',
  Present: 'Present',
  Created: 'Created',
  NotCreated: 'NotCreated',
  WaitingForApi: 'WaitingForApi',
  UnsupportedResource: 'UnsupportedResource',
} as const;
/** A step status. */
export type StepStatus = ValueOf<typeof StepStatus>;

/** Condition types of an InstallPlan bundle lookup (`status.bundleLookups[].conditions[].type`). */
export const BundleLookupConditionType = {
  BundleLookupPending: 'BundleLookupPending',
  BundleLookupFailed: 'BundleLookupFailed',
  BundleLookupNotPersisted: 'BundleLookupNotPersisted',
} as const;
/** A bundle lookup condition type. */
export type BundleLookupConditionType = ValueOf<typeof BundleLookupConditionType>;

/** Reasons olmq writes on bundle lookup conditions. */
export const BundleLookupReason = {
  BundleNotUnpacked: 'BundleNotUnpacked',
  JobNotStarted: 'JobNotStarted',
  JobIncomplete: 'JobIncomplete',
  JobFailed: 'JobFailed',
  CatalogSourceMissing: 'CatalogSourceMissing',
  /** The unpack timeout passed (upstream copies it from its unpack Job's condition). */
  DeadlineExceeded: 'DeadlineExceeded',
} as const;
/** A bundle lookup reason. */
export type BundleLookupReason = ValueOf<typeof BundleLookupReason>;

/** States of a Subscription (`status.state`); None is the empty string of a new subscription. */
export const SubscriptionState = {
  None: '',
  UpgradeFailed: 'UpgradeFailed',
  UpgradeAvailable: 'UpgradeAvailable',
  UpgradePending: 'UpgradePending',
  AtLatestKnown: 'AtLatestKnown',
} as const;
/** A Subscription state. */
export type SubscriptionState = ValueOf<typeof SubscriptionState>;

/** Reasons of a Subscription (`status.reason`). */
export const SubscriptionReason = {
  InvalidCatalog: 'InvalidCatalog',
  UpgradeSucceeded: 'UpgradeSucceeded',
} as const;
/** A Subscription status reason. */
export type SubscriptionReason = ValueOf<typeof SubscriptionReason>;

/** Condition types of a Subscription (`status.conditions[].type`). */
export const SubscriptionConditionType = {
  CatalogSourcesUnhealthy: 'CatalogSourcesUnhealthy',
  InstallPlanMissing: 'InstallPlanMissing',
  InstallPlanPending: 'InstallPlanPending',
  InstallPlanFailed: 'InstallPlanFailed',
  ResolutionFailed: 'ResolutionFailed',
  BundleUnpacking: 'BundleUnpacking',
  BundleUnpackFailed: 'BundleUnpackFailed',
  Deprecated: 'Deprecated',
  PackageDeprecated: 'PackageDeprecated',
  ChannelDeprecated: 'ChannelDeprecated',
  BundleDeprecated: 'BundleDeprecated',
} as const;
/** A Subscription condition type. */
export type SubscriptionConditionType = ValueOf<typeof SubscriptionConditionType>;

/**
 * Reasons of Subscription conditions. InstallPlanPending also carries the plan's phase
 * (RequiresApproval, Installing, ...) and InstallPlanFailed the plan's Installed reason.
 */
export const SubscriptionConditionReason = {
  UnhealthyCatalogSourceFound: 'UnhealthyCatalogSourceFound',
  AllCatalogSourcesHealthy: 'AllCatalogSourcesHealthy',
  CatalogSourcesAdded: 'CatalogSourcesAdded',
  CatalogSourcesUpdated: 'CatalogSourcesUpdated',
  CatalogSourcesDeleted: 'CatalogSourcesDeleted',
  NoCatalogSourcesFound: 'NoCatalogSourcesFound',
  InstallPlanNotYetReconciled: 'InstallPlanNotYetReconciled',
  InstallPlanFailed: 'InstallPlanFailed',
  ReferencedInstallPlanNotFound: 'ReferencedInstallPlanNotFound',
  ConstraintsNotSatisfiable: 'ConstraintsNotSatisfiable',
  ErrorPreventedResolution: 'ErrorPreventedResolution',
  UnpackingInProgress: 'UnpackingInProgress',
  BundleUnpackFailed: 'BundleUnpackFailed',
  ErrorPreventedUnpacking: 'ErrorPreventedUnpacking',
  EnsureInstallPlanFailed: 'EnsureInstallPlanFailed',
  Deprecated: 'Deprecated',
} as const;
/** A Subscription condition reason. */
export type SubscriptionConditionReason = ValueOf<typeof SubscriptionConditionReason>;

/** Source types of a CatalogSource (`spec.sourceType`); internal is a deprecated alias of configmap. */
export const CatalogSourceType = {
  Grpc: 'grpc',
  ConfigMap: 'configmap',
  Internal: 'internal',
} as const;
/** A catalog source type. */
export type CatalogSourceType = ValueOf<typeof CatalogSourceType>;

/** Reasons of a CatalogSource (`status.reason`). */
export const CatalogSourceReason = {
  SpecInvalidError: 'SpecInvalidError',
  ConfigMapError: 'ConfigMapError',
  RegistryServerError: 'RegistryServerError',
  InvalidIntervalError: 'InvalidIntervalError',
} as const;
/** A catalog source reason. */
export type CatalogSourceReason = ValueOf<typeof CatalogSourceReason>;

/** gRPC connectivity states (`status.connectionState.lastObservedState`). */
export const GrpcConnectionState = {
  Idle: 'IDLE',
  Connecting: 'CONNECTING',
  Ready: 'READY',
  TransientFailure: 'TRANSIENT_FAILURE',
  Shutdown: 'SHUTDOWN',
} as const;
/** A gRPC connectivity state. */
export type GrpcConnectionState = ValueOf<typeof GrpcConnectionState>;

/** Security profiles of a catalog registry pod (`spec.grpcPodConfig.securityContextConfig`). */
export const SecurityContextConfig = {
  Legacy: 'legacy',
  Restricted: 'restricted',
} as const;
/** A registry pod security profile. */
export type SecurityContextConfig = ValueOf<typeof SecurityContextConfig>;

/** OperatorGroup upgrade strategies (`spec.upgradeStrategy`, a string as upstream's v1 API). */
export const UpgradeStrategyName = {
  Default: 'Default',
  TechPreviewUnsafeFailForward: 'TechPreviewUnsafeFailForward',
} as const;
/** An OperatorGroup upgrade strategy. */
export type UpgradeStrategyName = ValueOf<typeof UpgradeStrategyName>;

/** Condition types of an OperatorGroup. */
export const OperatorGroupConditionType = {
  MultipleOperatorGroup: 'MultipleOperatorGroup',
  OperatorGroupServiceAccount: 'OperatorGroupServiceAccount',
} as const;
/** An OperatorGroup condition type. */
export type OperatorGroupConditionType = ValueOf<typeof OperatorGroupConditionType>;

/** Condition reasons of an OperatorGroup. */
export const OperatorGroupConditionReason = {
  MultipleOperatorGroupsFound: 'MultipleOperatorGroupsFound',
  ServiceAccountNotFound: 'ServiceAccountNotFound',
} as const;
/** An OperatorGroup condition reason. */
export type OperatorGroupConditionReason = ValueOf<typeof OperatorGroupConditionReason>;

/** Condition types of the OLMConfig. */
export const OlmConfigConditionType = {
  DisabledCopiedCSVs: 'DisabledCopiedCSVs',
} as const;
/** An OLMConfig condition type. */
export type OlmConfigConditionType = ValueOf<typeof OlmConfigConditionType>;

/** Condition reasons of the OLMConfig. */
export const OlmConfigConditionReason = {
  CopiedCSVsEnabled: 'CopiedCSVsEnabled',
  CopiedCSVsDisabled: 'CopiedCSVsDisabled',
  CopiedCSVsFound: 'CopiedCSVsFound',
} as const;
/** An OLMConfig condition reason. */
export type OlmConfigConditionReason = ValueOf<typeof OlmConfigConditionReason>;

/** Condition types of an OperatorCondition that OLM reads. */
export const OperatorConditionType = {
  Upgradeable: 'Upgradeable',
} as const;
/** An OperatorCondition condition type OLM interprets. */
export type OperatorConditionType = ValueOf<typeof OperatorConditionType>;

/** Label keys OLM sets or reads (exact keys; see OlmLabelPrefix for families). */
export const OlmLabel = {
  Managed: 'olm.managed',
  Owner: 'olm.owner',
  OwnerNamespace: 'olm.owner.namespace',
  OwnerKind: 'olm.owner.kind',
  CopiedFrom: 'olm.copiedFrom',
  DeploymentSpecHash: 'olm.deployment-spec-hash',
  CatalogSource: 'olm.catalogSource',
  PodSpecHash: 'olm.pod-spec-hash',
  ConfigMapResourceVersion: 'olm.configMapResourceVersion',
  CatalogSourceUpdate: 'catalogsource.operators.coreos.com/update',
  WebhookDescriptionGenerateName: 'olm.webhook-description-generate-name',
  WebhookDescriptionHash: 'olm.webhook-description-hash',
  PermissionsHash: 'olm.permissions.hash',
  BundleUnpackRef: 'operatorframework.io/bundle-unpack-ref',
} as const;
/** An OLM label key. */
export type OlmLabel = ValueOf<typeof OlmLabel>;

/** Prefixes of OLM label families (the key continues with a hash, uid or name). */
export const OlmLabelPrefix = {
  ProvidedApi: 'olm.api.',
  OperatorGroupUid: 'olm.operatorgroup.uid/',
  AggregateToOperatorGroup: 'olm.opgroup.permissions/aggregate-to-',
  Operator: 'operators.coreos.com/',
  AggregateToClusterRole: 'rbac.authorization.k8s.io/aggregate-to-',
} as const;
/** An OLM label key prefix. */
export type OlmLabelPrefix = ValueOf<typeof OlmLabelPrefix>;

/** Annotation keys OLM sets or reads. */
export const OlmAnnotation = {
  OperatorGroup: 'olm.operatorGroup',
  OperatorNamespace: 'olm.operatorNamespace',
  TargetNamespaces: 'olm.targetNamespaces',
  ProvidedAPIs: 'olm.providedAPIs',
  SkipRange: 'olm.skipRange',
  Properties: 'operatorframework.io/properties',
  GeneratedBy: 'olm.generated-by',
  CaHash: 'olmcahash',
  BundleUnpackTimeout: 'operatorframework.io/bundle-unpack-timeout',
  BundleUnpackMinRetryInterval: 'operatorframework.io/bundle-unpack-min-retry-interval',
  ExcludeGlobalNamespaceResolution: 'olm.operatorframework.io/exclude-global-namespace-resolution',
  SafeToEvict: 'cluster-autoscaler.kubernetes.io/safe-to-evict',
  LastAppliedConfiguration: 'kubectl.kubernetes.io/last-applied-configuration',
} as const;
/** An OLM annotation key. */
export type OlmAnnotation = ValueOf<typeof OlmAnnotation>;

/** Prefixes of OLM annotation families. */
export const OlmAnnotationPrefix = {
  InstalledAlongside: 'operatorframework.io/installed-alongside-',
} as const;
/** An OLM annotation key prefix. */
export type OlmAnnotationPrefix = ValueOf<typeof OlmAnnotationPrefix>;

/** Finalizers OLM puts on its objects. */
export const OlmFinalizer = {
  CsvCleanup: 'operators.coreos.com/csv-cleanup',
} as const;
/** An OLM finalizer. */
export type OlmFinalizer = ValueOf<typeof OlmFinalizer>;
