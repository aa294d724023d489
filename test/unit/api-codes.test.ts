import t from 'tap';
import * as codes from '../../shared/api/codes.js';

// Every value listed here is public surface (kubectl output, `kubectl wait`, alerts, upstream
// compatibility). A change to this file must be deliberate.
const pinned: Record<string, Record<string, string>> = {
  ConditionStatus: { True: 'True', False: 'False', Unknown: 'Unknown' },
  CsvPhase: {
    None: '',
    Pending: 'Pending',
    InstallReady: 'InstallReady',
    Installing: 'Installing',
    Succeeded: 'Succeeded',
    Failed: 'Failed',
    Unknown: 'Unknown',
    Replacing: 'Replacing',
    Deleting: 'Deleting',
  },
  CsvReason: Object.fromEntries(
    [
      'RequirementsUnknown',
      'RequirementsNotMet',
      'AllRequirementsMet',
      'OwnerConflict',
      'InstallComponentFailed',
      'InstallComponentFailedNoRetry',
      'InvalidInstallStrategy',
      'InstallWaiting',
      'InstallSucceeded',
      'InstallCheckFailed',
      'ComponentUnhealthy',
      'BeingReplaced',
      'Replaced',
      'NeedsReinstall',
      'NeedsCertRotation',
      'APIServiceResourceIssue',
      'APIServiceResourcesNeedReinstall',
      'APIServiceInstallFailed',
      'Copied',
      'InvalidInstallModes',
      'NoTargetNamespaces',
      'UnsupportedOperatorGroup',
      'NoOperatorGroup',
      'TooManyOperatorGroups',
      'InterOperatorGroupOwnerConflict',
      'CannotModifyStaticOperatorGroupProvidedAPIs',
      'DetectedClusterChange',
      'InvalidWebhookDescription',
      'OperatorConditionNotUpgradeable',
      'WaitingOnCleanup',
    ].map((reason) => [reason, reason]),
  ),
  RequirementStatusReason: {
    Present: 'Present',
    NotPresent: 'NotPresent',
    PresentNotSatisfied: 'PresentNotSatisfied',
    PresentNotAvailable: 'PresentNotAvailable',
    Satisfied: 'Satisfied',
    NotSatisfied: 'NotSatisfied',
    DeploymentFound: 'DeploymentFound',
    DeploymentNotFound: 'DeploymentNotFound',
  },
  InstallModeType: {
    OwnNamespace: 'OwnNamespace',
    SingleNamespace: 'SingleNamespace',
    MultiNamespace: 'MultiNamespace',
    AllNamespaces: 'AllNamespaces',
  },
  InstallStrategyName: { Deployment: 'deployment' },
  WebhookAdmissionType: {
    ValidatingAdmissionWebhook: 'ValidatingAdmissionWebhook',
    MutatingAdmissionWebhook: 'MutatingAdmissionWebhook',
    ConversionWebhook: 'ConversionWebhook',
  },
  Approval: { Automatic: 'Automatic', Manual: 'Manual' },
  InstallPlanPhase: {
    None: '',
    Planning: 'Planning',
    RequiresApproval: 'RequiresApproval',
    Installing: 'Installing',
    Complete: 'Complete',
    Failed: 'Failed',
  },
  InstallPlanConditionType: { Resolved: 'Resolved', Installed: 'Installed' },
  InstallPlanConditionReason: {
    PlanUnknown: 'PlanUnknown',
    InstallCheckFailed: 'InstallCheckFailed',
    DependenciesConflict: 'DependenciesConflict',
    InstallComponentFailed: 'InstallComponentFailed',
  },
  StepStatus: {
    Unknown: 'Unknown',
    NotPresent: 'NotPresent',
    Present: 'Present',
    Created: 'Created',
    NotCreated: 'NotCreated',
    WaitingForApi: 'WaitingForApi',
    UnsupportedResource: 'UnsupportedResource',
  },
  BundleLookupConditionType: {
    BundleLookupPending: 'BundleLookupPending',
    BundleLookupFailed: 'BundleLookupFailed',
    BundleLookupNotPersisted: 'BundleLookupNotPersisted',
  },
  BundleLookupReason: {
    BundleNotUnpacked: 'BundleNotUnpacked',
    JobNotStarted: 'JobNotStarted',
    JobIncomplete: 'JobIncomplete',
    JobFailed: 'JobFailed',
    CatalogSourceMissing: 'CatalogSourceMissing',
    DeadlineExceeded: 'DeadlineExceeded',
  },
  SubscriptionState: {
    None: '',
    UpgradeFailed: 'UpgradeFailed',
    UpgradeAvailable: 'UpgradeAvailable',
    UpgradePending: 'UpgradePending',
    AtLatestKnown: 'AtLatestKnown',
  },
  SubscriptionReason: { InvalidCatalog: 'InvalidCatalog', UpgradeSucceeded: 'UpgradeSucceeded' },
  SubscriptionConditionType: Object.fromEntries(
    [
      'CatalogSourcesUnhealthy',
      'InstallPlanMissing',
      'InstallPlanPending',
      'InstallPlanFailed',
      'ResolutionFailed',
      'BundleUnpacking',
      'BundleUnpackFailed',
      'Deprecated',
      'PackageDeprecated',
      'ChannelDeprecated',
      'BundleDeprecated',
    ].map((type) => [type, type]),
  ),
  SubscriptionConditionReason: Object.fromEntries(
    [
      'UnhealthyCatalogSourceFound',
      'AllCatalogSourcesHealthy',
      'CatalogSourcesAdded',
      'CatalogSourcesUpdated',
      'CatalogSourcesDeleted',
      'NoCatalogSourcesFound',
      'InstallPlanNotYetReconciled',
      'InstallPlanFailed',
      'ReferencedInstallPlanNotFound',
      'ConstraintsNotSatisfiable',
      'ErrorPreventedResolution',
      'UnpackingInProgress',
      'BundleUnpackFailed',
      'ErrorPreventedUnpacking',
      'EnsureInstallPlanFailed',
      'Deprecated',
    ].map((reason) => [reason, reason]),
  ),
  CatalogSourceType: { Grpc: 'grpc', ConfigMap: 'configmap', Internal: 'internal' },
  CatalogSourceReason: {
    SpecInvalidError: 'SpecInvalidError',
    ConfigMapError: 'ConfigMapError',
    RegistryServerError: 'RegistryServerError',
    InvalidIntervalError: 'InvalidIntervalError',
  },
  GrpcConnectionState: {
    Idle: 'IDLE',
    Connecting: 'CONNECTING',
    Ready: 'READY',
    TransientFailure: 'TRANSIENT_FAILURE',
    Shutdown: 'SHUTDOWN',
  },
  SecurityContextConfig: { Legacy: 'legacy', Restricted: 'restricted' },
  UpgradeStrategyName: {
    Default: 'Default',
    TechPreviewUnsafeFailForward: 'TechPreviewUnsafeFailForward',
  },
  OperatorGroupConditionType: {
    MultipleOperatorGroup: 'MultipleOperatorGroup',
    OperatorGroupServiceAccount: 'OperatorGroupServiceAccount',
  },
  OperatorGroupConditionReason: {
    MultipleOperatorGroupsFound: 'MultipleOperatorGroupsFound',
    ServiceAccountNotFound: 'ServiceAccountNotFound',
  },
  OlmConfigConditionType: { DisabledCopiedCSVs: 'DisabledCopiedCSVs' },
  OlmConfigConditionReason: {
    CopiedCSVsEnabled: 'CopiedCSVsEnabled',
    CopiedCSVsDisabled: 'CopiedCSVsDisabled',
    CopiedCSVsFound: 'CopiedCSVsFound',
  },
  OperatorConditionType: { Upgradeable: 'Upgradeable' },
  OlmLabel: {
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
  },
  OlmLabelPrefix: {
    ProvidedApi: 'olm.api.',
    OperatorGroupUid: 'olm.operatorgroup.uid/',
    AggregateToOperatorGroup: 'olm.opgroup.permissions/aggregate-to-',
    Operator: 'operators.coreos.com/',
    AggregateToClusterRole: 'rbac.authorization.k8s.io/aggregate-to-',
  },
  OlmAnnotation: {
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
    ExcludeGlobalNamespaceResolution:
      'olm.operatorframework.io/exclude-global-namespace-resolution',
    SafeToEvict: 'cluster-autoscaler.kubernetes.io/safe-to-evict',
    LastAppliedConfiguration: 'kubectl.kubernetes.io/last-applied-configuration',
  },
  OlmAnnotationPrefix: { InstalledAlongside: 'operatorframework.io/installed-alongside-' },
  OlmFinalizer: { CsvCleanup: 'operators.coreos.com/csv-cleanup' },
};

const catalogues = Object.fromEntries(
  Object.entries(codes).filter(([, value]) => typeof value === 'object' && value !== null),
) as Record<string, Record<string, string>>;

void t.test('codes - the set of catalogues is pinned', (t) => {
  t.same(Object.keys(catalogues).sort(), Object.keys(pinned).sort());
  t.end();
});

for (const [name, expected] of Object.entries(pinned)) {
  void t.test(`codes - ${name} holds exactly the pinned values`, (t) => {
    t.same(catalogues[name], expected);
    t.end();
  });
}

void t.test('codes - the API group is operators.coreos.com', (t) => {
  t.equal(codes.OLM_GROUP, 'operators.coreos.com');
  t.end();
});

void t.test('codes - codeValues lists a catalogue in declaration order', (t) => {
  t.same(codes.codeValues(codes.Approval), ['Automatic', 'Manual']);
  t.end();
});
