// Defaults of the kinds in builtin-cluster.ts, builtin-apis.ts and builtin-storage.ts, as kube
// 1.30's defaulting functions (pkg/apis/*/v1/defaults.go) and registry strategies set them.
import { isJsonObject, type JsonObject } from '../../shared/kube/json.js';
import { defaultTemplate } from './builtin-defaults.js';
import { defaultPodSpec, objectAt } from './pod-defaults.js';
import type { Strategy } from './types.js';

/** SetDefaults_DaemonSet: rolling updates of one pod at a time, ten revisions kept. */
function defaultDaemonSet(object: JsonObject): void {
  const spec = objectAt(object, 'spec');
  const strategy = objectAt(spec, 'updateStrategy');
  if ((strategy['type'] ?? '') === '') strategy['type'] = 'RollingUpdate';
  if (strategy['type'] === 'RollingUpdate') {
    const rollingUpdate = objectAt(strategy, 'rollingUpdate');
    rollingUpdate['maxUnavailable'] ??= 1;
    rollingUpdate['maxSurge'] ??= 0;
  }
  spec['revisionHistoryLimit'] ??= 10;
  defaultTemplate(spec);
}

/** SetDefaults_StatefulSet: ordered pods, rolling updates from partition 0, claims retained. */
function defaultStatefulSet(object: JsonObject): void {
  const spec = objectAt(object, 'spec');
  spec['podManagementPolicy'] ??= 'OrderedReady';
  const strategy = objectAt(spec, 'updateStrategy');
  if ((strategy['type'] ?? '') === '') strategy['type'] = 'RollingUpdate';
  if (strategy['type'] === 'RollingUpdate') objectAt(strategy, 'rollingUpdate')['partition'] ??= 0;
  const retention = objectAt(spec, 'persistentVolumeClaimRetentionPolicy');
  retention['whenDeleted'] ??= 'Retain';
  retention['whenScaled'] ??= 'Retain';
  spec['replicas'] ??= 1;
  spec['revisionHistoryLimit'] ??= 10;
  defaultTemplate(spec);
}

/** SetDefaults_ReplicationController: selector and labels from the template's labels. */
function defaultReplicationController(object: JsonObject): void {
  const spec = objectAt(object, 'spec');
  const template = spec['template'];
  const templateLabels = isJsonObject(template)
    ? objectAt(objectAt(template, 'metadata'), 'labels')
    : {};
  if (Object.keys(templateLabels).length > 0) {
    if (!isJsonObject(spec['selector']) || Object.keys(spec['selector']).length === 0)
      spec['selector'] = { ...templateLabels };
    const metadata = objectAt(object, 'metadata');
    if (!isJsonObject(metadata['labels']) || Object.keys(metadata['labels']).length === 0)
      metadata['labels'] = { ...templateLabels };
  }
  spec['replicas'] ??= 1;
  defaultTemplate(spec);
}

/** Volumes and claims are Filesystem volumes unless told otherwise. */
function defaultVolumeMode(object: JsonObject): void {
  objectAt(object, 'spec')['volumeMode'] ??= 'Filesystem';
}

/** A new volume or claim starts Pending, as kube's strategies reset status on create. */
function pendingStatus(object: JsonObject): void {
  object['status'] = { phase: 'Pending' };
}

/** The strategies of the kinds above. */
export const clusterStrategies: Record<string, Strategy> = {
  '/PersistentVolume': {
    defaults(object) {
      objectAt(object, 'spec')['persistentVolumeReclaimPolicy'] ??= 'Retain';
      defaultVolumeMode(object);
    },
    prepareCreate: pendingStatus,
  },
  '/PersistentVolumeClaim': { defaults: defaultVolumeMode, prepareCreate: pendingStatus },
  '/PodTemplate': {
    defaults(object) {
      const template = object['template'];
      if (isJsonObject(template) && isJsonObject(template['spec']))
        defaultPodSpec(template['spec']);
    },
  },
  '/ReplicationController': { defaults: defaultReplicationController },
  'apps/DaemonSet': { defaults: defaultDaemonSet },
  'apps/StatefulSet': { defaults: defaultStatefulSet },
  'autoscaling/HorizontalPodAutoscaler': {
    defaults(object) {
      const spec = objectAt(object, 'spec');
      spec['minReplicas'] ??= 1;
      // SetDefaults_HorizontalPodAutoscaler: no metrics means 80% average CPU utilization.
      if (!Array.isArray(spec['metrics']) || spec['metrics'].length === 0)
        spec['metrics'] = [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
          },
        ];
    },
  },
  'discovery.k8s.io/EndpointSlice': {
    defaults(object) {
      const ports = object['ports'];
      if (!Array.isArray(ports)) return;
      for (const port of ports) if (isJsonObject(port)) port['protocol'] ??= 'TCP';
    },
  },
  'scheduling.k8s.io/PriorityClass': {
    defaults(object) {
      object['preemptionPolicy'] ??= 'PreemptLowerPriority';
    },
  },
  'storage.k8s.io/StorageClass': {
    defaults(object) {
      object['reclaimPolicy'] ??= 'Delete';
      object['volumeBindingMode'] ??= 'Immediate';
    },
  },
};
