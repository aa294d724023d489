// Versions served from another version's storage, with their field conversions: autoscaling/v1
// HorizontalPodAutoscalers (stored as autoscaling/v2) and events.k8s.io/v1 Events (stored as
// core/v1 Events), as kube-apiserver converts them (pkg/apis/autoscaling/v1/conversion.go,
// pkg/apis/events/v1/conversion.go).
import { isJsonObject, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import type { VersionConversion } from './types.js';

/** Annotations kube keeps the v2-only parts of an HPA in when it is read as v1. */
export const hpaV1Annotations = {
  metrics: 'autoscaling.alpha.kubernetes.io/metrics',
  currentMetrics: 'autoscaling.alpha.kubernetes.io/current-metrics',
  conditions: 'autoscaling.alpha.kubernetes.io/conditions',
  behavior: 'autoscaling.alpha.kubernetes.io/behavior',
} as const;

function objectOf(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {};
}

function isCpuUtilization(metric: JsonValue): boolean {
  if (!isJsonObject(metric) || metric['type'] !== 'Resource') return false;
  const resource = objectOf(metric['resource']);
  const target = objectOf(resource['target']);
  return resource['name'] === 'cpu' && target['type'] === 'Utilization';
}

function cpuMetric(percent: number): JsonObject {
  return {
    type: 'Resource',
    resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: percent } },
  };
}

/** An annotation holding JSON, parsed; undefined when absent or unreadable. */
function annotationJson(annotations: JsonObject, key: string): JsonValue | undefined {
  const text = annotations[key];
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/** autoscaling/v2 (stored) → autoscaling/v1: the CPU target in its field, the rest in annotations. */
function hpaFromStorage(stored: JsonObject): JsonObject {
  const metadata = structuredClone(objectOf(stored['metadata']));
  const annotations = { ...objectOf(metadata['annotations']) };
  const spec = objectOf(stored['spec']);
  const status = objectOf(stored['status']);
  const metrics = Array.isArray(spec['metrics']) ? spec['metrics'] : [];
  const cpu = metrics.find(isCpuUtilization);
  const others = metrics.filter((m) => !isCpuUtilization(m));
  if (others.length > 0) annotations[hpaV1Annotations.metrics] = JSON.stringify(others);
  if (spec['behavior'] !== undefined)
    annotations[hpaV1Annotations.behavior] = JSON.stringify(spec['behavior']);
  if (Array.isArray(status['conditions']) && status['conditions'].length > 0)
    annotations[hpaV1Annotations.conditions] = JSON.stringify(status['conditions']);
  const current = Array.isArray(status['currentMetrics']) ? status['currentMetrics'] : [];
  const currentCpu = current.find(
    (m) => isJsonObject(m) && m['type'] === 'Resource' && objectOf(m['resource'])['name'] === 'cpu',
  );
  if (Object.keys(annotations).length > 0) metadata['annotations'] = annotations;
  const v1Spec: JsonObject = {
    scaleTargetRef: spec['scaleTargetRef'] ?? {},
    maxReplicas: spec['maxReplicas'] ?? 0,
  };
  if (spec['minReplicas'] !== undefined) v1Spec['minReplicas'] = spec['minReplicas'];
  if (cpu !== undefined)
    v1Spec['targetCPUUtilizationPercentage'] =
      objectOf(objectOf(objectOf(cpu)['resource'])['target'])['averageUtilization'] ?? null;
  const v1Status: JsonObject = {};
  for (const key of ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas'])
    if (status[key] !== undefined) v1Status[key] = status[key];
  const currentUtilization = objectOf(objectOf(objectOf(currentCpu)['resource'])['current'])[
    'averageUtilization'
  ];
  if (currentUtilization !== undefined)
    v1Status['currentCPUUtilizationPercentage'] = currentUtilization;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: v1Spec,
    status: v1Status,
  };
}

/** autoscaling/v1 → autoscaling/v2 (stored): the CPU target becomes a metric (80% when unset). */
function hpaToStorage(v1: JsonObject): JsonObject {
  const metadata = structuredClone(objectOf(v1['metadata']));
  const annotations = { ...objectOf(metadata['annotations']) };
  const spec = objectOf(v1['spec']);
  const status = objectOf(v1['status']);
  const kept = annotationJson(annotations, hpaV1Annotations.metrics);
  const behavior = annotationJson(annotations, hpaV1Annotations.behavior);
  const conditions = annotationJson(annotations, hpaV1Annotations.conditions);
  for (const key of Object.values(hpaV1Annotations)) delete annotations[key];
  if (Object.keys(annotations).length > 0) metadata['annotations'] = annotations;
  else delete metadata['annotations'];
  const target = spec['targetCPUUtilizationPercentage'];
  const metrics: JsonValue[] = [
    ...(typeof target === 'number' ? [cpuMetric(target)] : []),
    ...(Array.isArray(kept) ? kept : []),
  ];
  const v2Spec: JsonObject = {
    scaleTargetRef: spec['scaleTargetRef'] ?? {},
    maxReplicas: spec['maxReplicas'] ?? 0,
    // kube defaults the stored v2 object on read: no metric means 80% average CPU.
    metrics: metrics.length > 0 ? metrics : [cpuMetric(80)],
  };
  if (spec['minReplicas'] !== undefined) v2Spec['minReplicas'] = spec['minReplicas'];
  if (behavior !== undefined) v2Spec['behavior'] = behavior;
  const v2Status: JsonObject = {};
  for (const key of ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas'])
    if (status[key] !== undefined) v2Status[key] = status[key];
  if (typeof status['currentCPUUtilizationPercentage'] === 'number')
    v2Status['currentMetrics'] = [
      {
        type: 'Resource',
        resource: {
          name: 'cpu',
          current: { averageUtilization: status['currentCPUUtilizationPercentage'] },
        },
      },
    ];
  if (Array.isArray(conditions)) v2Status['conditions'] = conditions;
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: v2Spec,
    ...(v1['status'] === undefined ? {} : { status: v2Status }),
  };
}

/** Fields renamed between core/v1 Events (stored) and events.k8s.io/v1 Events. */
const eventRenames: readonly (readonly [core: string, events: string])[] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['reportingComponent', 'reportingController'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
];

const eventShared = ['metadata', 'eventTime', 'series', 'action', 'reason', 'related', 'type'];

function renameEvent(object: JsonObject, apiVersion: string, from: 0 | 1, to: 0 | 1): JsonObject {
  const out: JsonObject = { apiVersion, kind: 'Event' };
  for (const key of [...eventShared, 'reportingInstance'])
    if (object[key] !== undefined) out[key] = object[key] ?? null;
  for (const names of eventRenames) {
    const value = object[names[from]];
    if (value !== undefined && value !== '') out[names[to]] = value;
  }
  return out;
}

/** Field selectors of events.k8s.io/v1 Events, as the core Event fields they read. */
export const eventFieldLabels: Readonly<Record<string, string>> = {
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  reportingController: 'reportingComponent',
  reason: 'reason',
  type: 'type',
};

export const hpaV1Conversion: VersionConversion = {
  storage: { group: 'autoscaling', resource: 'horizontalpodautoscalers', version: 'v2' },
  fromStorage: hpaFromStorage,
  toStorage: hpaToStorage,
};

export const eventsV1Conversion: VersionConversion = {
  storage: { group: '', resource: 'events', version: 'v1' },
  fromStorage: (stored) => renameEvent(stored, 'events.k8s.io/v1', 0, 1),
  toStorage: (event) => renameEvent(event, 'v1', 1, 0),
  fieldLabels: eventFieldLabels,
};
