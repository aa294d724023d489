// Webhooks and owned APIServices of a CSV (spec §3.2–3.4) as the install reads them: the
// descriptions, the deployments that serve them, the cert volume in those deployments' pods,
// and whether the admission webhooks are installed. Pure.
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

/** Deployments that need a serving certificate, with what they serve. */
export function certifiedDeployments(
  csv: Csv,
): Map<string, { webhook: boolean; apiservice: boolean; port: number }> {
  const out = new Map<string, { webhook: boolean; apiservice: boolean; port: number }>();
  for (const w of webhooksOf(csv)) {
    const e = out.get(servedBy(w)) ?? {
      webhook: false,
      apiservice: false,
      port: w.containerPort ?? 443,
    };
    e.webhook = true;
    out.set(servedBy(w), e);
  }
  for (const a of ownedApiServicesOf(csv)) {
    const e = out.get(servedBy(a)) ?? {
      webhook: false,
      apiservice: false,
      port: a.containerPort ?? 443,
    };
    e.apiservice = true;
    out.set(servedBy(a), e);
  }
  return out;
}

/** The Service name upstream gives a deployment's webhook/APIService endpoint. */
export function serviceNameOf(deployment: string): string {
  return `${deployment.replaceAll('.', '-')}-service`;
}

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

/** Adds the cert volumes, mounts and the olmcahash annotation to a deployment spec. */
export function withCertificate(
  spec: Record<string, unknown>,
  uses: { webhook: boolean; apiservice: boolean },
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
      },
    ];
    // A bundle's own mount at the certificate path (kubebuilder scaffolds a "cert" volume at
    // the webhook one) is replaced, as OLM does: two mounts at one path make an invalid pod.
    pod.containers = (pod.containers ?? []).map((c) => ({
      ...c,
      volumeMounts: [
        ...(c.volumeMounts ?? []).filter((v) => v.name !== m.volume && v.mountPath !== m.path),
        { name: m.volume, mountPath: m.path },
      ],
    }));
  }
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
