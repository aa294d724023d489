// Webhooks and owned APIServices of a CSV (spec §3.2–3.4) as the install reads them: the
// descriptions, the deployments that serve them and their Service ports, the cert volumes in
// those deployments' pods, and whether the admission webhooks are installed. Pure.
import type {
  APIServiceDescription,
  WebhookDescription,
} from '../../../shared/api/clusterserviceversion.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import type { OperatorGroup } from '../../../shared/api/index.js';
import type { Csv } from '../csv-status.js';

/** Where pods find their serving certificate, per use (upstream's paths). */
export const certificateMounts = {
  webhook: {
    volume: 'webhook-cert',
    path: '/tmp/k8s-webhook-server/serving-certs',
    crt: 'tls.crt',
    key: 'tls.key',
  },
  apiservice: {
    volume: 'apiservice-cert',
    path: '/apiserver.local.config/certificates',
    crt: 'apiserver.crt',
    key: 'apiserver.key',
  },
} as const;

/** The CSV's webhook descriptions. */
export const webhooksOf = (csv: Csv): WebhookDescription[] => csv.spec?.webhookdefinitions ?? [];

/** The CSV's owned APIServices. */
export const ownedApiServicesOf = (csv: Csv): APIServiceDescription[] =>
  csv.spec?.apiservicedefinitions?.owned ?? [];

/** The deployment a webhook or APIService names ("" when none: no deployment has that name). */
export const servedBy = (d: { deploymentName?: string | undefined }): string =>
  d.deploymentName ?? '';

/** A port of the Service in front of a deployment serving webhooks or APIServices. */
export interface ServingPort {
  name: string;
  port: number;
  targetPort: number | string;
}

// A webhook's Service port: containerPort (default 443) in front, the webhook's targetPort
// behind (upstream: containerPort when unset, its behaviour before targetPort existed).
function webhookPort(w: WebhookDescription): ServingPort {
  const port = w.containerPort ?? 443;
  return { name: String(port), port, targetPort: w.targetPort ?? port };
}

function apiServicePort(a: APIServiceDescription): ServingPort {
  const port = a.containerPort !== undefined && a.containerPort > 0 ? a.containerPort : 443;
  return { name: String(port), port, targetPort: port };
}

/**
 * Deployments that need a serving certificate, with the ports of their Service (upstream's
 * getServicePorts: APIServices' then webhooks', equal ports once).
 */
export function certifiedDeployments(csv: Csv): Map<string, ServingPort[]> {
  const out = new Map<string, ServingPort[]>();
  const use = (deployment: string, port: ServingPort): void => {
    const ports = out.get(deployment) ?? [];
    if (!ports.some((p) => p.port === port.port && p.targetPort === port.targetPort)) {
      ports.push(port);
    }
    out.set(deployment, ports);
  };
  for (const a of ownedApiServicesOf(csv)) use(servedBy(a), apiServicePort(a));
  for (const w of webhooksOf(csv)) use(servedBy(w), webhookPort(w));
  return out;
}

/** The Service name upstream gives a deployment's webhook/APIService endpoint. */
export function serviceNameOf(deployment: string): string {
  return `${deployment.replaceAll('.', '-')}-service`;
}

/** The Secret (and its Role and RoleBinding) holding a Service's serving certificate. */
export const certificateSecretName = (service: string): string => `${service}-cert`;

/** The ClusterRoleBinding of a Service's deployment to system:auth-delegator. */
export const authDelegatorBindingName = (service: string): string =>
  `${service}-system:auth-delegator`;

/** Where the RoleBinding to extension-apiserver-authentication-reader lives (kube's Role). */
export const authReaderNamespace = 'kube-system';

/** The RoleBinding of a Service's deployment to extension-apiserver-authentication-reader. */
export const authReaderBindingName = (service: string): string => `${service}-auth-reader`;

/** A list entry Kubernetes keys by name (a volume, a volume mount). */
interface Named {
  name: string;
  [key: string]: unknown;
}
interface PodSpecLike {
  serviceAccountName?: string;
  volumes?: Named[];
  containers?: { volumeMounts?: Named[] }[];
}
/** A deployment spec, as far as certificates touch it. */
export interface DeploymentSpecLike {
  selector?: { matchLabels?: Record<string, string> };
  template?: { metadata?: { annotations?: Record<string, string> }; spec?: PodSpecLike };
  [key: string]: unknown;
}

// Upstream's addCertVolumeAndVolumeMount: the volume replaces one of its name; in each
// container, a mount of its name stays as it is, else a mount at its path is taken over (two
// mounts at one path are invalid), else it is added.
function mountCertificate(
  pod: PodSpecLike,
  use: keyof typeof certificateMounts,
  secretName: string,
): void {
  const m = certificateMounts[use];
  const volume: Named = {
    name: m.volume,
    secret: {
      secretName,
      items: [
        { key: 'tls.crt', path: m.crt },
        { key: 'tls.key', path: m.key },
      ],
    },
  };
  const volumes = pod.volumes ?? [];
  const at = volumes.findIndex((v) => v.name === m.volume);
  pod.volumes = at < 0 ? [...volumes, volume] : volumes.map((v, i) => (i === at ? volume : v));
  const mount: Named = { name: m.volume, mountPath: m.path };
  pod.containers = (pod.containers ?? []).map((c) => {
    const mounts = c.volumeMounts ?? [];
    const found = mounts.findIndex((v) => v.name === m.volume || v['mountPath'] === m.path);
    if (found < 0) return { ...c, volumeMounts: [...mounts, mount] };
    if (mounts[found]?.name === m.volume) return c;
    return { ...c, volumeMounts: mounts.map((v, i) => (i === found ? mount : v)) };
  });
}

/**
 * The deployment spec with the serving certificate mounted for both uses (upstream mounts the
 * APIService and the webhook paths whatever the deployment serves) and the olmcahash annotation
 * that rolls the pods when the CA changes.
 */
export function withCertificate(
  spec: Record<string, unknown>,
  caHash: string,
  secretName: string,
): Record<string, unknown> {
  // The strategy's DeploymentSpec is opaque in the API: read as far as certificates touch it.
  const out: DeploymentSpecLike = structuredClone(spec);
  const template = (out.template ??= {});
  template.metadata = {
    ...template.metadata,
    annotations: { ...template.metadata?.annotations, olmcahash: caHash },
  };
  const pod = (template.spec ??= {});
  mountCertificate(pod, 'apiservice', secretName);
  mountCertificate(pod, 'webhook', secretName);
  return out;
}

/** Key of `existing`. */
export function existingKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

/** The namespaceSelector of admission webhooks for the OperatorGroup (§3.4). */
export function webhookNamespaceSelector(
  group: Pick<OperatorGroup, 'metadata' | 'spec'>,
  targets: readonly string[],
): unknown {
  if (targets.length === 1 && targets[0] === '') return undefined;
  const selector = group.spec?.selector;
  if ((group.spec?.targetNamespaces ?? []).length === 0 && selector !== undefined) return selector;
  return { matchLabels: { [`olm.operatorgroup.uid/${group.metadata.uid ?? ''}`]: '' } };
}

/** Whether every admission webhook of the CSV has its configuration (health, §2.3). */
export function webhooksInstalled(csv: Csv, configurations: readonly KubeObject[]): boolean {
  return webhooksOf(csv)
    .filter((w) => w.type !== 'ConversionWebhook')
    .every((w) =>
      configurations.some(
        (c) => c.metadata.labels?.['olm.webhook-description-generate-name'] === w.generateName,
      ),
    );
}
