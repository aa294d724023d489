// Merge rules: how each list (and atomic map) of a kind merges, for the built-in kinds the
// devcluster serves (from the Kubernetes API types' patchMergeKey / listType / structType
// tags) and for custom resources (from x-kubernetes-list-type / map-type in their schema).
import type { JsonObject, JsonPrimitive } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import type { ListRule, MergeRules } from './types.js';

/** Rule path of a map field: "spec" + "replicas" → "spec.replicas". */
export function fieldRulePath(parent: string, field: string): string {
  return parent === '' ? field : `${parent}.${field}`;
}

/** Rule path of the items of a list: "spec.containers" → "spec.containers[]". */
export function itemRulePath(list: string): string {
  return `${list}[]`;
}

/** How a list merges under strategic merge patch: by key, as a set, or replaced. */
export function patchListRule(rules: MergeRules, path: string): ListRule {
  return rules.lists.get(path) ?? ATOMIC;
}

/** How a list merges under server-side apply (where some SMP-merged lists are atomic). */
export function applyListRule(rules: MergeRules, path: string): ListRule {
  const rule = rules.lists.get(path);
  if (!rule || (rule.type !== 'atomic' && rule.applyAtomic === true)) return ATOMIC;
  return rule;
}

const ATOMIC: ListRule = { type: 'atomic' };

type RuleTable = Record<string, ListRule>;

const byName = (): ListRule => ({ type: 'map', keys: ['name'] });
const byType = (): ListRule => ({ type: 'map', keys: ['type'] });
const atomic = (): ListRule => ({ type: 'atomic' });

function metadataLists(prefix: string): RuleTable {
  return {
    [fieldRulePath(prefix, 'finalizers')]: { type: 'set' },
    [fieldRulePath(prefix, 'ownerReferences')]: { type: 'map', keys: ['uid'] },
    [fieldRulePath(prefix, 'managedFields')]: atomic(),
  };
}

function containerLists(container: string): RuleTable {
  return {
    [`${container}.ports`]: {
      type: 'map',
      keys: ['containerPort', 'protocol'],
      keyDefaults: { protocol: 'TCP' },
    },
    [`${container}.env`]: byName(),
    [`${container}.envFrom`]: atomic(),
    [`${container}.volumeMounts`]: { type: 'map', keys: ['mountPath'] },
    [`${container}.volumeDevices`]: { type: 'map', keys: ['devicePath'] },
    [`${container}.resizePolicy`]: atomic(),
    [`${container}.resources.claims`]: byName(),
    [`${container}.command`]: atomic(),
    [`${container}.args`]: atomic(),
  };
}

function containerAtomicMaps(container: string): string[] {
  const source = `${container}.env[].valueFrom`;
  return [
    `${source}.fieldRef`,
    `${source}.resourceFieldRef`,
    `${source}.configMapKeyRef`,
    `${source}.secretKeyRef`,
  ];
}

function podSpecLists(spec: string): RuleTable {
  const table: RuleTable = {
    [`${spec}.containers`]: byName(),
    [`${spec}.initContainers`]: byName(),
    [`${spec}.ephemeralContainers`]: byName(),
    [`${spec}.volumes`]: byName(),
    [`${spec}.imagePullSecrets`]: byName(),
    [`${spec}.hostAliases`]: { type: 'map', keys: ['ip'] },
    [`${spec}.tolerations`]: atomic(),
    [`${spec}.readinessGates`]: atomic(),
    [`${spec}.topologySpreadConstraints`]: {
      type: 'map',
      keys: ['topologyKey', 'whenUnsatisfiable'],
    },
    [`${spec}.schedulingGates`]: byName(),
    [`${spec}.resourceClaims`]: byName(),
  };
  for (const kind of ['containers', 'initContainers', 'ephemeralContainers']) {
    Object.assign(table, containerLists(itemRulePath(`${spec}.${kind}`)));
  }
  return table;
}

function podSpecAtomicMaps(spec: string): string[] {
  const maps = [itemRulePath(`${spec}.imagePullSecrets`), `${spec}.nodeSelector`];
  for (const kind of ['containers', 'initContainers', 'ephemeralContainers']) {
    maps.push(...containerAtomicMaps(itemRulePath(`${spec}.${kind}`)));
  }
  return maps;
}

interface KindRules {
  lists: RuleTable;
  atomicMaps?: string[];
  /** Fields a Go object of the kind always serializes (non-pointer structs, lists without omitempty). */
  structs?: string[];
}

// Kinds whose pods come from a template at `template` (e.g. "spec.template").
function workloadRules(template: string, extraStructs: readonly string[]): KindRules {
  const podSpec = `${template}.spec`;
  return {
    lists: {
      ...podSpecLists(podSpec),
      ...metadataLists(`${template}.metadata`),
      'status.conditions': byType(),
    },
    atomicMaps: [...podSpecAtomicMaps(podSpec), 'spec.selector'],
    structs: [
      'spec',
      'status',
      template,
      `${template}.metadata`,
      podSpec,
      `${podSpec}.containers`,
      ...extraStructs,
    ],
  };
}

const BUILTIN: Record<string, KindRules> = {
  '/Pod': {
    lists: { ...podSpecLists('spec'), 'status.conditions': byType() },
    atomicMaps: podSpecAtomicMaps('spec'),
    structs: ['spec', 'status', 'spec.containers'],
  },
  'apps/Deployment': workloadRules('spec.template', ['spec.strategy']),
  'apps/ReplicaSet': workloadRules('spec.template', []),
  'apps/StatefulSet': workloadRules('spec.template', ['spec.updateStrategy']),
  'apps/DaemonSet': workloadRules('spec.template', ['spec.updateStrategy']),
  'batch/Job': workloadRules('spec.template', []),
  'batch/CronJob': workloadRules('spec.jobTemplate.spec.template', [
    'spec.jobTemplate',
    'spec.jobTemplate.spec',
  ]),
  '/Namespace': {
    lists: { 'spec.finalizers': atomic(), 'status.conditions': byType() },
    structs: ['spec', 'status'],
  },
  '/Service': {
    lists: {
      'spec.ports': { type: 'map', keys: ['port', 'protocol'], keyDefaults: { protocol: 'TCP' } },
      'spec.clusterIPs': atomic(),
      'spec.externalIPs': atomic(),
      'spec.ipFamilies': atomic(),
      'status.conditions': byType(),
    },
    atomicMaps: ['spec.selector'],
    structs: ['spec', 'status'],
  },
  '/ServiceAccount': {
    // patchMergeKey=name without listType: merged by SMP, atomic for server-side apply.
    lists: {
      secrets: { type: 'map', keys: ['name'], applyAtomic: true },
      imagePullSecrets: atomic(),
    },
  },
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': { lists: { webhooks: byName() } },
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': { lists: { webhooks: byName() } },
  'rbac.authorization.k8s.io/Role': { lists: { rules: atomic() } },
  'rbac.authorization.k8s.io/ClusterRole': {
    lists: { rules: atomic(), 'aggregationRule.clusterRoleSelectors': atomic() },
  },
  'rbac.authorization.k8s.io/RoleBinding': { lists: { subjects: atomic() } },
  'rbac.authorization.k8s.io/ClusterRoleBinding': { lists: { subjects: atomic() } },
  'apiextensions.k8s.io/CustomResourceDefinition': {
    lists: {
      'spec.versions': atomic(),
      'status.conditions': byType(),
      'status.storedVersions': atomic(),
    },
    structs: ['spec', 'status'],
  },
  'apiregistration.k8s.io/APIService': {
    lists: { 'status.conditions': byType() },
    structs: ['spec', 'status'],
  },
};

/** Merge rules of the built-in kinds the devcluster serves, keyed by "group/kind" ("/Pod" for core). */
export function builtinMergeRules(group: string, kind: string): MergeRules {
  const known = BUILTIN[`${group}/${kind}`];
  const lists = new Map<string, ListRule>(
    Object.entries({ ...metadataLists('metadata'), ...known?.lists }),
  );
  return {
    lists,
    atomicMaps: new Set(['metadata.ownerReferences[]', ...(known?.atomicMaps ?? [])]),
    structs: new Set(known?.structs ?? []),
  };
}

/** Merge rules derived from a CRD version's openAPIV3Schema (x-kubernetes-list-type / list-map-keys). */
export function mergeRulesFromSchema(schema: JsonObject): MergeRules {
  const lists = new Map<string, ListRule>(Object.entries(metadataLists('metadata')));
  const atomicMaps = new Set<string>(['metadata.ownerReferences[]']);
  walkSchema(schema, '', lists, atomicMaps);
  return { lists, atomicMaps, structs: new Set() };
}

function walkSchema(
  schema: JsonObject,
  path: string,
  lists: Map<string, ListRule>,
  atomicMaps: Set<string>,
): void {
  // The object's metadata is ObjectMeta whatever the schema says.
  if (path === 'metadata') return;
  if (schema['x-kubernetes-map-type'] === 'atomic' && path !== '') atomicMaps.add(path);
  const properties = schema.properties;
  if (isJsonObject(properties)) {
    for (const [name, child] of Object.entries(properties)) {
      if (isJsonObject(child)) walkSchema(child, fieldRulePath(path, name), lists, atomicMaps);
    }
  }
  const items = schema.items;
  if (schema.type === 'array' || isJsonObject(items)) {
    lists.set(path, listRuleOf(schema, isJsonObject(items) ? items : undefined));
    if (isJsonObject(items)) walkSchema(items, itemRulePath(path), lists, atomicMaps);
  }
}

function listRuleOf(schema: JsonObject, items: JsonObject | undefined): ListRule {
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set') return { type: 'set' };
  if (listType !== 'map') return { type: 'atomic' };
  const rawKeys = schema['x-kubernetes-list-map-keys'];
  const keys = Array.isArray(rawKeys)
    ? rawKeys.filter((k): k is string => typeof k === 'string')
    : [];
  // Key fields with a schema default stand in for a missing key when items are identified.
  const keyDefaults: Record<string, JsonPrimitive> = {};
  const itemProperties = items?.properties;
  for (const key of keys) {
    const property = isJsonObject(itemProperties) ? itemProperties[key] : undefined;
    const fallback = isJsonObject(property) ? property.default : undefined;
    if (fallback !== undefined && (fallback === null || typeof fallback !== 'object'))
      keyDefaults[key] = fallback;
  }
  return Object.keys(keyDefaults).length > 0
    ? { type: 'map', keys, keyDefaults }
    : { type: 'map', keys };
}
