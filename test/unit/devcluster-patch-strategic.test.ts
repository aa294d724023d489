import t from 'tap';
import { patchErrorOf } from '../harness/patch.js';
import type { JsonObject } from '../../shared/kube/json.js';
import type { PatchError } from '../../devcluster/patch/index.js';
import { applyStrategicMergePatch, builtinMergeRules } from '../../devcluster/patch/index.js';

const deploymentRules = builtinMergeRules('apps', 'Deployment');
const podRules = builtinMergeRules('', 'Pod');

interface Case {
  name: string;
  target: JsonObject;
  patch: JsonObject;
  expected: JsonObject;
}

const cases: Case[] = [
  {
    name: 'maps merge and null deletes a field',
    target: { metadata: { labels: { a: '1', b: '2' } } },
    patch: { metadata: { labels: { b: null, c: '3' } } },
    expected: { metadata: { labels: { a: '1', c: '3' } } },
  },
  {
    name: 'list items with a merge key merge by that key',
    target: {
      spec: {
        containers: [
          { name: 'a', image: 'a:1', imagePullPolicy: 'Always' },
          { name: 'b', image: 'b:1' },
        ],
      },
    },
    patch: { spec: { containers: [{ name: 'a', image: 'a:2' }] } },
    expected: {
      spec: {
        containers: [
          { name: 'a', image: 'a:2', imagePullPolicy: 'Always' },
          { name: 'b', image: 'b:1' },
        ],
      },
    },
  },
  {
    name: 'items with a new key are appended',
    target: { spec: { containers: [{ name: 'a', image: 'a:1' }] } },
    patch: { spec: { containers: [{ name: 'b', image: 'b:1' }] } },
    expected: {
      spec: {
        containers: [
          { name: 'a', image: 'a:1' },
          { name: 'b', image: 'b:1' },
        ],
      },
    },
  },
  {
    name: '$patch: delete in a list item removes the item',
    target: {
      spec: {
        volumes: [
          { name: 'a', emptyDir: {} },
          { name: 'b', emptyDir: {} },
        ],
      },
    },
    patch: { spec: { volumes: [{ name: 'a', $patch: 'delete' }] } },
    expected: { spec: { volumes: [{ name: 'b', emptyDir: {} }] } },
  },
  {
    name: 'a {$patch: replace} item replaces the whole list',
    target: {
      spec: {
        containers: [
          { name: 'a', image: 'a:1' },
          { name: 'b', image: 'b:1' },
        ],
      },
    },
    patch: { spec: { containers: [{ $patch: 'replace' }, { name: 'c', image: 'c:1' }] } },
    expected: { spec: { containers: [{ name: 'c', image: 'c:1' }] } },
  },
  {
    name: 'deletions apply before a whole-list replace and directive items are dropped',
    target: { spec: { containers: [{ name: 'a' }, { name: 'b' }] } },
    patch: {
      spec: { containers: [{ name: 'c' }, { name: 'a', $patch: 'delete' }, { $patch: 'replace' }] },
    },
    expected: { spec: { containers: [{ name: 'c' }] } },
  },
  {
    name: '$patch: replace in a map replaces the map',
    target: { spec: { nodeSelector: { a: '1', b: '2' } } },
    patch: { spec: { nodeSelector: { $patch: 'replace', c: '3' } } },
    expected: { spec: { nodeSelector: { c: '3' } } },
  },
  {
    name: '$patch: delete in a map empties the map',
    target: { spec: { nodeSelector: { a: '1' }, hostname: 'h' } },
    patch: { spec: { nodeSelector: { $patch: 'delete' } } },
    expected: { spec: { nodeSelector: {}, hostname: 'h' } },
  },
  {
    name: 'primitive lists with merge strategy merge as a set',
    target: { metadata: { finalizers: ['a', 'b'] } },
    patch: { metadata: { finalizers: ['b', 'c'] } },
    expected: { metadata: { finalizers: ['a', 'b', 'c'] } },
  },
  {
    name: '$deleteFromPrimitiveList removes values from a set',
    target: { metadata: { finalizers: ['a', 'b', 'c'] } },
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['b'] } },
    expected: { metadata: { finalizers: ['a', 'c'] } },
  },
  {
    name: 'lists without a merge strategy are replaced',
    target: { spec: { tolerations: [{ key: 'a', operator: 'Exists' }] } },
    patch: { spec: { tolerations: [{ key: 'b', operator: 'Exists' }] } },
    expected: { spec: { tolerations: [{ key: 'b', operator: 'Exists' }] } },
  },
  {
    name: 'container args are replaced',
    target: { spec: { containers: [{ name: 'a', args: ['x', 'y'] }] } },
    patch: { spec: { containers: [{ name: 'a', args: ['z'] }] } },
    expected: { spec: { containers: [{ name: 'a', args: ['z'] }] } },
  },
  {
    name: '$retainKeys drops fields of the original it does not list',
    target: { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
    patch: { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null } } },
    expected: { spec: { strategy: { type: 'Recreate' } } },
  },
  {
    name: '$retainKeys in a list item switches a volume source',
    target: { spec: { volumes: [{ name: 'v', emptyDir: {} }] } },
    patch: {
      spec: {
        volumes: [
          {
            $retainKeys: ['configMap', 'name'],
            name: 'v',
            configMap: { name: 'cm' },
            emptyDir: null,
          },
        ],
      },
    },
    expected: { spec: { volumes: [{ name: 'v', configMap: { name: 'cm' } }] } },
  },
  {
    name: '$setElementOrder orders merged items',
    target: { spec: { containers: [{ name: 'a' }, { name: 'b' }] } },
    patch: {
      spec: {
        '$setElementOrder/containers': [{ name: 'b' }, { name: 'c' }, { name: 'a' }],
        containers: [{ name: 'c' }],
      },
    },
    expected: { spec: { containers: [{ name: 'b' }, { name: 'c' }, { name: 'a' }] } },
  },
  {
    // Server-only items go before the first ordered item that followed them on the server.
    name: '$setElementOrder keeps server-only items before the items that followed them',
    target: {
      spec: { containers: [{ name: 'a' }, { name: 'injected' }, { name: 'b' }, { name: 'tail' }] },
    },
    patch: { spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }] } },
    expected: {
      spec: { containers: [{ name: 'a' }, { name: 'injected' }, { name: 'b' }, { name: 'tail' }] },
    },
  },
  {
    name: '$setElementOrder puts server-only items before a later item moved ahead',
    target: { spec: { containers: [{ name: 'a' }, { name: 'injected' }, { name: 'b' }] } },
    patch: { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } },
    expected: { spec: { containers: [{ name: 'injected' }, { name: 'b' }, { name: 'a' }] } },
  },
  {
    name: '$setElementOrder puts a new item ahead of server-only items it is not compared with',
    target: { spec: { containers: [{ name: 'x' }, { name: 'a' }] } },
    patch: {
      spec: {
        '$setElementOrder/containers': [{ name: 'n' }, { name: 'a' }],
        containers: [{ name: 'n' }],
      },
    },
    expected: { spec: { containers: [{ name: 'n' }, { name: 'x' }, { name: 'a' }] } },
  },
  {
    name: '$setElementOrder orders a primitive set',
    target: { metadata: { finalizers: ['a', 'b'] } },
    patch: { metadata: { '$setElementOrder/finalizers': ['c', 'b', 'a'], finalizers: ['c'] } },
    expected: { metadata: { finalizers: ['c', 'b', 'a'] } },
  },
  {
    name: 'directives inside a new field are processed, not stored',
    target: { spec: {} },
    patch: {
      spec: {
        containers: [
          { name: 'a', env: [{ name: 'X', value: '1' }], '$setElementOrder/env': [{ name: 'X' }] },
        ],
      },
    },
    expected: { spec: { containers: [{ name: 'a', env: [{ name: 'X', value: '1' }] }] } },
  },
];

for (const c of cases) {
  void t.test(`strategic merge patch - ${c.name}`, (t) => {
    t.strictSame(applyStrategicMergePatch(c.target, c.patch, podRules), c.expected);
    t.end();
  });
}

void t.test('strategic merge patch - the target is left untouched', (t) => {
  const target = { metadata: { labels: { a: '1' } } };
  applyStrategicMergePatch(target, { metadata: { labels: { a: null } } }, podRules);
  t.strictSame(target, { metadata: { labels: { a: '1' } } });
  t.end();
});

const errors: { name: string; patch: JsonObject; reason: PatchError['reason']; message: string }[] =
  [
    {
      name: 'an item without the merge key is a bad request',
      patch: { spec: { containers: [{ image: 'x' }] } },
      reason: 'BadRequest',
      message: 'map: map[image:x] does not contain declared merge key: name',
    },
    {
      name: 'an unknown $patch directive is a bad request',
      patch: { spec: { $patch: 'frobnicate' } },
      reason: 'BadRequest',
      message: 'unknown patch type: frobnicate in map: map[$patch:frobnicate]',
    },
    {
      name: 'a list item asking to merge the list is a bad request',
      patch: { spec: { containers: [{ $patch: 'merge' }] } },
      reason: 'BadRequest',
      message: 'merging lists cannot yet be specified in the patch',
    },
    {
      name: 'fields outside $retainKeys are invalid',
      patch: { spec: { $retainKeys: ['a'], b: 1 } },
      reason: 'Invalid',
      message: "patch content doesn't match retainKeys list",
    },
    {
      name: 'a $deleteFromPrimitiveList that is not a list is a bad request',
      patch: { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
      reason: 'BadRequest',
      message: 'invalid patch format of primitive list',
    },
  ];

for (const c of errors) {
  void t.test(`strategic merge patch - ${c.name}`, (t) => {
    t.strictSame(
      patchErrorOf(() => applyStrategicMergePatch({ spec: {} }, c.patch, podRules)),
      { reason: c.reason, message: c.message },
    );
    t.end();
  });
}

// A Deployment as the API server stores it (defaults filled in) and the three-way patch
// `kubectl apply` computes when the manifest changes an env var, drops another, drops a port,
// adds a volume mount, swaps a volume and reorders containers.
function storedDeployment(): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', generation: 1 },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'app:1',
              imagePullPolicy: 'IfNotPresent',
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
              ports: [
                { containerPort: 8080, protocol: 'TCP' },
                { containerPort: 9090, protocol: 'TCP' },
              ],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
            { name: 'sidecar', image: 'side:1', imagePullPolicy: 'IfNotPresent' },
          ],
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'old', emptyDir: {} },
          ],
          restartPolicy: 'Always',
        },
      },
    },
  };
}

const kubectlPatch: JsonObject = {
  spec: {
    template: {
      spec: {
        '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }],
        '$setElementOrder/volumes': [{ name: 'data' }, { name: 'cache' }],
        containers: [
          {
            '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }],
            '$setElementOrder/ports': [{ containerPort: 8080 }],
            '$setElementOrder/volumeMounts': [{ mountPath: '/data' }, { mountPath: '/cache' }],
            name: 'app',
            image: 'app:2',
            env: [
              { name: 'C', value: '3' },
              { $patch: 'delete', name: 'B' },
            ],
            ports: [{ $patch: 'delete', containerPort: 9090 }],
            volumeMounts: [{ mountPath: '/cache', name: 'cache' }],
          },
        ],
        volumes: [
          { name: 'cache', emptyDir: {} },
          { $patch: 'delete', name: 'old' },
        ],
      },
    },
  },
};

void t.test(
  'strategic merge patch - kubectl three-way patch updates the changed container fields',
  (t) => {
    const out = applyStrategicMergePatch(storedDeployment(), kubectlPatch, deploymentRules) as {
      spec: { template: { spec: { containers: JsonObject[] } } };
    };
    const app = out.spec.template.spec.containers.find((c) => c.name === 'app');
    t.equal(app?.image, 'app:2');
    t.equal(app?.imagePullPolicy, 'IfNotPresent', 'server-filled defaults survive');
    t.end();
  },
);

void t.test(
  'strategic merge patch - kubectl three-way patch orders containers as the manifest does',
  (t) => {
    const out = applyStrategicMergePatch(storedDeployment(), kubectlPatch, deploymentRules) as {
      spec: { template: { spec: { containers: JsonObject[] } } };
    };
    t.strictSame(
      out.spec.template.spec.containers.map((c) => c.name),
      ['sidecar', 'app'],
    );
    t.end();
  },
);

void t.test(
  'strategic merge patch - kubectl three-way patch merges env, ports and volume mounts by key',
  (t) => {
    const out = applyStrategicMergePatch(storedDeployment(), kubectlPatch, deploymentRules) as {
      spec: { template: { spec: { containers: JsonObject[] } } };
    };
    const app = out.spec.template.spec.containers.find((c) => c.name === 'app');
    t.strictSame(app?.env, [
      { name: 'A', value: '1' },
      { name: 'C', value: '3' },
    ]);
    t.strictSame(app?.ports, [{ containerPort: 8080, protocol: 'TCP' }]);
    t.strictSame(app?.volumeMounts, [
      { name: 'data', mountPath: '/data' },
      { mountPath: '/cache', name: 'cache' },
    ]);
    t.end();
  },
);

void t.test('strategic merge patch - kubectl three-way patch swaps volumes by name', (t) => {
  const out = applyStrategicMergePatch(storedDeployment(), kubectlPatch, deploymentRules) as {
    spec: { template: { spec: { volumes: JsonObject[] } } };
  };
  t.strictSame(out.spec.template.spec.volumes, [
    { name: 'data', emptyDir: {} },
    { name: 'cache', emptyDir: {} },
  ]);
  t.end();
});

void t.test('strategic merge patch - kubectl scale patch changes replicas only', (t) => {
  const before = storedDeployment();
  const out = applyStrategicMergePatch(before, { spec: { replicas: 3 } }, deploymentRules);
  t.strictSame(out, { ...before, spec: { ...(before.spec as JsonObject), replicas: 3 } });
  t.end();
});
