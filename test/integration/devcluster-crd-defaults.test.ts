// CRD structural defaults inside list items below x-kubernetes-preserve-unknown-fields (the shape
// of a CSV's embedded DeploymentSpec), applied by every kind of write as kube-apiserver does:
// create, dry-run create, update, merge patch, JSON patch and server-side apply.
import t from 'tap';
import { rawRequest, startCluster, type ClusterFixture } from '../harness/devcluster.js';

let fixture: ClusterFixture;
t.before(async () => {
  fixture = await startCluster();
});
t.teardown(() => fixture.close());

type Json = Record<string, unknown>;

async function request(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: Json }> {
  const response = await rawRequest(
    fixture,
    method,
    path,
    body === undefined ? undefined : JSON.stringify(body),
    { 'content-type': contentType },
  );
  return { status: response.status, body: JSON.parse(response.body) as Json };
}

const portsNode = {
  type: 'array',
  items: {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
    properties: { protocol: { type: 'string', default: 'TCP' } },
  },
};

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.example.olmq.io' },
  spec: {
    group: 'example.olmq.io',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-preserve-unknown-fields': true,
                properties: {
                  containers: {
                    type: 'array',
                    items: {
                      type: 'object',
                      'x-kubernetes-preserve-unknown-fields': true,
                      properties: { ports: portsNode },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const gadgets = '/apis/example.olmq.io/v1/namespaces/default/gadgets';

const gadget = (name: string, ports: Json[]) => ({
  apiVersion: 'example.olmq.io/v1',
  kind: 'Gadget',
  metadata: { name },
  spec: { replicas: 2, containers: [{ name: 'c', image: 'i', ports }] },
});

const portsIn = (object: Json): unknown =>
  ((object['spec'] as { containers: { ports: unknown }[] }).containers[0] ?? { ports: undefined })
    .ports;

t.test('crd defaults - the CRD is established', async (t) => {
  const created = await request(
    'POST',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    crd,
  );
  t.equal(created.status, 201);
});

t.test('crd defaults - create defaults list items and keeps unknown fields', async (t) => {
  const created = await request('POST', gadgets, gadget('a', [{ containerPort: 80 }]));
  t.equal(created.status, 201);
  t.same(portsIn(created.body), [{ containerPort: 80, protocol: 'TCP' }]);
  t.equal((created.body['spec'] as Json)['replicas'], 2, 'unknown fields are kept');
  const read = await request('GET', `${gadgets}/a`);
  t.same(portsIn(read.body), [{ containerPort: 80, protocol: 'TCP' }], 'stored defaulted');
});

t.test('crd defaults - a dry-run create answers the defaulted object', async (t) => {
  const dry = await request('POST', `${gadgets}?dryRun=All`, gadget('dry', [{ containerPort: 1 }]));
  t.equal(dry.status, 201);
  t.same(portsIn(dry.body), [{ containerPort: 1, protocol: 'TCP' }]);
  t.equal((await request('GET', `${gadgets}/dry`)).status, 404);
});

t.test('crd defaults - update, merge patch and JSON patch default the new items', async (t) => {
  const current = (await request('GET', `${gadgets}/a`)).body;
  const updated = await request('PUT', `${gadgets}/a`, {
    ...current,
    spec: {
      containers: [
        { name: 'c', ports: [{ containerPort: 81 }, { containerPort: 82, protocol: 'UDP' }] },
      ],
    },
  });
  t.equal(updated.status, 200);
  t.same(portsIn(updated.body), [
    { containerPort: 81, protocol: 'TCP' },
    { containerPort: 82, protocol: 'UDP' },
  ]);

  const merged = await request(
    'PATCH',
    `${gadgets}/a`,
    { spec: { containers: [{ name: 'c', ports: [{ containerPort: 83 }] }] } },
    'application/merge-patch+json',
  );
  t.equal(merged.status, 200);
  t.same(portsIn(merged.body), [{ containerPort: 83, protocol: 'TCP' }]);

  const removed = await request(
    'PATCH',
    `${gadgets}/a`,
    [{ op: 'remove', path: '/spec/containers/0/ports/0/protocol' }],
    'application/json-patch+json',
  );
  t.equal(removed.status, 200);
  t.same(
    portsIn(removed.body),
    [{ containerPort: 83, protocol: 'TCP' }],
    'a removed default returns',
  );
});

t.test('crd defaults - server-side apply defaults the applied items', async (t) => {
  const applied = await request(
    'PATCH',
    `${gadgets}/b?fieldManager=test`,
    gadget('b', [{ containerPort: 90 }]),
    'application/apply-patch+yaml',
  );
  t.equal(applied.status, 201);
  t.same(portsIn(applied.body), [{ containerPort: 90, protocol: 'TCP' }]);
  const again = await request(
    'PATCH',
    `${gadgets}/b?fieldManager=test`,
    gadget('b', [{ containerPort: 90 }]),
    'application/apply-patch+yaml',
  );
  t.equal(again.status, 200);
  t.equal(
    (again.body['metadata'] as Json)['resourceVersion'],
    (applied.body['metadata'] as Json)['resourceVersion'],
    'the same apply again writes nothing',
  );
});

t.test(
  'crd defaults - objects stored before their CRD gained a default read with it',
  async (t) => {
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    // An object whose items are stored without the protocol: written while the CRD had no default.
    const current = (await request('GET', crdPath)).body;
    const withoutDefault = structuredClone(current) as typeof crd;
    const version = withoutDefault.spec.versions[0];
    if (version === undefined) throw new Error('no version');
    version.schema.openAPIV3Schema.properties.spec.properties.containers.items.properties.ports.items.properties.protocol =
      { type: 'string' } as typeof portsNode.items.properties.protocol;
    t.equal((await request('PUT', crdPath, withoutDefault)).status, 200);
    const old = await request('POST', gadgets, gadget('old', [{ containerPort: 70 }]));
    t.same(portsIn(old.body), [{ containerPort: 70 }], 'stored without a protocol');
    const storedRv = (old.body['metadata'] as Json)['resourceVersion'];

    const restored = (await request('GET', crdPath)).body;
    t.equal((await request('PUT', crdPath, { ...restored, spec: crd.spec })).status, 200);

    const read = await request('GET', `${gadgets}/old`);
    t.same(portsIn(read.body), [{ containerPort: 70, protocol: 'TCP' }], 'GET defaults');
    t.equal((read.body['metadata'] as Json)['resourceVersion'], storedRv, 'nothing is written');
    const list = await request('GET', gadgets);
    const listed = (list.body['items'] as Json[]).find(
      (item) => (item['metadata'] as Json)['name'] === 'old',
    );
    t.same(listed && portsIn(listed), [{ containerPort: 70, protocol: 'TCP' }], 'LIST defaults');
    const watched = await rawRequest(
      fixture,
      'GET',
      `${gadgets}?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dold`,
    );
    const event = JSON.parse(watched.body.split('\n')[0] ?? '{}') as { object: Json };
    t.same(portsIn(event.object), [{ containerPort: 70, protocol: 'TCP' }], 'WATCH defaults');
  },
);
