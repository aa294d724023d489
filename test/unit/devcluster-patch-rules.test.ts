import t from 'tap';
import type { ListRule, MergeRules } from '../../devcluster/patch/index.js';
import { builtinMergeRules, mergeRulesFromSchema } from '../../devcluster/patch/index.js';

function rule(rules: MergeRules, path: string): ListRule | undefined {
  return rules.lists.get(path);
}

const C = 'spec.template.spec.containers[]';

// Real patchMergeKey / listType / listMapKey tags of the Kubernetes API types.
const builtin: { kind: [string, string]; path: string; expected: ListRule }[] = [
  {
    kind: ['apps', 'Deployment'],
    path: 'spec.template.spec.containers',
    expected: { type: 'map', keys: ['name'] },
  },
  {
    kind: ['apps', 'Deployment'],
    path: 'spec.template.spec.initContainers',
    expected: { type: 'map', keys: ['name'] },
  },
  { kind: ['apps', 'Deployment'], path: `${C}.env`, expected: { type: 'map', keys: ['name'] } },
  {
    kind: ['apps', 'Deployment'],
    path: `${C}.ports`,
    expected: {
      type: 'map',
      keys: ['containerPort', 'protocol'],
      keyDefaults: { protocol: 'TCP' },
    },
  },
  {
    kind: ['apps', 'Deployment'],
    path: `${C}.volumeMounts`,
    expected: { type: 'map', keys: ['mountPath'] },
  },
  {
    kind: ['apps', 'Deployment'],
    path: 'spec.template.spec.volumes',
    expected: { type: 'map', keys: ['name'] },
  },
  {
    kind: ['apps', 'Deployment'],
    path: 'spec.template.spec.imagePullSecrets',
    expected: { type: 'map', keys: ['name'] },
  },
  {
    kind: ['apps', 'Deployment'],
    path: 'spec.template.spec.hostAliases',
    expected: { type: 'map', keys: ['ip'] },
  },
  {
    kind: ['apps', 'Deployment'],
    path: 'spec.template.spec.tolerations',
    expected: { type: 'atomic' },
  },
  {
    kind: ['apps', 'Deployment'],
    path: 'status.conditions',
    expected: { type: 'map', keys: ['type'] },
  },
  {
    kind: ['apps', 'ReplicaSet'],
    path: 'spec.template.spec.containers',
    expected: { type: 'map', keys: ['name'] },
  },
  {
    kind: ['batch', 'CronJob'],
    path: 'spec.jobTemplate.spec.template.spec.containers',
    expected: { type: 'map', keys: ['name'] },
  },
  { kind: ['', 'Pod'], path: 'spec.containers[].env', expected: { type: 'map', keys: ['name'] } },
  { kind: ['', 'Pod'], path: 'status.conditions', expected: { type: 'map', keys: ['type'] } },
  { kind: ['', 'Pod'], path: 'metadata.finalizers', expected: { type: 'set' } },
  { kind: ['', 'Pod'], path: 'metadata.ownerReferences', expected: { type: 'map', keys: ['uid'] } },
  { kind: ['', 'Namespace'], path: 'spec.finalizers', expected: { type: 'atomic' } },
  { kind: ['', 'Namespace'], path: 'status.conditions', expected: { type: 'map', keys: ['type'] } },
  {
    kind: ['', 'Service'],
    path: 'spec.ports',
    expected: { type: 'map', keys: ['port', 'protocol'], keyDefaults: { protocol: 'TCP' } },
  },
  {
    kind: ['', 'ServiceAccount'],
    path: 'secrets',
    expected: { type: 'map', keys: ['name'], applyAtomic: true },
  },
  {
    kind: ['admissionregistration.k8s.io', 'ValidatingWebhookConfiguration'],
    path: 'webhooks',
    expected: { type: 'map', keys: ['name'] },
  },
  {
    kind: ['admissionregistration.k8s.io', 'MutatingWebhookConfiguration'],
    path: 'webhooks',
    expected: { type: 'map', keys: ['name'] },
  },
  {
    kind: ['rbac.authorization.k8s.io', 'ClusterRole'],
    path: 'rules',
    expected: { type: 'atomic' },
  },
  {
    kind: ['rbac.authorization.k8s.io', 'RoleBinding'],
    path: 'subjects',
    expected: { type: 'atomic' },
  },
  {
    kind: ['apiextensions.k8s.io', 'CustomResourceDefinition'],
    path: 'status.conditions',
    expected: { type: 'map', keys: ['type'] },
  },
];

for (const c of builtin) {
  void t.test(`merge rules - ${c.kind[0] || 'core'}/${c.kind[1]} ${c.path}`, (t) => {
    t.strictSame(rule(builtinMergeRules(c.kind[0], c.kind[1]), c.path), c.expected);
    t.end();
  });
}

const atomicMaps: [string, string, string][] = [
  ['apps', 'Deployment', 'spec.selector'],
  ['apps', 'Deployment', 'spec.template.spec.nodeSelector'],
  ['apps', 'Deployment', 'spec.template.spec.imagePullSecrets[]'],
  ['apps', 'Deployment', 'spec.template.spec.containers[].env[].valueFrom.secretKeyRef'],
  ['', 'Service', 'spec.selector'],
  ['', 'Pod', 'metadata.ownerReferences[]'],
];

for (const [group, kind, path] of atomicMaps) {
  void t.test(`merge rules - ${group || 'core'}/${kind} ${path} is an atomic map`, (t) => {
    t.ok(builtinMergeRules(group, kind).atomicMaps?.has(path));
    t.end();
  });
}

void t.test('merge rules - an unknown kind still has the metadata lists', (t) => {
  const rules = builtinMergeRules('example.com', 'Thing');
  t.strictSame(rule(rules, 'metadata.finalizers'), { type: 'set' });
  t.equal(rule(rules, 'spec.items'), undefined);
  t.end();
});

const schema = {
  type: 'object',
  properties: {
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port', 'protocol'],
          items: {
            type: 'object',
            properties: {
              port: { type: 'integer' },
              protocol: { type: 'string', default: 'TCP' },
              hosts: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            },
          },
        },
        tags: { type: 'array', items: { type: 'string' } },
        selector: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
        grid: {
          type: 'array',
          items: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        },
      },
    },
  },
};

const fromSchema: { path: string; expected: ListRule }[] = [
  {
    path: 'spec.ports',
    expected: { type: 'map', keys: ['port', 'protocol'], keyDefaults: { protocol: 'TCP' } },
  },
  { path: 'spec.ports[].hosts', expected: { type: 'set' } },
  { path: 'spec.tags', expected: { type: 'atomic' } },
  { path: 'spec.grid', expected: { type: 'atomic' } },
  { path: 'spec.grid[]', expected: { type: 'set' } },
  { path: 'metadata.finalizers', expected: { type: 'set' } },
];

for (const c of fromSchema) {
  void t.test(`merge rules - from a CRD schema: ${c.path}`, (t) => {
    t.strictSame(rule(mergeRulesFromSchema(schema), c.path), c.expected);
    t.end();
  });
}

void t.test(
  'merge rules - from a CRD schema: x-kubernetes-map-type atomic marks an atomic map',
  (t) => {
    t.ok(mergeRulesFromSchema(schema).atomicMaps?.has('spec.selector'));
    t.end();
  },
);
