// The writes that serve a CSV's webhooks and owned APIServices (spec §3.2–3.4): the Service,
// certificate Secret and its RBAC (with the auth delegation bindings) per backing deployment,
// the admission webhook configurations, conversion settings of owned CRDs, and APIServices.
// Pure.
import type { OperatorGroup } from '../../../shared/api/index.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Served } from '../../../shared/kube/served.js';
import type { Csv } from '../csv-status.js';
import type { Write } from '../../../shared/kube/executor.js';
import { certificateSecret, type ServingCertificate } from '../certificates.js';
import { asCrd } from '../crds.js';
import { canonicalJson, fnv64aHex } from '../hash.js';
import { mergedAnnotations, refOf } from '../kube-writes.js';
import {
  authDelegatorBindingName,
  authReaderBindingName,
  authReaderNamespace,
  certificateSecretName,
  certifiedDeployments,
  existingKey,
  ownedApiServicesOf,
  servedBy,
  serviceNameOf,
  webhookNamespaceSelector,
  webhooksOf,
  type DeploymentSpecLike,
} from './webhooks.js';

/** What the webhook/APIService decision reads. */
export interface CertifiedInputs {
  csv: Csv;
  namespace: string;
  /** The strategy's deployment specs by name. */
  deploymentSpecs: ReadonlyMap<string, Record<string, unknown>>;
  certificates: ReadonlyMap<string, ServingCertificate>;
  /** Existing objects by `Kind/namespace/name` (Services, Secrets, Roles, bindings, APIServices, CRDs). */
  existing: ReadonlyMap<string, KubeObject>;
  /** Existing webhook configurations of this CSV. */
  webhookConfigurations: readonly KubeObject[];
  operatorGroup: Served<OperatorGroup>;
  targets: readonly string[];
}

// Upstream labels what it makes for a serving deployment `olm.managed` only, and adds the owner
// labels to the two bindings outside the CSV's reach of owner references.
const managedLabels: Readonly<Record<string, string>> = { 'olm.managed': 'true' };
const ownerLabelKeys = ['olm.owner', 'olm.owner.namespace', 'olm.owner.kind'] as const;
const rbacApiVersion = 'rbac.authorization.k8s.io/v1';

function ownerLabelsOf(csv: KubeObject, namespace: string): Record<string, string> {
  return {
    'olm.owner': csv.metadata.name ?? '',
    'olm.owner.namespace': namespace,
    'olm.owner.kind': 'ClusterServiceVersion',
    ...managedLabels,
  };
}

function ownerRef(csv: KubeObject): NonNullable<KubeObject['metadata']['ownerReferences']>[number] {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    name: csv.metadata.name ?? '',
    uid: csv.metadata.uid ?? '',
    controller: false,
    blockOwnerDeletion: false,
  };
}

// Create, or update in place keeping the existing object's identity (and the `keep` fields);
// `drop` names labels to take off (ones an older olmq set where upstream sets none).
function upsert(
  intended: KubeObject,
  existing: KubeObject | undefined,
  keep: string[] = [],
  drop: readonly string[] = [],
): Write {
  if (existing === undefined) return { op: 'create', object: intended };
  const labels = { ...existing.metadata.labels, ...intended.metadata.labels };
  for (const key of drop) delete labels[key];
  const object: KubeObject = {
    ...existing,
    ...intended,
    metadata: {
      ...existing.metadata,
      labels,
      ...mergedAnnotations(existing, intended),
      ...(intended.metadata.ownerReferences === undefined
        ? {}
        : { ownerReferences: intended.metadata.ownerReferences }),
    },
  };
  for (const path of keep) {
    const [field, sub] = path.split('.') as [string, string | undefined];
    if (sub === undefined) object[field] = existing[field];
    else {
      const have = (existing[field] ?? {}) as Record<string, unknown>;
      if (have[sub] !== undefined)
        object[field] = { ...(object[field] as Record<string, unknown>), [sub]: have[sub] };
    }
  }
  return { op: 'update', object };
}

// The existing object the writes compare against.
const existingOf = (
  inputs: CertifiedInputs,
  kind: string,
  ns: string | undefined,
  name: string,
): KubeObject | undefined => inputs.existing.get(existingKey(kind, ns, name));

// base64 of the CA that signed the deployment's serving certificate, if it has one.
function caBundleOf(inputs: CertifiedInputs, deployment: string): string | undefined {
  const cert = inputs.certificates.get(deployment);
  return cert === undefined ? undefined : Buffer.from(cert.caPem, 'utf8').toString('base64');
}

// Per deployment serving a webhook or APIService, as upstream's installCertRequirements: its
// Service, the certificate Secret, the Role and RoleBinding that let its service account read
// the Secret, the ClusterRoleBinding to system:auth-delegator and the kube-system RoleBinding to
// extension-apiserver-authentication-reader (the SubjectAccessReviews and the client-CA
// ConfigMap a delegating server reads).
function servingWrites(inputs: CertifiedInputs, owner: Record<string, string>): Write[] {
  const { csv, namespace } = inputs;
  const writes: Write[] = [];
  const get = (kind: string, ns: string | undefined, name: string): KubeObject | undefined =>
    existingOf(inputs, kind, ns, name);
  const labels = { ...managedLabels };
  const owned = { labels, ownerReferences: [ownerRef(csv)] };
  for (const [deployment, ports] of certifiedDeployments(csv)) {
    const cert = inputs.certificates.get(deployment);
    const spec: DeploymentSpecLike | undefined = inputs.deploymentSpecs.get(deployment);
    if (cert === undefined || spec === undefined) continue;
    const service = serviceNameOf(deployment);
    const secretName = certificateSecretName(service);
    writes.push(
      upsert(
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: service, namespace, ...owned },
          spec: {
            ports: ports.map((p) => ({ ...p, protocol: 'TCP' })),
            selector: spec.selector?.matchLabels ?? {},
          },
        },
        get('Service', namespace, service),
        ['spec.clusterIP', 'spec.clusterIPs'],
        ownerLabelKeys,
      ),
    );
    const secret = certificateSecret(secretName, namespace, cert, labels);
    secret.metadata.ownerReferences = [ownerRef(csv)];
    writes.push(upsert(secret, get('Secret', namespace, secretName), [], ownerLabelKeys));
    const subjects = [
      {
        kind: 'ServiceAccount',
        name: spec.template?.spec?.serviceAccountName ?? 'default',
        namespace,
      },
    ];
    const roleRef = (kind: string, name: string) => ({
      apiGroup: 'rbac.authorization.k8s.io',
      kind,
      name,
    });
    const delegator = authDelegatorBindingName(service);
    const reader = authReaderBindingName(service);
    writes.push(
      upsert(
        {
          apiVersion: rbacApiVersion,
          kind: 'Role',
          metadata: { name: secretName, namespace, ...owned },
          rules: [
            {
              apiGroups: [''],
              resources: ['secrets'],
              resourceNames: [secretName],
              verbs: ['get'],
            },
          ],
        },
        get('Role', namespace, secretName),
        [],
        ownerLabelKeys,
      ),
      upsert(
        {
          apiVersion: rbacApiVersion,
          kind: 'RoleBinding',
          metadata: { name: secretName, namespace, ...owned },
          roleRef: roleRef('Role', secretName),
          subjects,
        },
        get('RoleBinding', namespace, secretName),
        ['roleRef'],
        ownerLabelKeys,
      ),
      upsert(
        {
          apiVersion: rbacApiVersion,
          kind: 'ClusterRoleBinding',
          metadata: { name: delegator, labels: owner },
          roleRef: roleRef('ClusterRole', 'system:auth-delegator'),
          subjects,
        },
        get('ClusterRoleBinding', undefined, delegator),
        ['roleRef'],
      ),
      upsert(
        {
          apiVersion: rbacApiVersion,
          kind: 'RoleBinding',
          metadata: { name: reader, namespace: authReaderNamespace, labels: owner },
          roleRef: roleRef('Role', 'extension-apiserver-authentication-reader'),
          subjects,
        },
        get('RoleBinding', authReaderNamespace, reader),
        ['roleRef'],
      ),
    );
  }
  return writes;
}

// Conversion webhooks go into the CRDs they convert; admission webhooks get one configuration
// per description, found again by its labels; configurations no description wants go.
function webhookWrites(inputs: CertifiedInputs, labels: Record<string, string>): Write[] {
  const { csv, namespace } = inputs;
  const writes: Write[] = [];
  const get = (kind: string, ns: string | undefined, name: string): KubeObject | undefined =>
    existingOf(inputs, kind, ns, name);
  const wanted = new Set<string>();
  for (const hook of webhooksOf(csv)) {
    const caBundle = caBundleOf(inputs, servedBy(hook));
    if (caBundle === undefined) continue;
    const clientConfig = {
      service: {
        namespace,
        name: serviceNameOf(servedBy(hook)),
        ...(hook.webhookPath === undefined ? {} : { path: hook.webhookPath }),
        port: hook.containerPort ?? 443,
      },
      caBundle,
    };
    if (hook.type === 'ConversionWebhook') {
      for (const crdName of hook.conversionCRDs ?? []) {
        const crd = get('CustomResourceDefinition', undefined, crdName);
        if (crd === undefined) continue;
        const conversion = {
          strategy: 'Webhook',
          webhook: {
            clientConfig: {
              ...clientConfig,
              service: { ...clientConfig.service, path: hook.webhookPath ?? '/' },
            },
            conversionReviewVersions: hook.admissionReviewVersions ?? ['v1'],
          },
        };
        const spec = asCrd(crd).spec;
        if (canonicalJson(spec?.conversion) !== canonicalJson(conversion)) {
          writes.push({ op: 'update', object: { ...crd, spec: { ...spec, conversion } } });
        }
      }
      continue;
    }
    const kind =
      hook.type === 'ValidatingAdmissionWebhook'
        ? 'ValidatingWebhookConfiguration'
        : 'MutatingWebhookConfiguration';
    wanted.add(`${kind}/${hook.generateName}`);
    const selector = webhookNamespaceSelector(inputs.operatorGroup, inputs.targets);
    const webhook: Record<string, unknown> = {
      name: hook.generateName,
      clientConfig,
      rules: hook.rules ?? [],
      admissionReviewVersions: hook.admissionReviewVersions ?? ['v1'],
      sideEffects: hook.sideEffects ?? 'None',
      ...(hook.failurePolicy === undefined ? {} : { failurePolicy: hook.failurePolicy }),
      ...(hook.matchPolicy === undefined ? {} : { matchPolicy: hook.matchPolicy }),
      ...(hook.objectSelector === undefined ? {} : { objectSelector: hook.objectSelector }),
      ...(hook.timeoutSeconds === undefined ? {} : { timeoutSeconds: hook.timeoutSeconds }),
      ...(selector === undefined ? {} : { namespaceSelector: selector }),
      ...(kind === 'MutatingWebhookConfiguration' && hook.reinvocationPolicy !== undefined
        ? { reinvocationPolicy: hook.reinvocationPolicy }
        : {}),
    };
    const hookLabels = {
      ...labels,
      'olm.webhook-description-generate-name': hook.generateName,
      'olm.webhook-description-hash': fnv64aHex(canonicalJson(hook)),
    };
    const existing = inputs.webhookConfigurations.find(
      (c) =>
        c.kind === kind &&
        c.metadata.labels?.['olm.webhook-description-generate-name'] === hook.generateName,
    );
    const intended: KubeObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind,
      metadata: { generateName: `${hook.generateName}-`, labels: hookLabels },
      webhooks: [webhook],
    };
    if (existing === undefined) writes.push({ op: 'create', object: intended });
    else if (
      canonicalJson(existing['webhooks']) !== canonicalJson(intended['webhooks']) ||
      existing.metadata.labels?.['olm.webhook-description-hash'] !==
        hookLabels['olm.webhook-description-hash']
    ) {
      writes.push({
        op: 'update',
        object: {
          ...existing,
          metadata: {
            ...existing.metadata,
            labels: { ...existing.metadata.labels, ...hookLabels },
          },
          webhooks: [webhook],
        },
      });
    }
  }
  for (const c of inputs.webhookConfigurations) {
    const name = c.metadata.labels?.['olm.webhook-description-generate-name'] ?? '';
    if (!wanted.has(`${c.kind}/${name}`)) writes.push({ op: 'delete', ref: refOf(c) });
  }
  return writes;
}

// Owned APIServices, pointing at their deployment's Service with its CA.
function apiServiceWrites(inputs: CertifiedInputs, labels: Record<string, string>): Write[] {
  const { csv, namespace } = inputs;
  const writes: Write[] = [];
  for (const api of ownedApiServicesOf(csv)) {
    const caBundle = caBundleOf(inputs, servedBy(api));
    if (caBundle === undefined) continue;
    const name = `${api.version}.${api.group}`;
    const existing = existingOf(inputs, 'APIService', undefined, name);
    const spec = {
      group: api.group,
      version: api.version,
      groupPriorityMinimum: 2000,
      versionPriority: 15,
      service: {
        namespace,
        name: serviceNameOf(servedBy(api)),
        port: api.containerPort ?? 443,
      },
      caBundle,
    };
    writes.push(
      upsert(
        {
          apiVersion: 'apiregistration.k8s.io/v1',
          kind: 'APIService',
          metadata: { name, labels },
          spec,
        },
        existing,
      ),
    );
  }
  return writes;
}

/** Pure: the writes that serve a CSV's webhooks and owned APIServices. */
export function certifiedWrites(inputs: CertifiedInputs): Write[] {
  const labels = ownerLabelsOf(inputs.csv, inputs.namespace);
  return [
    ...servingWrites(inputs, labels),
    ...webhookWrites(inputs, labels),
    ...apiServiceWrites(inputs, labels),
  ];
}
