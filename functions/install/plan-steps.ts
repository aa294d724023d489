// What olmq knows about the kinds an InstallPlan step may carry: where they live, who owns
// them, and which upstream allows at all. Upstream's ExecutePlan decides per kind; this table
// is that switch as data.
import type { StepResource } from '../../shared/api/installplan.js';
import type { KubeObject } from '../../shared/kube/client.js';

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

/** apiVersion of a step resource ("v1" for the core group). */
export function apiVersionOf(resource: Pick<StepResource, 'group' | 'version'>): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/** The Kubernetes kind of a step's object (BundleSecret steps carry Secrets). */
export function objectKindOf(resource: Pick<StepResource, 'kind'>): string {
  return resource.kind === 'BundleSecret' ? 'Secret' : resource.kind;
}

/** A step whose manifest cannot be read: the plan is bad, not the cluster. */
export class StepManifestError extends Error {
  constructor(
    readonly step: number,
    message: string,
  ) {
    super(message);
    this.name = 'StepManifestError';
  }
}

/** Decodes a step's manifest (JSON of the object). */
export function manifestOf(resource: StepResource, step: number): KubeObject {
  if (resource.manifest === undefined || resource.manifest === '') {
    throw new StepManifestError(
      step,
      `step ${step} (${resource.kind} ${resource.name}) has no manifest`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(resource.manifest);
  } catch (error) {
    throw new StepManifestError(
      step,
      `step ${step} (${resource.kind} ${resource.name}): manifest is not JSON: ${(error as Error).message}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new StepManifestError(
      step,
      `step ${step} (${resource.kind} ${resource.name}): manifest is not an object`,
    );
  }
  const object = value as Partial<KubeObject>;
  return {
    ...object,
    apiVersion: object.apiVersion ?? apiVersionOf(resource),
    kind: objectKindOf(resource),
    metadata: { ...(object.metadata ?? {}), name: object.metadata?.name ?? resource.name },
  };
}
