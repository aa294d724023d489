// Kind-specific behaviour of built-in kinds on create and update: defaults, derived fields and
// the light validation OLM relies on (as kube's registry strategies do, much reduced).
import type { StatusCause } from '../../shared/kube/status.js';
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';
import { defaultPodSpec, objectAt, required, validateContainers } from './pod-defaults.js';
import { defaultDeployment, defaultService, defaultTemplate } from './builtin-defaults.js';
import { prepareService } from './service-allocation.js';
import { nodePortsOf } from './service-node-ports.js';
import { batchStrategies } from './strategies-batch.js';
import { clusterStrategies } from './strategies-cluster.js';
import type { IPFamily, Strategy, StrategyContext } from './types.js';

export type { Strategy, StrategyContext } from './types.js';
import {
  labelSelectorFromObject,
  matchesLabelSelector,
  SelectorError,
} from '../../shared/kube/selectors.js';

/** What the strategy context reads from the server. */
export interface StrategyContextSource {
  /** The stored Services. */
  services(): JsonObject[];
  /** The families of the service CIDRs, primary first. */
  serviceIPFamilies: readonly IPFamily[];
}

function serviceKey(service: JsonObject): string {
  const m = isJsonObject(service['metadata']) ? service['metadata'] : {};
  return `${text(m['namespace'] ?? '')}/${text(m['name'] ?? '')}`;
}

/**
 * The server's strategy context: IPv4 cluster IPs from 10.96.0.11 and IPv6 ones from
 * fd00:10:96::b on, each skipping IPs in use; node ports as the stored Services hold them.
 */
export function strategyContext(source: StrategyContextSource): StrategyContext {
  const next: Record<IPFamily, number> = { IPv4: 10, IPv6: 10 };
  const heldBy = (ip: string): string[] =>
    source
      .services()
      .filter((s) => {
        const ips = isJsonObject(s['spec']) ? s['spec']['clusterIPs'] : undefined;
        return Array.isArray(ips) && ips.includes(ip);
      })
      .map(serviceKey);
  const format = (family: IPFamily, n: number): string =>
    family === 'IPv4'
      ? `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`
      : `fd00:10:96::${(n + 1).toString(16)}`;
  return {
    serviceIPFamilies: source.serviceIPFamilies,
    clusterIPs: {
      next(family) {
        const held = new Set(
          source
            .services()
            .flatMap((s) => (isJsonObject(s['spec']) ? s['spec']['clusterIPs'] : undefined) ?? [])
            .map(String),
        );
        for (;;) {
          const ip = format(family, next[family]++);
          if (!held.has(ip)) return ip;
        }
      },
      inUse: (ip, namespace, name) => heldBy(ip).some((k) => k !== `${namespace}/${name}`),
    },
    nodePortsInUse(namespace, name) {
      const inUse = new Set<number>();
      for (const service of source.services()) {
        if (serviceKey(service) === `${namespace}/${name}`) continue;
        if (isJsonObject(service['spec']))
          for (const port of nodePortsOf(service['spec'])) inUse.add(port);
      }
      return inUse;
    },
  };
}

function labelsText(labels: JsonObject): string {
  return `map[${Object.keys(labels)
    .sort()
    .map((k) => `${k}:${text(labels[k])}`)
    .join(' ')}]`;
}

function validateWorkload(object: JsonObject): StatusCause[] {
  const spec = object['spec'];
  if (!isJsonObject(spec)) return [required('spec')];
  const causes: StatusCause[] = [];
  const selector = spec['selector'];
  const template = spec['template'];
  if (!isJsonObject(selector)) causes.push(required('spec.selector'));
  if (!isJsonObject(template)) {
    causes.push(required('spec.template'));
    return causes;
  }
  const templateMetadata = isJsonObject(template['metadata']) ? template['metadata'] : {};
  const labels = isJsonObject(templateMetadata['labels']) ? templateMetadata['labels'] : {};
  if (isJsonObject(selector)) {
    try {
      const requirements = labelSelectorFromObject(selector);
      if (requirements.length === 0) {
        causes.push({
          type: 'FieldValueInvalid',
          field: 'spec.selector',
          message: 'Invalid value: "null": empty selector is invalid for deployment',
        });
      } else if (!matchesLabelSelector(requirements, labels as Record<string, string>)) {
        causes.push({
          type: 'FieldValueInvalid',
          field: 'spec.template.metadata.labels',
          message: `Invalid value: ${JSON.stringify(labelsText(labels))}: \`selector\` does not match template \`labels\``,
        });
      }
    } catch (error) {
      if (!(error instanceof SelectorError)) throw error;
      causes.push({ type: 'FieldValueInvalid', field: 'spec.selector', message: error.message });
    }
  }
  causes.push(...validateContainers(template['spec'], 'spec.template.spec'));
  return causes;
}

const strategies: Record<string, Strategy> = {
  ...batchStrategies,
  ...clusterStrategies,
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
      object['status'] = { loadBalancer: {} };
      return prepareService(object, undefined, context);
    },
    prepareUpdate(object, old, context) {
      return prepareService(object, old, context);
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
    validate: (object) => validateContainers(object['spec'], 'spec'),
  },
  'apps/Deployment': {
    defaults: defaultDeployment,
    validate: validateWorkload,
  },
  'apps/ReplicaSet': {
    defaults(object) {
      const spec = objectAt(object, 'spec');
      spec['replicas'] ??= 1;
      defaultTemplate(spec);
    },
    validate: validateWorkload,
  },
};

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
