// The registry objects of an image-backed CatalogSource (sourceType grpc with spec.image), as
// upstream's GrpcRegistryReconciler builds them: ServiceAccount <name>, a Pod <name>-xxxxx
// serving the image on port 50051 with grpc_health_probe probes, and a Service <name with
// dots as dashes> selecting it. Pure: a CatalogSource in, desired objects out.
import { createHash } from 'node:crypto';
import type { CatalogSource } from '../../shared/api/catalogsource.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { canonicalJson } from '../../shared/kube/json.js';

/** Label naming the CatalogSource a serving registry pod belongs to. */
export const catalogSourceLabel = 'olm.catalogSource';
/** Label naming the CatalogSource an update (polling) pod belongs to. */
export const catalogSourceUpdateLabel = 'catalogsource.operators.coreos.com/update';
/** Label carrying the hash of a registry pod's spec. */
export const podSpecHashLabel = 'olm.pod-spec-hash';
/** Label carrying the hash of a registry Service's spec. */
export const serviceSpecHashLabel = 'olm.service-spec-hash';
/** Everything OLM creates carries it. */
export const managedLabel = 'olm.managed';
/** Annotation naming a priority class for the registry pod. */
export const priorityClassAnnotation = 'operatorframework.io/priorityclass';
/** Lets the cluster autoscaler evict the (controller-less) registry pod. */
export const safeToEvictAnnotation = 'cluster-autoscaler.kubernetes.io/safe-to-evict';
/** Namespace label that makes registry pods use the restricted profile by default. */
export const podSecurityEnforceLabel = 'pod-security.kubernetes.io/enforce';

/** The gRPC port of every registry. */
export const registryPort = 50051;
/** The user registry pods run as under the restricted profile (upstream's default). */
export const registryPodUser = 1001;

const apiVersion = 'operators.coreos.com/v1alpha1';

/** The pieces of a CatalogSource the registry objects derive from. */
export interface RegistrySource {
  name: string;
  namespace: string;
  uid: string;
  annotations: Readonly<Record<string, string>>;
  spec: CatalogSource['spec'];
}

/** Upstream's Service name: the CatalogSource name with dots replaced (Service names are DNS labels). */
export function registryServiceName(name: string): string {
  return name.replaceAll('.', '-');
}

/** The address upstream dials for an image-backed catalog: the Service's cluster DNS name. */
export function registryServiceAddress(namespace: string, name: string): string {
  return `${registryServiceName(name)}.${namespace}.svc:${registryPort}`;
}

function ownerReference(source: RegistrySource, controller: boolean, block: boolean) {
  return {
    apiVersion,
    kind: 'CatalogSource',
    name: source.name,
    uid: source.uid,
    controller,
    blockOwnerDeletion: block,
  };
}

/** A short label-safe hash of a spec (like upstream's, though not bit-identical). */
export function specHash(spec: unknown): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex').slice(0, 16);
}

/** The registry ServiceAccount (controller-owned, with the spec's pull secrets). */
export function registryServiceAccount(source: RegistrySource): KubeObject {
  const secrets = (source.spec.secrets ?? []).filter((s) => s !== '').map((name) => ({ name }));
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name: source.name,
      namespace: source.namespace,
      labels: { [managedLabel]: 'true' },
      ownerReferences: [ownerReference(source, true, true)],
    },
    ...(secrets.length === 0 ? {} : { imagePullSecrets: secrets }),
  };
}

/** The registry Service, labelled with the hash of its spec. */
export function registryService(source: RegistrySource): KubeObject {
  const spec = {
    ports: [{ name: 'grpc', port: registryPort, targetPort: registryPort }],
    selector: { [catalogSourceLabel]: source.name, [managedLabel]: 'true' },
  };
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: registryServiceName(source.name),
      namespace: source.namespace,
      labels: { [serviceSpecHashLabel]: specHash(spec), [managedLabel]: 'true' },
      ownerReferences: [ownerReference(source, false, false)],
    },
    spec,
  };
}

/** Upstream's image pull policy: pinned digests are not pulled again. */
export function pullPolicyOf(image: string): 'IfNotPresent' | 'Always' {
  return image.includes('@sha256:') ? 'IfNotPresent' : 'Always';
}

const probe = { exec: { command: ['grpc_health_probe', `-addr=:${registryPort}`] } };

/**
 * The serving registry pod (generateName `<name>-`). `restrictedByDefault` is whether the
 * namespace enforces the restricted pod security profile, used when the spec does not choose.
 */
export function registryPod(
  source: RegistrySource,
  serviceAccount: { name: string; imagePullSecrets?: readonly { name: string }[] },
  restrictedByDefault: boolean,
): KubeObject {
  const image = source.spec.image ?? '';
  const config = source.spec.grpcPodConfig;
  const requests: Record<string, string | number> = { cpu: '10m', memory: '50Mi' };
  const container: Record<string, unknown> = {
    name: 'registry-server',
    image,
    ports: [{ name: 'grpc', containerPort: registryPort }],
    readinessProbe: { ...probe, initialDelaySeconds: 5, timeoutSeconds: 5 },
    livenessProbe: { ...probe, initialDelaySeconds: 10, timeoutSeconds: 5 },
    startupProbe: { ...probe, failureThreshold: 10, periodSeconds: 10, timeoutSeconds: 5 },
    resources: { requests },
    securityContext: { readOnlyRootFilesystem: false },
    imagePullPolicy: pullPolicyOf(image),
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
  const spec: Record<string, unknown> = {
    containers: [container],
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    serviceAccountName: serviceAccount.name,
  };
  if ((serviceAccount.imagePullSecrets ?? []).length > 0)
    spec['imagePullSecrets'] = serviceAccount.imagePullSecrets;
  if (config?.nodeSelector !== undefined) spec['nodeSelector'] = { ...config.nodeSelector };
  if (config?.priorityClassName !== undefined) spec['priorityClassName'] = config.priorityClassName;
  if (config?.tolerations !== undefined) spec['tolerations'] = config.tolerations;
  if (config?.affinity !== undefined) spec['affinity'] = config.affinity;
  if (config?.memoryTarget !== undefined) {
    requests['memory'] = config.memoryTarget;
    container['env'] = [{ name: 'GOMEMLIMIT', value: `${String(config.memoryTarget)}B` }];
  }
  const profile = source.spec.grpcPodConfig?.securityContextConfig;
  const restricted = profile === undefined ? restrictedByDefault : profile === 'restricted';
  if (restricted) {
    spec['securityContext'] = {
      seccompProfile: { type: 'RuntimeDefault' },
      runAsUser: registryPodUser,
      runAsNonRoot: true,
    };
    container['securityContext'] = {
      readOnlyRootFilesystem: false,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    };
  }
  const priorityClass = source.annotations[priorityClassAnnotation];
  if (priorityClass !== undefined && priorityClass !== '')
    spec['priorityClassName'] = priorityClass;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${source.name}-`,
      namespace: source.namespace,
      labels: {
        [catalogSourceLabel]: source.name,
        [managedLabel]: 'true',
        [podSpecHashLabel]: specHash(spec),
      },
      annotations: { ...source.annotations, [safeToEvictAnnotation]: 'true' },
      ownerReferences: [ownerReference(source, true, false)],
    },
    spec,
  };
}

/** Names of the two NetworkPolicies of an image-backed catalog. */
export function networkPolicyNames(name: string): { grpcServer: string; unpackBundles: string } {
  return { grpcServer: `${name}-grpc-server`, unpackBundles: `${name}-unpack-bundles` };
}

/**
 * Upstream's NetworkPolicies: `<name>-grpc-server` lets gRPC (TCP 50051) reach the registry pod
 * and nothing leave it; `<name>-unpack-bundles` lets bundle unpack pods reach anything.
 */
export function registryNetworkPolicies(source: RegistrySource): KubeObject[] {
  const names = networkPolicyNames(source.name);
  const metadata = (name: string) => ({
    name,
    namespace: source.namespace,
    labels: { [managedLabel]: 'true', [catalogSourceLabel]: source.name },
    ownerReferences: [ownerReference(source, false, false)],
  });
  return [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: metadata(names.grpcServer),
      spec: {
        podSelector: { matchLabels: { [catalogSourceLabel]: source.name, [managedLabel]: 'true' } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [{ ports: [{ protocol: 'TCP', port: registryPort }] }],
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: metadata(names.unpackBundles),
      spec: {
        podSelector: {
          matchExpressions: [
            { key: 'operatorframework.io/bundle-unpack-ref', operator: 'Exists' },
            { key: managedLabel, operator: 'In', values: ['true'] },
          ],
        },
        policyTypes: ['Ingress', 'Egress'],
        egress: [{}],
      },
    },
  ];
}

/** The update pod polling uses: the serving pod, hidden from the Service until promoted. */
export function registryUpdatePod(pod: KubeObject, sourceName: string): KubeObject {
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      labels: {
        ...pod.metadata.labels,
        [catalogSourceLabel]: '',
        [catalogSourceUpdateLabel]: sourceName,
      },
    },
  };
}

interface PodStatus {
  phase?: string;
  conditions?: { type?: string; status?: string; reason?: string }[];
  containerStatuses?: { imageID?: string }[];
}

const statusOf = (pod: KubeObject): PodStatus => pod['status'] ?? {};

/** Whether a pod reports Ready. */
export function podReady(pod: KubeObject): boolean {
  return (statusOf(pod).conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Whether a pod failed (or its state is unknown), as upstream's podFailed reads it. */
export function podFailed(pod: KubeObject): boolean {
  const phase = statusOf(pod).phase;
  return phase === 'Failed' || phase === 'Unknown';
}

/**
 * Whether a registry pod will never serve again: Failed (evicted, say) or Unknown, or being
 * deleted by the taint manager (upstream v0.28's isPodDead). A serving pod restarts its
 * containers, so a Failed one stays Failed.
 */
export function podDead(pod: KubeObject): boolean {
  if (podFailed(pod)) return true;
  return (
    pod.metadata['deletionTimestamp'] !== undefined &&
    (statusOf(pod).conditions ?? []).some(
      (c) =>
        c.type === 'DisruptionTarget' &&
        c.reason === 'DeletionByTaintManager' &&
        c.status === 'True',
    )
  );
}

/** The image ID the pod's registry container runs, or '' while unknown. */
export function podImageId(pod: KubeObject): string {
  return statusOf(pod).containerStatuses?.[0]?.imageID ?? '';
}

/** Whether a pod serves the spec's image with the desired spec (same hash). */
export function podMatches(pod: KubeObject, desired: KubeObject, image: string): boolean {
  const containers = (pod['spec'] as { containers?: { image?: string }[] } | undefined)?.containers;
  return (
    containers?.[0]?.image === image &&
    pod.metadata.labels?.[podSpecHashLabel] !== undefined &&
    pod.metadata.labels[podSpecHashLabel] === desired.metadata.labels?.[podSpecHashLabel]
  );
}
