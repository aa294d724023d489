// The built-in kinds the devcluster serves, with their verbs, subresources and the columns of
// their server-side Table output (as kubectl get prints them).
import type { JsonObject } from '../../shared/kube/json.js';
import { apiServiceColumns } from './apiservice-columns.js';
import {
  ageColumn,
  formatAge,
  type BuiltinSpec,
  containerField,
  count,
  field,
  num,
  selectorText,
  str,
} from './columns.js';
import type { PrinterColumn, ResourceType } from './types.js';
import { batchAndNetworkingSpecs } from './builtin-batch.js';
import { clusterSpecs } from './builtin-cluster.js';
import { convertedSpecs } from './builtin-converted.js';

export { formatAge } from './columns.js';

const standardVerbs = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
] as const;

function podStatusText(pod: JsonObject): string {
  if (field(pod, 'metadata', 'deletionTimestamp') !== undefined) return 'Terminating';
  const statuses = field(pod, 'status', 'containerStatuses');
  if (Array.isArray(statuses)) {
    // As printPod: a waiting reason, else a terminated container's (Completed, Error).
    for (const s of statuses) {
      const reason =
        field(s as JsonObject, 'state', 'waiting', 'reason') ??
        field(s as JsonObject, 'state', 'terminated', 'reason');
      if (typeof reason === 'string' && reason !== '') return reason;
    }
  }
  return str(pod, 'status', 'phase') || 'Pending';
}

function podReady(pod: JsonObject): string {
  const statuses = field(pod, 'status', 'containerStatuses');
  const total = count(pod, 'spec', 'containers');
  const ready = Array.isArray(statuses)
    ? statuses.filter((s) => field(s as JsonObject, 'ready') === true).length
    : 0;
  return `${ready}/${total}`;
}

function podRestarts(pod: JsonObject): number {
  const statuses = field(pod, 'status', 'containerStatuses');
  if (!Array.isArray(statuses)) return 0;
  return statuses.reduce<number>((sum, s) => sum + num(s as JsonObject, 'restartCount'), 0);
}

function servicePorts(service: JsonObject): string {
  const ports = field(service, 'spec', 'ports');
  if (!Array.isArray(ports) || ports.length === 0) return '<none>';
  return ports
    .map((p) => {
      const port = p as JsonObject;
      return `${num(port, 'port')}/${str(port, 'protocol') || 'TCP'}`;
    })
    .join(',');
}

const builtinSpecs: BuiltinSpec[] = [
  {
    group: '',
    version: 'v1',
    resource: 'namespaces',
    kind: 'Namespace',
    singular: 'namespace',
    namespaced: false,
    shortNames: ['ns'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    status: true,
    extra: ['finalize'],
    columns: [
      { name: 'Status', type: 'string', cell: (o) => str(o, 'status', 'phase') },
      ageColumn,
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'configmaps',
    kind: 'ConfigMap',
    singular: 'configmap',
    namespaced: true,
    shortNames: ['cm'],
    columns: [
      { name: 'Data', type: 'integer', cell: (o) => count(o, 'data') + count(o, 'binaryData') },
      ageColumn,
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'secrets',
    kind: 'Secret',
    singular: 'secret',
    namespaced: true,
    columns: [
      { name: 'Type', type: 'string', cell: (o) => str(o, 'type') || 'Opaque' },
      { name: 'Data', type: 'integer', cell: (o) => count(o, 'data') },
      ageColumn,
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'serviceaccounts',
    kind: 'ServiceAccount',
    singular: 'serviceaccount',
    namespaced: true,
    shortNames: ['sa'],
    extra: ['token'],
    columns: [{ name: 'Secrets', type: 'string', cell: (o) => count(o, 'secrets') }, ageColumn],
  },
  {
    group: '',
    version: 'v1',
    resource: 'services',
    kind: 'Service',
    singular: 'service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    status: true,
    columns: [
      { name: 'Type', type: 'string', cell: (o) => str(o, 'spec', 'type') || 'ClusterIP' },
      { name: 'Cluster-IP', type: 'string', cell: (o) => str(o, 'spec', 'clusterIP') || '<none>' },
      { name: 'External-IP', type: 'string', cell: () => '<none>' },
      { name: 'Port(s)', type: 'string', cell: servicePorts },
      ageColumn,
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'pods',
    kind: 'Pod',
    singular: 'pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    status: true,
    columns: [
      { name: 'Ready', type: 'string', cell: podReady },
      { name: 'Status', type: 'string', cell: podStatusText },
      { name: 'Restarts', type: 'string', cell: podRestarts },
      ageColumn,
      {
        name: 'IP',
        type: 'string',
        priority: 1,
        cell: (o) => str(o, 'status', 'podIP') || '<none>',
      },
      {
        name: 'Node',
        type: 'string',
        priority: 1,
        cell: (o) => str(o, 'spec', 'nodeName') || '<none>',
      },
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'events',
    kind: 'Event',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    columns: [
      {
        name: 'Last Seen',
        type: 'string',
        cell: (o, now) =>
          formatAge(
            str(o, 'lastTimestamp') ||
              str(o, 'eventTime') ||
              str(o, 'metadata', 'creationTimestamp'),
            now,
          ),
      },
      { name: 'Type', type: 'string', cell: (o) => str(o, 'type') },
      { name: 'Reason', type: 'string', cell: (o) => str(o, 'reason') },
      {
        name: 'Object',
        type: 'string',
        cell: (o) =>
          `${str(o, 'involvedObject', 'kind').toLowerCase()}/${str(o, 'involvedObject', 'name')}`,
      },
      { name: 'Message', type: 'string', cell: (o) => str(o, 'message') },
    ],
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
    singular: 'deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    status: true,
    generation: true,
    scale: {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.selector',
    },
    columns: [
      {
        name: 'Ready',
        type: 'string',
        cell: (o) => `${num(o, 'status', 'readyReplicas')}/${num(o, 'spec', 'replicas')}`,
      },
      { name: 'Up-to-date', type: 'integer', cell: (o) => num(o, 'status', 'updatedReplicas') },
      { name: 'Available', type: 'integer', cell: (o) => num(o, 'status', 'availableReplicas') },
      ageColumn,
      {
        name: 'Containers',
        type: 'string',
        priority: 1,
        cell: (o) => containerField(o, 'name', 'spec', 'template', 'spec'),
      },
      {
        name: 'Images',
        type: 'string',
        priority: 1,
        cell: (o) => containerField(o, 'image', 'spec', 'template', 'spec'),
      },
      {
        name: 'Selector',
        type: 'string',
        priority: 1,
        cell: (o) => selectorText(field(o, 'spec', 'selector')),
      },
    ],
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'replicasets',
    kind: 'ReplicaSet',
    singular: 'replicaset',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    status: true,
    generation: true,
    scale: {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.selector',
    },
    columns: [
      { name: 'Desired', type: 'integer', cell: (o) => num(o, 'spec', 'replicas') },
      { name: 'Current', type: 'integer', cell: (o) => num(o, 'status', 'replicas') },
      { name: 'Ready', type: 'integer', cell: (o) => num(o, 'status', 'readyReplicas') },
      ageColumn,
    ],
  },
  ...(['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'] as const).map(
    (kind): BuiltinSpec => ({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      resource: `${kind.toLowerCase()}s`,
      kind,
      singular: kind.toLowerCase(),
      namespaced: !kind.startsWith('Cluster'),
      columns:
        kind === 'RoleBinding' || kind === 'ClusterRoleBinding'
          ? [
              {
                name: 'Role',
                type: 'string',
                cell: (o) => `${str(o, 'roleRef', 'kind')}/${str(o, 'roleRef', 'name')}`,
              },
              ageColumn,
            ]
          : [
              {
                name: 'Created At',
                type: 'string',
                format: 'date',
                cell: (o) => str(o, 'metadata', 'creationTimestamp'),
              },
            ],
    }),
  ),
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    singular: 'customresourcedefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    status: true,
    generation: true,
    columns: [
      {
        name: 'Created At',
        type: 'date',
        cell: (o) => str(o, 'metadata', 'creationTimestamp'),
      },
    ],
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    resource: 'validatingwebhookconfigurations',
    kind: 'ValidatingWebhookConfiguration',
    singular: 'validatingwebhookconfiguration',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    columns: [{ name: 'Webhooks', type: 'integer', cell: (o) => count(o, 'webhooks') }, ageColumn],
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    resource: 'mutatingwebhookconfigurations',
    kind: 'MutatingWebhookConfiguration',
    singular: 'mutatingwebhookconfiguration',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    columns: [{ name: 'Webhooks', type: 'integer', cell: (o) => count(o, 'webhooks') }, ageColumn],
  },
  {
    group: 'apiregistration.k8s.io',
    version: 'v1',
    resource: 'apiservices',
    kind: 'APIService',
    singular: 'apiservice',
    namespaced: false,
    categories: ['api-extensions'],
    status: true,
    columns: [...apiServiceColumns, ageColumn],
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    resource: 'leases',
    kind: 'Lease',
    singular: 'lease',
    namespaced: true,
    columns: [
      { name: 'Holder', type: 'string', cell: (o) => str(o, 'spec', 'holderIdentity') },
      ageColumn,
    ],
  },
  ...(
    [
      'SubjectAccessReview',
      'SelfSubjectAccessReview',
      'SelfSubjectRulesReview',
      'LocalSubjectAccessReview',
    ] as const
  ).map((kind): BuiltinSpec => ({
    group: 'authorization.k8s.io',
    version: 'v1',
    resource: `${kind.toLowerCase()}s`,
    kind,
    singular: kind.toLowerCase(),
    namespaced: kind === 'LocalSubjectAccessReview',
    verbs: ['create'],
    virtual: true,
  })),
  {
    group: 'authentication.k8s.io',
    version: 'v1',
    resource: 'tokenreviews',
    kind: 'TokenReview',
    singular: 'tokenreview',
    namespaced: false,
    verbs: ['create'],
    virtual: true,
  },
  // `kubectl auth whoami` (GA in 1.28; kube 1.30 serves no v1beta1/v1alpha1 by default).
  {
    group: 'authentication.k8s.io',
    version: 'v1',
    resource: 'selfsubjectreviews',
    kind: 'SelfSubjectReview',
    singular: 'selfsubjectreview',
    namespaced: false,
    verbs: ['create'],
    virtual: true,
  },
];

/** The built-in resource types (fresh objects, safe to keep). */
export function builtinResourceTypes(): ResourceType[] {
  const specs = [...builtinSpecs, ...batchAndNetworkingSpecs, ...clusterSpecs];
  return [...specs, ...convertedSpecs(specs)].map((spec) => {
    const type: ResourceType = {
      group: spec.group,
      version: spec.version,
      resource: spec.resource,
      kind: spec.kind,
      listKind: `${spec.kind}List`,
      singular: spec.singular,
      namespaced: spec.namespaced,
      shortNames: spec.shortNames ?? [],
      categories: spec.categories ?? [],
      verbs: spec.verbs ?? standardVerbs,
      statusSubresource: spec.status ?? false,
      extraSubresources: spec.extra ?? [],
      hasGeneration: spec.generation ?? false,
      virtual: spec.virtual ?? false,
      columns: spec.columns ?? [ageColumn],
      storageVersion: spec.conversion?.storage.version ?? spec.version,
    };
    if (spec.scale !== undefined) type.scale = spec.scale;
    if (spec.conversion !== undefined) type.conversion = spec.conversion;
    return type;
  });
}

/** The age column, shared with CRD types that declare no columns of their own. */
export const defaultColumns: readonly PrinterColumn[] = [ageColumn];
