// Webhooks and owned APIServices of a CSV (spec §3.2–3.4) as the install reads them: the
// descriptions, the deployments that serve them, the cert volume in those deployments' pods,
// and whether the admission webhooks are installed. Pure.
import type { KubeObject } from '../../../shared/kube/client.js';

/** One spec.webhookdefinitions entry. */
export interface WebhookDescription {
  generateName: string;
  type: 'ValidatingAdmissionWebhook' | 'MutatingAdmissionWebhook' | 'ConversionWebhook';
  deploymentName: string;
  containerPort?: number;
  targetPort?: number | string;
  webhookPath?: string;
  conversionCRDs?: string[];
  admissionReviewVersions?: string[];
  rules?: unknown[];
  failurePolicy?: string;
  matchPolicy?: string;
  objectSelector?: unknown;
  sideEffects?: string;
  timeoutSeconds?: number;
  reinvocationPolicy?: string;
}

/** One owned spec.apiservicedefinitions entry. */
export interface OwnedApiService {
  name?: string;
  group: string;
  version: string;
  kind?: string;
  deploymentName: string;
  containerPort?: number;
}

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
export function webhooksOf(csv: KubeObject): WebhookDescription[] {
  const spec = (csv['spec'] ?? {}) as { webhookdefinitions?: WebhookDescription[] };
  return spec.webhookdefinitions ?? [];
}

/** The CSV's owned APIServices. */
export function ownedApiServicesOf(csv: KubeObject): OwnedApiService[] {
  const spec = (csv['spec'] ?? {}) as { apiservicedefinitions?: { owned?: OwnedApiService[] } };
  return spec.apiservicedefinitions?.owned ?? [];
}

/** Deployments that need a serving certificate, with what they serve. */
export function certifiedDeployments(
  csv: KubeObject,
): Map<string, { webhook: boolean; apiservice: boolean; port: number }> {
  const out = new Map<string, { webhook: boolean; apiservice: boolean; port: number }>();
  for (const w of webhooksOf(csv)) {
    const e = out.get(w.deploymentName) ?? {
      webhook: false,
      apiservice: false,
      port: w.containerPort ?? 443,
    };
    e.webhook = true;
    out.set(w.deploymentName, e);
  }
  for (const a of ownedApiServicesOf(csv)) {
    const e = out.get(a.deploymentName) ?? {
      webhook: false,
      apiservice: false,
      port: a.containerPort ?? 443,
    };
    e.apiservice = true;
    out.set(a.deploymentName, e);
  }
  return out;
}

/** The Service name upstream gives a deployment's webhook/APIService endpoint. */
export function serviceNameOf(deployment: string): string {
  return `${deployment.replaceAll('.', '-')}-service`;
}

interface PodSpecLike {
  serviceAccountName?: string;
  volumes?: { name: string }[];
  containers?: { volumeMounts?: { name: string }[] }[];
}
/** A deployment spec, as far as certificates touch it. */
export interface DeploymentSpecLike {
  selector?: { matchLabels?: Record<string, string> };
  template?: { metadata?: { annotations?: Record<string, string> }; spec?: PodSpecLike };
}

/** Adds the cert volumes, mounts and the olmcahash annotation to a deployment spec. */
export function withCertificate(
  spec: Record<string, unknown>,
  uses: { webhook: boolean; apiservice: boolean },
  caHash: string,
  secretName: string,
): Record<string, unknown> {
  const out = structuredClone(spec) as DeploymentSpecLike;
  const template = (out.template ??= {});
  template.metadata = {
    ...template.metadata,
    annotations: { ...template.metadata?.annotations, olmcahash: caHash },
  };
  const pod = (template.spec ??= {});
  for (const use of ['webhook', 'apiservice'] as const) {
    if (!uses[use]) continue;
    const m = certificateMounts[use];
    pod.volumes = [
      ...(pod.volumes ?? []).filter((v) => v.name !== m.volume),
      {
        name: m.volume,
        secret: {
          secretName,
          items: [
            { key: 'tls.crt', path: m.crt },
            { key: 'tls.key', path: m.key },
          ],
        },
      } as { name: string },
    ];
    pod.containers = (pod.containers ?? []).map((c) => ({
      ...c,
      volumeMounts: [
        ...(c.volumeMounts ?? []).filter((v) => v.name !== m.volume),
        { name: m.volume, mountPath: m.path } as { name: string },
      ],
    }));
  }
  return out as Record<string, unknown>;
}

/** Key of `existing`. */
export function existingKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

/** The namespaceSelector of admission webhooks for the OperatorGroup (§3.4). */
export function webhookNamespaceSelector(group: KubeObject, targets: readonly string[]): unknown {
  if (targets.length === 1 && targets[0] === '') return undefined;
  const spec = (group['spec'] ?? {}) as { targetNamespaces?: string[]; selector?: unknown };
  if ((spec.targetNamespaces ?? []).length === 0 && spec.selector !== undefined)
    return spec.selector;
  return { matchLabels: { [`olm.operatorgroup.uid/${group.metadata.uid ?? ''}`]: '' } };
}

/** Whether every admission webhook of the CSV has its configuration (health, §2.3). */
export function webhooksInstalled(csv: KubeObject, configurations: readonly KubeObject[]): boolean {
  return webhooksOf(csv)
    .filter((w) => w.type !== 'ConversionWebhook')
    .every((w) =>
      configurations.some(
        (c) => c.metadata.labels?.['olm.webhook-description-generate-name'] === w.generateName,
      ),
    );
}
