// Kind-specific behaviour of built-in kinds on create and update: defaults, derived fields and
// the validation of ConfigMap and Secret sizes (the rest: validation/, as kube's registry
// strategies' Validate).
import type { StatusCause } from '../../shared/kube/status.js';
import { isJsonObject, type JsonObject } from '../../shared/kube/json.js';
import { defaultPodSpec, objectAt } from './pod-defaults.js';
import {
  defaultDeployment,
  defaultService,
  defaultTemplate,
  initIPFamilyFields,
} from './builtin-defaults.js';
import { batchStrategies } from './strategies-batch.js';
import type { Strategy, StrategyContext } from './types.js';

export type { Strategy, StrategyContext } from './types.js';

/** The server's strategy context: cluster IPs handed out in order from 10.96.0.11. */
export function strategyContext(): StrategyContext {
  let nextServiceIp = 10;
  return {
    allocateClusterIP: () => {
      const n = nextServiceIp++;
      return `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
    },
  };
}

const strategies: Record<string, Strategy> = {
  ...batchStrategies,
  '/Namespace': {
    prepareCreate(object) {
      const spec = objectAt(object, 'spec');
      spec['finalizers'] ??= ['kubernetes'];
      object['status'] = { phase: 'Active' };
      const labels = objectAt(objectAt(object, 'metadata'), 'labels');
      labels['kubernetes.io/metadata.name'] = (object['metadata'] as JsonObject)['name'] ?? '';
    },
    prepareUpdate(object, old) {
      // spec.finalizers only changes through /finalize, as in kube.
      const oldSpec = isJsonObject(old['spec']) ? old['spec'] : {};
      const spec = objectAt(object, 'spec');
      if (oldSpec['finalizers'] !== undefined) spec['finalizers'] = oldSpec['finalizers'];
      else delete spec['finalizers'];
      const labels = objectAt(objectAt(object, 'metadata'), 'labels');
      labels['kubernetes.io/metadata.name'] = (object['metadata'] as JsonObject)['name'] ?? '';
    },
  },
  '/Service': {
    defaults: defaultService,
    prepareCreate(object, context) {
      const spec = objectAt(object, 'spec');
      if (spec['type'] !== 'ExternalName' && (spec['clusterIP'] ?? '') === '') {
        spec['clusterIP'] = context.allocateClusterIP();
        spec['clusterIPs'] = [spec['clusterIP']];
      }
      initIPFamilyFields(spec);
      object['status'] = { loadBalancer: {} };
    },
    prepareUpdate(object, old) {
      const spec = objectAt(object, 'spec');
      const oldSpec = isJsonObject(old['spec']) ? old['spec'] : {};
      // An ExternalName Service has no cluster IP (kube's strategy drops it on that change).
      const keep = spec['type'] !== 'ExternalName';
      if (keep && (spec['clusterIP'] ?? '') === '' && oldSpec['clusterIP'] !== undefined) {
        spec['clusterIP'] = oldSpec['clusterIP'];
        if (oldSpec['clusterIPs'] !== undefined) spec['clusterIPs'] = oldSpec['clusterIPs'];
      }
      initIPFamilyFields(spec);
    },
  },
  '/ConfigMap': {
    validate: (object) => dataSizeCauses(object, ['data', 'binaryData']),
  },
  '/Secret': {
    prepareCreate(object) {
      secretStringData(object);
    },
    prepareUpdate(object) {
      secretStringData(object);
    },
    validate: (object) => dataSizeCauses(object, ['data']),
  },
  '/Pod': {
    defaults(object) {
      if (isJsonObject(object['spec'])) defaultPodSpec(object['spec']);
    },
    prepareCreate(object) {
      object['status'] = { phase: 'Pending', qosClass: 'BestEffort' };
    },
  },
  'apps/Deployment': {
    defaults: defaultDeployment,
  },
  'apps/ReplicaSet': {
    defaults(object) {
      const spec = objectAt(object, 'spec');
      spec['replicas'] ??= 1;
      defaultTemplate(spec);
    },
  },
  'rbac.authorization.k8s.io/RoleBinding': { defaults: defaultSubjects },
  'rbac.authorization.k8s.io/ClusterRoleBinding': { defaults: defaultSubjects },
};

/** SetDefaults_Subject (rbac/v1): User and Group subjects get the RBAC group. */
function defaultSubjects(object: JsonObject): void {
  const subjects = object['subjects'];
  for (const subject of Array.isArray(subjects) ? subjects : []) {
    if (!isJsonObject(subject) || (subject['apiGroup'] ?? '') !== '') continue;
    if (subject['kind'] === 'User' || subject['kind'] === 'Group')
      subject['apiGroup'] = 'rbac.authorization.k8s.io';
  }
}

/** Largest total size of a ConfigMap's or Secret's data (kube's MaxSecretSize / configmap limit). */
export const maxDataBytes = 1024 * 1024;

function dataSizeCauses(object: JsonObject, fields: readonly string[]): StatusCause[] {
  let total = 0;
  for (const field of fields) {
    const data = object[field];
    if (!isJsonObject(data)) continue;
    for (const [key, value] of Object.entries(data)) {
      const text = typeof value === 'string' ? value : '';
      // binaryData and Secret data are base64 on the wire; the limit counts decoded bytes.
      const size =
        field === 'data' && object['kind'] !== 'Secret'
          ? Buffer.byteLength(text)
          : Buffer.from(text, 'base64').length;
      total += key.length + size;
    }
  }
  if (total <= maxDataBytes) return [];
  return [
    {
      type: 'FieldValueTooLong',
      field: '[]',
      message: `Too long: must have at most ${maxDataBytes} bytes`,
    },
  ];
}

function secretStringData(object: JsonObject): void {
  const stringData = object['stringData'];
  if (isJsonObject(stringData)) {
    const data = objectAt(object, 'data');
    for (const [key, value] of Object.entries(stringData)) {
      data[key] = Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString(
        'base64',
      );
    }
    delete object['stringData'];
  }
  object['type'] ??= 'Opaque';
}

/** Applies kube's defaulting of a built-in kind to a body being created or replaced. */
export function defaultObject(group: string, kind: string, object: JsonObject): void {
  strategyOf(group, kind).defaults?.(object);
}

/** The strategy of a built-in kind ("" group for core), or an empty one. */
export function strategyOf(group: string, kind: string): Strategy {
  return strategies[`${group}/${kind}`] ?? {};
}
