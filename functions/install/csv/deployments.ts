// The Deployments of a CSV's install strategy, as upstream's olm-operator writes them (spec
// §3.1): the strategy's spec, owner labels and reference, the CSV's annotations projected into
// the pod template (olm.targetNamespaces, olm.operatorGroup, olm.operatorGroupNamespace reach
// the pods), the installing Subscription's config overrides, OPERATOR_CONDITION_NAME, and
// olm.deployment-spec-hash for drift detection. Pure.
import type { StrategyDeploymentSpec } from '../../../shared/api/clusterserviceversion.js';
import type { Container, Deployment, PodSpec as CorePodSpec } from '../../../shared/api/core.js';
import type { SubscriptionConfig } from '../../../shared/api/subscription.js';
import { csvComponentLabels } from '../../../shared/api/component-labels.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Served } from '../../../shared/kube/served.js';
import type { Csv } from '../csv-status.js';
import { canonicalJson, fnv64aHex } from '../hash.js';

/** A container's environment variable. */
type EnvVar = NonNullable<Container['env']>[number];
/** A pod spec as a strategy may leave it (every field optional). */
type PodSpec = Partial<CorePodSpec>;
/**
 * A strategy deployment's spec: opaque in the API (an apps/v1 DeploymentSpec kept whole), read
 * here as far as OLM changes it.
 */
interface DeploymentSpec {
  selector?: unknown;
  template?: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: PodSpec;
  };
  revisionHistoryLimit?: number;
  [key: string]: unknown;
}

const proxyVars = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY'];

function mergeByName<T extends { name: string }>(
  base: readonly T[] | undefined,
  extra: readonly T[],
): T[] {
  const out = [...(base ?? [])];
  for (const item of extra) {
    const i = out.findIndex((o) => o.name === item.name);
    if (i >= 0) out[i] = item;
    else out.push(item);
  }
  return out;
}

const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

function overrideContainer(
  c: Container,
  config: SubscriptionConfig,
  clusterProxy: readonly EnvVar[],
): Container {
  const out: Container = { ...c };
  let env = out.env ?? [];
  if (config.env !== undefined) env = mergeByName(env, config.env);
  // Proxy variables are a unit: the cluster's are injected only when the user set none.
  const userSetsProxy = (config.env ?? []).some((e) => proxyVars.includes(e.name));
  if (!userSetsProxy)
    env = mergeByName(
      env,
      clusterProxy.filter((e) => (e.value ?? '') !== ''),
    );
  if (env.length > 0) out.env = env;
  if (config.envFrom !== undefined) {
    const envFrom = [...(out.envFrom ?? [])];
    for (const e of config.envFrom) if (!envFrom.some((x) => sameJson(x, e))) envFrom.push(e);
    out.envFrom = envFrom;
  }
  if (config.volumeMounts !== undefined)
    out.volumeMounts = mergeByName(out.volumeMounts, config.volumeMounts);
  if (config.resources !== undefined) out.resources = config.resources;
  return out;
}

function overrideAffinity(
  current: Record<string, unknown> | undefined,
  override: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (override === undefined) return current; // nil keeps
  if (Object.keys(override).length === 0) return undefined; // {} clears
  const out = { ...(current ?? {}) };
  for (const [field, value] of Object.entries(override)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'object' && Object.keys(value).length === 0) delete out[field];
    else out[field] = value;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Applies a Subscription's config to a deployment spec (upstream's order; selector ignored). */
export function applySubscriptionConfig(
  spec: DeploymentSpec,
  config: SubscriptionConfig | undefined,
  clusterProxy: readonly EnvVar[] = [],
): DeploymentSpec {
  const c = config ?? {};
  const template = { ...(spec.template ?? {}) };
  const pod: PodSpec = { ...(template.spec ?? {}) };
  pod.containers = (pod.containers ?? []).map((x) => overrideContainer(x, c, clusterProxy));
  // A corev1.Volume (opaque in the Subscription's schema) always has a name.
  if (c.volumes !== undefined)
    pod.volumes = mergeByName(pod.volumes, c.volumes as { name: string }[]);
  if (c.tolerations !== undefined) {
    const tolerations = [...(pod.tolerations ?? [])];
    for (const t of c.tolerations)
      if (!tolerations.some((x) => sameJson(x, t))) tolerations.push(t);
    pod.tolerations = tolerations;
  }
  if (c.nodeSelector !== undefined) pod.nodeSelector = c.nodeSelector;
  const affinity = overrideAffinity(pod.affinity, c.affinity);
  if (affinity === undefined) delete pod.affinity;
  else pod.affinity = affinity;
  if (c.annotations !== undefined) {
    // Existing keys win.
    template.metadata = {
      ...template.metadata,
      annotations: { ...c.annotations, ...template.metadata?.annotations },
    };
  }
  template.spec = pod;
  return { ...spec, template };
}

/** Inputs of one Deployment. */
export interface DeploymentInputs {
  csv: Csv;
  entry: StrategyDeploymentSpec;
  config?: SubscriptionConfig | undefined;
  clusterProxy?: readonly EnvVar[];
}

/** Label carrying the hash of the deployment spec OLM wrote. */
export const deploymentSpecHashLabel = 'olm.deployment-spec-hash';

/** The Deployment OLM writes for one strategy entry. */
export function deploymentFor(inputs: DeploymentInputs): KubeObject {
  const { csv, entry } = inputs;
  const csvName = csv.metadata.name ?? '';
  const namespace = csv.metadata.namespace ?? '';
  let spec = structuredClone(entry.spec) as DeploymentSpec;
  const template = spec.template ?? {};
  const csvAnnotations = { ...csv.metadata.annotations };
  delete csvAnnotations['kubectl.kubernetes.io/last-applied-configuration'];
  spec.template = {
    ...template,
    metadata: {
      ...template.metadata,
      annotations: { ...template.metadata?.annotations, ...csvAnnotations },
    },
  };
  spec = applySubscriptionConfig(spec, inputs.config, inputs.clusterProxy ?? []);
  const pod = spec.template?.spec;
  if (pod !== undefined) {
    pod.containers = (pod.containers ?? []).map((c) => ({
      ...c,
      env: mergeByName(c.env, [{ name: 'OPERATOR_CONDITION_NAME', value: csvName }]),
    }));
  }
  spec.revisionHistoryLimit = 1;
  const hash = fnv64aHex(canonicalJson(spec));
  const deploymentAnnotations = inputs.config?.annotations ?? {};
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: entry.name,
      namespace,
      labels: {
        ...entry.label,
        // The CSV's Operators, as adoption would label the deployment a moment later.
        ...csvComponentLabels(csv),
        'olm.managed': 'true',
        'olm.owner': csvName,
        'olm.owner.namespace': namespace,
        'olm.owner.kind': 'ClusterServiceVersion',
        [deploymentSpecHashLabel]: hash,
      },
      ...(Object.keys(deploymentAnnotations).length === 0
        ? {}
        : { annotations: deploymentAnnotations }),
      ownerReferences: [
        {
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'ClusterServiceVersion',
          name: csvName,
          uid: csv.metadata.uid ?? '',
          controller: false,
          blockOwnerDeletion: false,
        },
      ],
    },
    spec,
  };
}

/** Why a deployment is not healthy yet, or undefined when it is. */
export interface DeploymentHealth {
  /** Missing or drifted: the install must be redone (upstream's DeploymentUpdated/AnnotationsMissing). */
  reinstall: boolean;
  message: string;
}

/** Upstream's deployment check for one strategy deployment. */
export function deploymentHealth(
  intended: KubeObject,
  existing: KubeObject | undefined,
): DeploymentHealth | undefined {
  const name = intended.metadata.name ?? '';
  if (existing === undefined)
    return { reinstall: true, message: `missing deployment with name=${name}` };
  const want = intended.metadata.labels?.[deploymentSpecHashLabel];
  const have = existing.metadata.labels?.[deploymentSpecHashLabel];
  if (want !== have) {
    return {
      reinstall: true,
      message: `deployment changed old hash=${have ?? ''}, new hash=${want ?? ''}`,
    };
  }
  // The existing object of a strategy deployment is a Deployment.
  const deployment = existing as Served<Deployment>;
  const status = deployment.status ?? {};
  const desired = deployment.spec?.replicas ?? 1;
  const waiting = (why: string): DeploymentHealth => ({
    reinstall: false,
    message: `waiting for deployment ${name} to become ready: ${why}`,
  });
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return { reinstall: false, message: `deployment ${name} exceeded its progress deadline` };
  }
  if ((status.observedGeneration ?? 0) < (existing.metadata.generation ?? 0)) {
    return waiting('deployment spec update not yet observed');
  }
  if ((status.updatedReplicas ?? 0) < desired) {
    return waiting(
      `Waiting for rollout to finish: ${status.updatedReplicas ?? 0} out of ${desired} new replicas have been updated...\n`,
    );
  }
  const available = status.conditions?.find((c) => c.type === 'Available');
  if (available?.status !== 'True') {
    return waiting(
      `deployment "${name}" not available: ${available?.message ?? 'no Available condition yet'}`,
    );
  }
  return undefined;
}
