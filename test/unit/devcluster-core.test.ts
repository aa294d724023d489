import t from 'tap';
import { ApiCore, systemWrite } from '../../devcluster/api/core.js';
import { ApiError } from '../../devcluster/api/errors.js';
import type { JsonObject } from '../../shared/kube/json.js';
import { builtinResourceTypes } from '../../devcluster/resources/builtin.js';
import { ResourceRegistry } from '../../devcluster/resources/registry.js';
import { ObjectStore } from '../../devcluster/storage/store.js';

function setup() {
  const core = new ApiCore({
    store: new ObjectStore(),
    registry: new ResourceRegistry(builtinResourceTypes()),
  });
  core.create(core.typeOf('', 'namespaces'), '', { metadata: { name: 'default' } }, systemWrite());
  return core;
}

const meta = (o: JsonObject) => o['metadata'] as Record<string, unknown>;
const deployment = (name: string): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    },
  },
});

function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('no error thrown');
}

void t.test('core - create assigns uid, creationTimestamp and generation 1', (t) => {
  const core = setup();
  const created = core.create(
    core.typeOf('apps', 'deployments'),
    'default',
    deployment('d'),
    systemWrite(),
  );
  t.match(meta(created), {
    uid: String,
    creationTimestamp: String,
    generation: 1,
    resourceVersion: String,
  });
  t.end();
});

void t.test('core - generateName produces a name with a random suffix', (t) => {
  const core = setup();
  const created = core.create(
    core.typeOf('', 'configmaps'),
    'default',
    { metadata: { generateName: 'gen-' } },
    systemWrite(),
  );
  t.match(String(meta(created)['name']), /^gen-[a-z0-9]{5}$/);
  t.end();
});

void t.test('core - generation is bumped by spec changes only', (t) => {
  const core = setup();
  const type = core.typeOf('apps', 'deployments');
  const created = core.create(type, 'default', deployment('d'), systemWrite());
  const labelled = core.update(
    type,
    'default',
    'd',
    {
      ...structuredClone(created),
      metadata: { ...meta(created), labels: { a: 'b' } },
    },
    systemWrite(),
  );
  t.equal(meta(labelled)['generation'], 1);
  const scaled = structuredClone(labelled);
  (scaled['spec'] as JsonObject)['replicas'] = 3;
  t.equal(meta(core.update(type, 'default', 'd', scaled, systemWrite()))['generation'], 2);
  t.end();
});

void t.test('core - the main resource ignores status and /status ignores the rest', (t) => {
  const core = setup();
  const type = core.typeOf('apps', 'deployments');
  const created = core.create(type, 'default', deployment('d'), systemWrite());
  const withStatus = { ...structuredClone(created), status: { replicas: 7 } };
  const main = core.update(type, 'default', 'd', withStatus, systemWrite());
  t.equal(main['status'], undefined);
  const viaStatus = {
    ...structuredClone(main),
    status: { replicas: 7 },
    spec: { replicas: 9 },
  } as JsonObject;
  const status = core.update(type, 'default', 'd', viaStatus, systemWrite(), 'status');
  t.same(status['status'], { replicas: 7 });
  t.not((status['spec'] as JsonObject)['replicas'], 9);
  t.end();
});

void t.test('core - a stale resourceVersion is a Conflict', (t) => {
  const core = setup();
  const type = core.typeOf('', 'configmaps');
  const created = core.create(type, 'default', { metadata: { name: 'c' } }, systemWrite());
  core.update(
    type,
    'default',
    'c',
    { ...structuredClone(created), data: { a: '1' } },
    systemWrite(),
  );
  const error = apiError(() =>
    core.update(
      type,
      'default',
      'c',
      { ...structuredClone(created), data: { a: '2' } },
      systemWrite(),
    ),
  );
  t.equal(error.reason, 'Conflict');
  t.equal(error.code, 409);
  t.end();
});

void t.test('core - a resourceVersion in an applied configuration is a precondition', (t) => {
  const core = setup();
  const type = core.typeOf('', 'configmaps');
  const apply = (body: JsonObject) =>
    core.patch(type, 'default', 'c', 'apply', JSON.stringify(body), {
      ...systemWrite(),
      fieldManager: 'm',
      force: true,
    });
  const created = apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } });
  const rv = String(meta(created)['resourceVersion']);
  const landed = apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', resourceVersion: rv },
    data: { a: '1' },
  });
  t.same(landed['data'], { a: '1' }, 'the current resourceVersion lands');
  const error = apiError(() =>
    apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', resourceVersion: rv },
      data: { a: '2' },
    }),
  );
  t.equal(error.reason, 'Conflict', 'a stale one is refused');
  t.equal(error.code, 409);
  t.end();
});

void t.test('core - an update that changes nothing keeps the resourceVersion', (t) => {
  const core = setup();
  const type = core.typeOf('', 'configmaps');
  const created = core.create(
    type,
    'default',
    { metadata: { name: 'c' }, data: { a: '1' } },
    systemWrite(),
  );
  const same = core.update(type, 'default', 'c', structuredClone(created), systemWrite());
  t.equal(meta(same)['resourceVersion'], meta(created)['resourceVersion']);
  t.end();
});

void t.test('core - finalizers hold a deleted object until they are removed', (t) => {
  const core = setup();
  const type = core.typeOf('', 'configmaps');
  core.create(type, 'default', { metadata: { name: 'c', finalizers: ['x/y'] } }, systemWrite());
  const { object, deleted } = core.delete(type, 'default', 'c', { dryRun: false });
  t.notOk(deleted);
  t.ok(meta(object)['deletionTimestamp']);
  core.removeFinalizer(type, 'default', 'c', 'x/y');
  t.equal(core.find(type, 'default', 'c'), undefined);
  t.end();
});

void t.test('core - dryRun writes nothing', (t) => {
  const core = setup();
  const type = core.typeOf('', 'configmaps');
  const before = core.store.currentResourceVersion();
  core.create(type, 'default', { metadata: { name: 'dry' } }, { ...systemWrite(), dryRun: true });
  t.equal(core.find(type, 'default', 'dry'), undefined);
  t.equal(core.store.currentResourceVersion(), before);
  t.end();
});

void t.test('core - creating in a missing namespace is NotFound', (t) => {
  const core = setup();
  const error = apiError(() =>
    core.create(
      core.typeOf('', 'configmaps'),
      'nowhere',
      { metadata: { name: 'c' } },
      systemWrite(),
    ),
  );
  t.equal(error.reason, 'NotFound');
  t.equal(error.message, 'namespaces "nowhere" not found');
  t.end();
});

void t.test('core - list pages with limit and continue', (t) => {
  const core = setup();
  const type = core.typeOf('', 'configmaps');
  for (const name of ['a', 'b', 'c'])
    core.create(type, 'default', { metadata: { name } }, systemWrite());
  const options = { labelSelector: [], fieldSelector: [], limit: 2, continueToken: undefined };
  const first = core.list(type, 'default', options);
  t.same(
    first.items.map((o) => meta(o)['name']),
    ['a', 'b'],
  );
  t.equal(first.remainingItemCount, 1);
  const second = core.list(type, 'default', { ...options, continueToken: first.continueToken });
  t.same(
    second.items.map((o) => meta(o)['name']),
    ['c'],
  );
  t.equal(second.continueToken, undefined);
  t.end();
});

void t.test('core - owner references without uid or with two controllers are Invalid', (t) => {
  const core = setup();
  const type = core.typeOf('', 'configmaps');
  const error = apiError(() =>
    core.create(
      type,
      'default',
      {
        metadata: {
          name: 'owned',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: '', controller: true },
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: 'x', controller: true },
          ],
        },
      },
      systemWrite(),
    ),
  );
  t.equal(error.reason, 'Invalid');
  t.same(
    error.details?.causes?.map((c) => c.field),
    ['metadata.ownerReferences.uid', 'metadata.ownerReferences'],
  );
  t.end();
});

void t.test('core - an invalid label value is Invalid', (t) => {
  const core = setup();
  const error = apiError(() =>
    core.create(
      core.typeOf('', 'configmaps'),
      'default',
      { metadata: { name: 'l', labels: { a: 'not valid!' } } },
      systemWrite(),
    ),
  );
  t.equal(error.reason, 'Invalid');
  t.end();
});

void t.test('core - a CRD gets its cleanup finalizer on its first delete, not on create', (t) => {
  const core = setup();
  const type = core.typeOf('apiextensions.k8s.io', 'customresourcedefinitions');
  const crd: JsonObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.olmq.io', finalizers: ['example.olmq.io/keep'] },
    spec: {
      group: 'example.olmq.io',
      names: { plural: 'gadgets', kind: 'Gadget' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
        },
      ],
    },
  };
  const created = core.create(type, '', crd, systemWrite());
  t.same(
    meta(created)['finalizers'],
    ['example.olmq.io/keep'],
    'kube-apiserver adds none on create',
  );
  const first = core.delete(type, '', 'gadgets.example.olmq.io', { dryRun: false });
  t.notOk(first.deleted);
  t.ok(meta(first.object)['deletionTimestamp']);
  t.same(meta(first.object)['finalizers'], [
    'example.olmq.io/keep',
    'customresourcecleanup.apiextensions.k8s.io',
  ]);
  const again = core.delete(type, '', 'gadgets.example.olmq.io', { dryRun: false });
  t.same(
    meta(again.object)['finalizers'],
    ['example.olmq.io/keep', 'customresourcecleanup.apiextensions.k8s.io'],
    'a second delete adds it no more',
  );
  core.removeFinalizer(type, '', 'gadgets.example.olmq.io', 'example.olmq.io/keep');
  core.removeFinalizer(
    type,
    '',
    'gadgets.example.olmq.io',
    'customresourcecleanup.apiextensions.k8s.io',
  );
  t.equal(core.find(type, '', 'gadgets.example.olmq.io'), undefined);
  t.end();
});
