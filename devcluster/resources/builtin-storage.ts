// Storage kinds of a default kube-apiserver 1.30: persistent volumes and claims (core/v1) and
// storage.k8s.io/v1, with kube's printer columns. No provisioner or attacher runs here.
import type { JsonObject } from '../../shared/kube/json.js';
import { ageColumn, field, str, type BuiltinSpec } from './columns.js';
import type { PrinterColumn } from './types.js';

const accessModeShort: Record<string, string> = {
  ReadWriteOnce: 'RWO',
  ReadOnlyMany: 'ROX',
  ReadWriteMany: 'RWX',
  ReadWriteOncePod: 'RWOP',
};

/** ACCESS MODES as kube prints them: RWO,ROX,RWX,RWOP in that order. */
function accessModes(modes: unknown): string {
  if (!Array.isArray(modes)) return '';
  const set = new Set(modes.map(String));
  return Object.keys(accessModeShort)
    .filter((m) => set.has(m))
    .map((m) => accessModeShort[m])
    .join(',');
}

function storageOf(object: JsonObject, ...path: string[]): string {
  return str(object, ...path, 'storage');
}

function storageClassName(object: JsonObject): string {
  return str(object, 'spec', 'storageClassName');
}

function bool(value: unknown): string {
  return value === true ? 'true' : 'false';
}

const volumeModeColumn: PrinterColumn = {
  name: 'VolumeMode',
  type: 'string',
  priority: 1,
  cell: (o) => str(o, 'spec', 'volumeMode') || '<unset>',
};

const volumeAttributesClassColumn: PrinterColumn = {
  name: 'VolumeAttributesClass',
  type: 'string',
  cell: (o) => str(o, 'spec', 'volumeAttributesClassName') || '<unset>',
};

/** The persistent volume and storage.k8s.io kinds. */
export const storageSpecs: readonly BuiltinSpec[] = [
  {
    group: '',
    version: 'v1',
    resource: 'persistentvolumes',
    kind: 'PersistentVolume',
    singular: 'persistentvolume',
    namespaced: false,
    shortNames: ['pv'],
    status: true,
    columns: [
      { name: 'Capacity', type: 'string', cell: (o) => storageOf(o, 'spec', 'capacity') },
      {
        name: 'Access Modes',
        type: 'string',
        cell: (o) => accessModes(field(o, 'spec', 'accessModes')),
      },
      {
        name: 'Reclaim Policy',
        type: 'string',
        cell: (o) => str(o, 'spec', 'persistentVolumeReclaimPolicy'),
      },
      { name: 'Status', type: 'string', cell: (o) => str(o, 'status', 'phase') },
      {
        name: 'Claim',
        type: 'string',
        cell: (o) => {
          const name = str(o, 'spec', 'claimRef', 'name');
          return name === '' ? '' : `${str(o, 'spec', 'claimRef', 'namespace')}/${name}`;
        },
      },
      { name: 'StorageClass', type: 'string', cell: storageClassName },
      volumeAttributesClassColumn,
      { name: 'Reason', type: 'string', cell: (o) => str(o, 'status', 'reason') },
      ageColumn,
      volumeModeColumn,
    ],
  },
  {
    group: '',
    version: 'v1',
    resource: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    singular: 'persistentvolumeclaim',
    namespaced: true,
    shortNames: ['pvc'],
    status: true,
    columns: [
      { name: 'Status', type: 'string', cell: (o) => str(o, 'status', 'phase') },
      { name: 'Volume', type: 'string', cell: (o) => str(o, 'spec', 'volumeName') },
      { name: 'Capacity', type: 'string', cell: (o) => storageOf(o, 'status', 'capacity') },
      {
        name: 'Access Modes',
        type: 'string',
        cell: (o) => accessModes(field(o, 'status', 'accessModes')),
      },
      { name: 'StorageClass', type: 'string', cell: storageClassName },
      volumeAttributesClassColumn,
      ageColumn,
      volumeModeColumn,
    ],
  },
  {
    group: 'storage.k8s.io',
    version: 'v1',
    resource: 'storageclasses',
    kind: 'StorageClass',
    singular: 'storageclass',
    namespaced: false,
    shortNames: ['sc'],
    columns: [
      { name: 'Provisioner', type: 'string', cell: (o) => str(o, 'provisioner') },
      { name: 'ReclaimPolicy', type: 'string', cell: (o) => str(o, 'reclaimPolicy') },
      { name: 'VolumeBindingMode', type: 'string', cell: (o) => str(o, 'volumeBindingMode') },
      {
        name: 'AllowVolumeExpansion',
        type: 'string',
        cell: (o) => bool(field(o, 'allowVolumeExpansion')),
      },
      ageColumn,
    ],
  },
  {
    group: 'storage.k8s.io',
    version: 'v1',
    resource: 'csidrivers',
    kind: 'CSIDriver',
    singular: 'csidriver',
    namespaced: false,
    columns: [
      {
        name: 'AttachRequired',
        type: 'boolean',
        cell: (o) => bool(field(o, 'spec', 'attachRequired')),
      },
      {
        name: 'PodInfoOnMount',
        type: 'boolean',
        cell: (o) => bool(field(o, 'spec', 'podInfoOnMount')),
      },
      {
        name: 'StorageCapacity',
        type: 'boolean',
        cell: (o) => bool(field(o, 'spec', 'storageCapacity')),
      },
      ageColumn,
    ],
  },
  {
    group: 'storage.k8s.io',
    version: 'v1',
    resource: 'csinodes',
    kind: 'CSINode',
    singular: 'csinode',
    namespaced: false,
    columns: [
      {
        name: 'Drivers',
        type: 'integer',
        cell: (o) => {
          const drivers = field(o, 'spec', 'drivers');
          return Array.isArray(drivers) ? drivers.length : 0;
        },
      },
      ageColumn,
    ],
  },
  {
    group: 'storage.k8s.io',
    version: 'v1',
    resource: 'csistoragecapacities',
    kind: 'CSIStorageCapacity',
    singular: 'csistoragecapacity',
    namespaced: true,
    columns: [
      { name: 'StorageClassName', type: 'string', cell: (o) => str(o, 'storageClassName') },
      { name: 'Capacity', type: 'string', cell: (o) => str(o, 'capacity') },
    ],
  },
  {
    group: 'storage.k8s.io',
    version: 'v1',
    resource: 'volumeattachments',
    kind: 'VolumeAttachment',
    singular: 'volumeattachment',
    namespaced: false,
    status: true,
    columns: [
      { name: 'Attacher', type: 'string', cell: (o) => str(o, 'spec', 'attacher') },
      { name: 'PV', type: 'string', cell: (o) => str(o, 'spec', 'source', 'persistentVolumeName') },
      { name: 'Node', type: 'string', cell: (o) => str(o, 'spec', 'nodeName') },
      { name: 'Attached', type: 'boolean', cell: (o) => bool(field(o, 'status', 'attached')) },
      ageColumn,
    ],
  },
];
