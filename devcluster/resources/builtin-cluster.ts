// The rest of the kinds a default kube-apiserver 1.30 serves: workloads without controllers here
// (DaemonSets, StatefulSets, ReplicationControllers), nodes, pod templates and quotas, and (from
// builtin-apis.ts, builtin-storage.ts) the other groups. Stored, listed, watched, defaulted and
// printed as kube's printers do; no controller acts on them.
import type { JsonObject } from '../../shared/kube/json.js';
import { ageColumn, containerField, field, num, selectorText, str } from './columns.js';
import type { BuiltinSpec } from './columns.js';
import type { PrinterColumn } from './types.js';
import { storageSpecs } from './builtin-storage.js';
import { clusterApiSpecs } from './builtin-apis.js';

const scaleOfReplicas = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.status.selector',
};

const templateColumns = (withSelector: boolean): PrinterColumn[] => [
  {
    name: 'Containers',
    type: 'string',
    priority: 1,
    description: 'Names of each container in the template.',
    cell: (o) => containerField(o, 'name', 'spec', 'template', 'spec'),
  },
  {
    name: 'Images',
    type: 'string',
    priority: 1,
    description: 'Images referenced by each container in the template.',
    cell: (o) => containerField(o, 'image', 'spec', 'template', 'spec'),
  },
  ...(withSelector
    ? [
        {
          name: 'Selector',
          type: 'string',
          priority: 1,
          cell: (o: JsonObject) => selectorText(field(o, 'spec', 'selector')),
        },
      ]
    : []),
];

function labelsText(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '<none>';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '<none>';
  return entries.map(([k, v]) => `${k}=${typeof v === 'string' ? v : ''}`).join(',');
}

/** The first entry of a list field that passes `test`. */
function findEntry(list: unknown, test: (entry: JsonObject) => boolean): JsonObject | undefined {
  return Array.isArray(list) ? (list as JsonObject[]).find(test) : undefined;
}

/** STATUS of a node: Ready, NotReady or Unknown, then SchedulingDisabled when cordoned. */
function nodeStatus(node: JsonObject): string {
  const ready = findEntry(field(node, 'status', 'conditions'), (c) => str(c, 'type') === 'Ready');
  const readyStatus = ready === undefined ? 'Unknown' : str(ready, 'status');
  const base = readyStatus === 'True' ? 'Ready' : readyStatus === 'False' ? 'NotReady' : 'Unknown';
  return field(node, 'spec', 'unschedulable') === true ? `${base},SchedulingDisabled` : base;
}

function nodeRoles(node: JsonObject): string {
  const labels = field(node, 'metadata', 'labels');
  const roles = Object.keys(typeof labels === 'object' && labels !== null ? labels : {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((role) => role !== '');
  return roles.length === 0 ? '<none>' : roles.sort().join(',');
}

function nodeAddress(node: JsonObject, type: string): string {
  const found = findEntry(field(node, 'status', 'addresses'), (a) => str(a, 'type') === type);
  return found === undefined ? '<none>' : str(found, 'address');
}

const core: BuiltinSpec[] = [
  {
    group: '',
    version: 'v1',
    resource: 'nodes',
    kind: 'Node',
    singular: 'node',
    namespaced: false,
    shortNames: ['no'],
    status: true,
    columns: [
      { name: 'Status', type: 'string', description: 'The status of the node', cell: nodeStatus },
      { name: 'Roles', type: 'string', description: 'The roles of the node', cell: nodeRoles },
      ageColumn,
      {
        name: 'Version',
        type: 'string',
        cell: (o) => str(o, 'status', 'nodeInfo', 'kubeletVersion'),
      },
      {
        name: 'Internal-IP',
        type: 'string',
        priority: 1,
        cell: (o) => nodeAddress(o, 'InternalIP'),
      },
      {
        name: 'External-IP',
        type: 'string',
        priority: 1,
        cell: (o) => nodeAddress(o, 'ExternalIP'),
      },
      {
        name: 'OS-Image',
        type: 'string',
        priority: 1,
        cell: (o) => str(o, 'status', 'nodeInfo', 'osImage') || '<unknown>',
      },
      {
        name: 'Kernel-Version',
        type: 'string',
        priority: 1,
        cell: (o) => str(o, 'status', 'nodeInfo', 'kernelVersion') || '<unknown>',
      },
      {
        name: 'Container-Runtime',
        type: 'string',
        priority: 1,
        cell: (o) => str(o, 'status', 'nodeInfo', 'containerRuntimeVersion') || '<unknown>',
      },
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'podtemplates',
    kind: 'PodTemplate',
    singular: 'podtemplate',
    namespaced: true,
    columns: [
      {
        name: 'Containers',
        type: 'string',
        cell: (o) => containerField(o, 'name', 'template', 'spec'),
      },
      {
        name: 'Images',
        type: 'string',
        cell: (o) => containerField(o, 'image', 'template', 'spec'),
      },
      {
        name: 'Pod Labels',
        type: 'string',
        cell: (o) => labelsText(field(o, 'template', 'metadata', 'labels')),
      },
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'replicationcontrollers',
    kind: 'ReplicationController',
    singular: 'replicationcontroller',
    namespaced: true,
    shortNames: ['rc'],
    categories: ['all'],
    status: true,
    generation: true,
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
    columns: [
      { name: 'Desired', type: 'integer', cell: (o) => num(o, 'spec', 'replicas') },
      { name: 'Current', type: 'integer', cell: (o) => num(o, 'status', 'replicas') },
      { name: 'Ready', type: 'integer', cell: (o) => num(o, 'status', 'readyReplicas') },
      ageColumn,
      ...templateColumns(false),
      {
        name: 'Selector',
        type: 'string',
        priority: 1,
        cell: (o) => labelsText(field(o, 'spec', 'selector')),
      },
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'resourcequotas',
    kind: 'ResourceQuota',
    singular: 'resourcequota',
    namespaced: true,
    shortNames: ['quota'],
    status: true,
    columns: [
      ageColumn,
      { name: 'Request', type: 'string', cell: (o) => quotaText(o, false) },
      { name: 'Limit', type: 'string', cell: (o) => quotaText(o, true) },
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'limitranges',
    kind: 'LimitRange',
    singular: 'limitrange',
    namespaced: true,
    shortNames: ['limits'],
    columns: [
      {
        name: 'Created At',
        type: 'date',
        cell: (o) => str(o, 'metadata', 'creationTimestamp'),
      },
    ],
  },
];

/** REQUEST or LIMIT of a quota: "name: used/hard" for each hard resource of that side. */
function quotaText(quota: JsonObject, limits: boolean): string {
  const hard = field(quota, 'status', 'hard') ?? field(quota, 'spec', 'hard');
  const used = (field(quota, 'status', 'used') ?? {}) as Record<string, unknown>;
  if (typeof hard !== 'object' || hard === null) return '';
  return Object.keys(hard)
    .filter((name) => name.startsWith('limits.') === limits)
    .sort()
    .map((name) => {
      const u = used[name];
      return `${name}: ${typeof u === 'string' ? u : '0'}/${String((hard as Record<string, unknown>)[name])}`;
    })
    .join(', ');
}

const apps: BuiltinSpec[] = [
  {
    group: 'apps',
    version: 'v1',
    resource: 'daemonsets',
    kind: 'DaemonSet',
    singular: 'daemonset',
    namespaced: true,
    shortNames: ['ds'],
    categories: ['all'],
    status: true,
    generation: true,
    columns: [
      { name: 'Desired', type: 'integer', cell: (o) => num(o, 'status', 'desiredNumberScheduled') },
      { name: 'Current', type: 'integer', cell: (o) => num(o, 'status', 'currentNumberScheduled') },
      { name: 'Ready', type: 'integer', cell: (o) => num(o, 'status', 'numberReady') },
      {
        name: 'Up-to-date',
        type: 'integer',
        cell: (o) => num(o, 'status', 'updatedNumberScheduled'),
      },
      { name: 'Available', type: 'integer', cell: (o) => num(o, 'status', 'numberAvailable') },
      {
        name: 'Node Selector',
        type: 'string',
        cell: (o) => labelsText(field(o, 'spec', 'template', 'spec', 'nodeSelector')),
      },
      ageColumn,
      ...templateColumns(true),
    ],
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'statefulsets',
    kind: 'StatefulSet',
    singular: 'statefulset',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    status: true,
    generation: true,
    scale: scaleOfReplicas,
    columns: [
      {
        name: 'Ready',
        type: 'string',
        cell: (o) => `${num(o, 'status', 'readyReplicas')}/${num(o, 'spec', 'replicas')}`,
      },
      ageColumn,
      ...templateColumns(false),
    ],
  },
  {
    group: 'apps',
    version: 'v1',
    resource: 'controllerrevisions',
    kind: 'ControllerRevision',
    singular: 'controllerrevision',
    namespaced: true,
    columns: [
      {
        name: 'Controller',
        type: 'string',
        cell: (o) => {
          const ref = findEntry(
            field(o, 'metadata', 'ownerReferences'),
            (r) => field(r, 'controller') === true,
          );
          if (ref === undefined) return '<none>';
          const group = str(ref, 'apiVersion').split('/');
          const kind = str(ref, 'kind').toLowerCase();
          return `${group.length > 1 ? `${kind}.${group[0]}` : kind}/${str(ref, 'name')}`;
        },
      },
      { name: 'Revision', type: 'integer', cell: (o) => num(o, 'revision') },
      ageColumn,
    ],
  },
];

/** The kinds of this file, builtin-apis.ts and builtin-storage.ts. */
export const clusterSpecs: readonly BuiltinSpec[] = [
  ...core,
  ...apps,
  ...clusterApiSpecs,
  ...storageSpecs,
];
