// The kinds the watcher mirrors, which objects of each, and what it trims from them. The
// watcher makes no decisions: this table is its whole policy. Trimming drops what no function
// reads and what would make messages large (icons, long descriptions, CRD schemas, the data
// of ConfigMaps and Secrets); a function that needs the full object reads it from the API.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../shared/kube/client.js';

/** One mirrored kind. */
export interface MirroredKind {
  apiVersion: string;
  kind: string;
  /** Only objects with these labels (a label selector), when set. */
  labelSelector?: string;
  /** Returns the object as mirrored (a new object; the input is not changed). */
  trim(object: KubeObject): KubeObject;
}

// Fields no function reads, removed from every object.
function trimMetadata(object: KubeObject): KubeObject {
  const { managedFields: _managedFields, ...metadata } = object.metadata;
  const annotations = metadata.annotations;
  if (annotations?.['kubectl.kubernetes.io/last-applied-configuration'] !== undefined) {
    const { 'kubectl.kubernetes.io/last-applied-configuration': _last, ...rest } = annotations;
    metadata.annotations = rest;
  }
  return { ...object, metadata };
}

function digestOf(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value ?? null))
    .digest('hex')
    .slice(0, 16);
}

/** Annotation the watcher adds when it drops bulky content, so changes still show. */
export const contentDigestAnnotation = 'olmq.io/content-digest';

// Replaces `field` of the object with a digest annotation.
function withoutContent(object: KubeObject, fields: readonly string[]): KubeObject {
  const trimmed: KubeObject = { ...object };
  const content: Record<string, unknown> = {};
  for (const field of fields) {
    content[field] = trimmed[field];
    delete trimmed[field];
  }
  return {
    ...trimmed,
    metadata: {
      ...trimmed.metadata,
      annotations: {
        ...trimmed.metadata.annotations,
        [contentDigestAnnotation]: digestOf(content),
      },
    },
  };
}

const plain = (apiVersion: string, kind: string, labelSelector?: string): MirroredKind => ({
  apiVersion,
  kind,
  ...(labelSelector === undefined ? {} : { labelSelector }),
  trim: trimMetadata,
});

/** Objects olmq created carry this label (upstream OLM's `olm.managed`). */
const managed = 'olm.managed=true';

/** Every kind the OLM functions need, in the order the watcher starts them. */
export const mirroredKinds: readonly MirroredKind[] = [
  plain('v1', 'Namespace'),
  {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    trim(object) {
      const crd = trimMetadata(object) as KubeObject & {
        spec?: { versions?: Record<string, unknown>[] };
      };
      const versions = crd.spec?.versions?.map(({ schema: _schema, ...version }) => version);
      return versions === undefined ? crd : { ...crd, spec: { ...crd.spec, versions } };
    },
  },
  {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    trim(object) {
      const csv = trimMetadata(object) as KubeObject & { spec?: Record<string, unknown> };
      if (csv.spec === undefined) return csv;
      // A copied CSV is read for its metadata and status only (its content hash annotation
      // stands for the spec): at 10,000 namespaces, copies are most of the mirror.
      if (csv.metadata.labels?.['olm.copiedFrom'] !== undefined) return { ...csv, spec: {} };
      const { icon: _icon, description: _description, ...spec } = csv.spec;
      return { ...csv, spec };
    },
  },
  plain('operators.coreos.com/v1alpha1', 'InstallPlan'),
  plain('operators.coreos.com/v1alpha1', 'CatalogSource'),
  plain('operators.coreos.com/v1alpha1', 'Subscription'),
  plain('operators.coreos.com/v1', 'OperatorGroup'),
  plain('operators.coreos.com/v1', 'OLMConfig'),
  plain('operators.coreos.com/v2', 'OperatorCondition'),
  plain('operators.coreos.com/v1', 'Operator'),
  plain('apps/v1', 'Deployment', managed),
  // Registry pods of image-backed CatalogSources (serving and update pods both carry the label).
  plain('v1', 'Pod', 'olm.catalogSource'),
  plain('v1', 'ServiceAccount', managed),
  // Components of an Operator (the operator function labels and lists them).
  plain('v1', 'Service', managed),
  // All RBAC, not only OLM's: a grant made by an admin retries CSVs that failed Forbidden.
  plain('rbac.authorization.k8s.io/v1', 'Role'),
  plain('rbac.authorization.k8s.io/v1', 'RoleBinding'),
  plain('rbac.authorization.k8s.io/v1', 'ClusterRole'),
  plain('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'),
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    // Any olm.managed value: the catalog function labels a CatalogSource's ConfigMap
    // olm.managed=false when it adopts it (as upstream does), so the catalog sees its changes.
    labelSelector: 'olm.managed',
    trim: (object) => withoutContent(trimMetadata(object), ['data', 'binaryData']),
  },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    labelSelector: managed,
    trim: (object) => withoutContent(trimMetadata(object), ['data', 'stringData']),
  },
  plain('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', managed),
  plain('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', managed),
  plain('apiregistration.k8s.io/v1', 'APIService'),
];
