// What olmq knows about the kinds an InstallPlan step may carry: where they live, who owns
// them, and which upstream allows at all. Upstream's ExecutePlan decides per kind; this table
// is that switch as data.

/** How a step's object is owned once created. */
export type StepOwnership =
  /** An ownerReference to the resolving CSV (namespaced bundle objects). */
  | 'ownerReference'
  /** CSV owner labels (olm.owner, olm.owner.namespace, olm.owner.kind) on cluster objects. */
  | 'ownerLabels'
  /** Not owned (CRDs, CSVs, Subscriptions). */
  | 'none';

/** How a kind of step is executed. */
export interface StepKind {
  /** Whether the object lives in the plan's namespace (else it is cluster-scoped). */
  namespaced: boolean;
  ownership: StepOwnership;
  /** Existing objects are updated (bundle objects) or left alone (CSVs, Subscriptions). */
  updateExisting: boolean;
}

const namespacedOwned: StepKind = {
  namespaced: true,
  ownership: 'ownerReference',
  updateExisting: true,
};
const clusterOwned: StepKind = {
  namespaced: false,
  ownership: 'ownerLabels',
  updateExisting: true,
};

/** Kinds upstream executes; anything else is an UnsupportedResource. */
export const stepKinds: Readonly<Record<string, StepKind>> = {
  ClusterServiceVersion: { namespaced: true, ownership: 'none', updateExisting: false },
  Subscription: { namespaced: true, ownership: 'none', updateExisting: false },
  CustomResourceDefinition: { namespaced: false, ownership: 'none', updateExisting: true },
  ServiceAccount: namespacedOwned,
  Role: namespacedOwned,
  RoleBinding: namespacedOwned,
  ClusterRole: clusterOwned,
  ClusterRoleBinding: clusterOwned,
  Service: namespacedOwned,
  ConfigMap: namespacedOwned,
  BundleSecret: namespacedOwned,
  Secret: namespacedOwned,
  // Upstream's allow-list of other bundle objects.
  PrometheusRule: namespacedOwned,
  ServiceMonitor: namespacedOwned,
  PodDisruptionBudget: namespacedOwned,
  VerticalPodAutoscaler: namespacedOwned,
  NetworkPolicy: namespacedOwned,
  PriorityClass: clusterOwned,
  ConsoleYAMLSample: clusterOwned,
  ConsoleQuickStart: clusterOwned,
  ConsoleCLIDownload: clusterOwned,
  ConsoleLink: clusterOwned,
  ConsolePlugin: clusterOwned,
};
