import t from 'tap';
import { patchErrorOf } from '../harness/patch.js';
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
import {
  ApplyConflictError,
  builtinMergeRules,
  mergeRulesFromSchema,
  recordUpdate,
  serverSideApply,
} from '../../devcluster/patch/index.js';
import type { ApplyOptions } from '../../devcluster/patch/index.js';

const rules = builtinMergeRules('apps', 'Deployment');
const T1 = '2026-01-01T00:00:00Z';
const T2 = '2026-01-02T00:00:00Z';
const T3 = '2026-01-03T00:00:00Z';

function options(manager: string, now: string, extra: Partial<ApplyOptions> = {}): ApplyOptions {
  return { manager, force: false, rules, apiVersion: 'apps/v1', now, ...extra };
}

interface Manifest {
  replicas?: number;
  image?: string;
  containers?: JsonObject[];
  labels?: JsonObject;
}

function deployment(m: Manifest = {}): JsonObject {
  const spec: JsonObject = {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: m.containers ?? [
          { name: 'nginx', image: m.image ?? 'nginx:1.25', ports: [{ containerPort: 80 }] },
        ],
      },
    },
  };
  if (m.replicas !== undefined) spec.replicas = m.replicas;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: m.labels ?? { app: 'web' } },
    spec,
  };
}

function managedFields(object: JsonObject): JsonObject[] {
  const metadata = object.metadata as JsonObject;
  return (metadata.managedFields ?? []) as JsonObject[];
}

function entryOf(object: JsonObject, manager: string): JsonObject | undefined {
  return managedFields(object).find((e) => e.manager === manager);
}

function at(object: JsonValue, ...path: (string | number)[]): JsonValue | undefined {
  let node: JsonValue | undefined = object;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = Array.isArray(node) ? node[key as number] : node[key as string];
  }
  return node;
}

function conflictOf(fn: () => unknown): ApplyConflictError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApplyConflictError) return err;
    throw err;
  }
  throw new Error('apply succeeded');
}

void t.test('server-side apply - create records the applied fields in FieldsV1', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  t.strictSame(managedFields(created), [
    {
      manager: 'kubectl',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      time: T1,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': {
          'f:replicas': {},
          'f:selector': {},
          'f:template': {
            'f:metadata': { 'f:labels': { 'f:app': {} } },
            'f:spec': {
              'f:containers': {
                'k:{"name":"nginx"}': {
                  '.': {},
                  'f:image': {},
                  'f:name': {},
                  'f:ports': {
                    'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
                  },
                },
              },
            },
          },
        },
      },
    },
  ]);
  t.end();
});

void t.test('server-side apply - create returns the applied object', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const { metadata, ...rest } = created;
  const { managedFields: _mf, ...meta } = metadata as JsonObject;
  const { metadata: expectedMeta, ...expectedRest } = deployment({ replicas: 2 });
  t.strictSame(rest, expectedRest);
  t.strictSame(meta, expectedMeta);
  t.end();
});

void t.test('server-side apply - re-applying the same manifest is a no-op', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const again = serverSideApply(created, deployment({ replicas: 2 }), options('kubectl', T2));
  t.strictSame(again, created);
  t.end();
});

void t.test('server-side apply - a changed manifest updates the entry time', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const changed = serverSideApply(created, deployment({ replicas: 3 }), options('kubectl', T2));
  t.equal(at(changed, 'spec', 'replicas'), 3);
  t.equal(entryOf(changed, 'kubectl')?.time, T2);
  t.end();
});

void t.test('server-side apply - a different value owned by another applier conflicts', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const err = conflictOf(() =>
    serverSideApply(created, deployment({ replicas: 5 }), options('helm', T2)),
  );
  t.equal(err.message, 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
  t.strictSame(err.causes, [
    { type: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas' },
  ]);
  t.end();
});

void t.test(
  'server-side apply - a field set by an Update conflicts with an apply (Update-then-Apply)',
  (t) => {
    const created = recordUpdate(
      undefined,
      deployment({ replicas: 1 }),
      options('kubectl-create', T1),
    );
    const err = conflictOf(() =>
      serverSideApply(created, deployment({ replicas: 4 }), options('kubectl', T2)),
    );
    t.equal(
      err.message,
      'Apply failed with 1 conflict: conflict with "kubectl-create" using apps/v1: .spec.replicas',
    );
    t.end();
  },
);

void t.test('server-side apply - several conflicts are listed per manager', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const err = conflictOf(() =>
    serverSideApply(created, deployment({ replicas: 5, image: 'nginx:1.26' }), options('helm', T2)),
  );
  t.equal(
    err.message,
    'Apply failed with 2 conflicts: conflicts with "kubectl":\n- .spec.replicas\n- .spec.template.spec.containers[name="nginx"].image',
  );
  t.end();
});

void t.test('server-side apply - force takes ownership from the other manager', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const forced = serverSideApply(
    created,
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 5 } },
    options('hpa', T2, { force: true }),
  );
  t.equal(at(forced, 'spec', 'replicas'), 5);
  t.strictSame(at(entryOf(forced, 'hpa') ?? {}, 'fieldsV1'), { 'f:spec': { 'f:replicas': {} } });
  t.equal(at(entryOf(forced, 'kubectl') ?? {}, 'fieldsV1', 'f:spec', 'f:replicas'), undefined);
  t.end();
});

void t.test('server-side apply - applying the same value shares ownership', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const shared = serverSideApply(
    created,
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2 } },
    options('other', T2),
  );
  t.strictSame(at(entryOf(shared, 'other') ?? {}, 'fieldsV1'), { 'f:spec': { 'f:replicas': {} } });
  t.strictSame(at(entryOf(shared, 'kubectl') ?? {}, 'fieldsV1', 'f:spec', 'f:replicas'), {});
  t.end();
});

void t.test('server-side apply - a field the applier stops applying is removed', (t) => {
  const created = serverSideApply(
    undefined,
    deployment({ replicas: 2, labels: { app: 'web', tier: 'x' } }),
    options('kubectl', T1),
  );
  const next = serverSideApply(
    created,
    deployment({ labels: { app: 'web' } }),
    options('kubectl', T2),
  );
  t.equal(at(next, 'spec', 'replicas'), undefined);
  t.strictSame(at(next, 'metadata', 'labels'), { app: 'web' });
  t.end();
});

void t.test('server-side apply - a dropped field another manager owns stays', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const shared = serverSideApply(
    created,
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2 } },
    options('other', T2),
  );
  const next = serverSideApply(shared, deployment(), options('kubectl', T3));
  t.equal(at(next, 'spec', 'replicas'), 2);
  t.end();
});

void t.test('server-side apply - containers of two appliers merge by name', (t) => {
  const created = serverSideApply(undefined, deployment(), options('kubectl', T1));
  const sidecar = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { template: { spec: { containers: [{ name: 'proxy', image: 'envoy:1' }] } } },
  };
  const merged = serverSideApply(created, sidecar, options('mesh', T2));
  t.strictSame(
    (at(merged, 'spec', 'template', 'spec', 'containers') as JsonObject[]).map((c) => c.name),
    ['nginx', 'proxy'],
  );
  const reapplied = serverSideApply(
    merged,
    deployment({ image: 'nginx:1.26' }),
    options('kubectl', T3),
  );
  t.strictSame(
    (at(reapplied, 'spec', 'template', 'spec', 'containers') as JsonObject[]).map((c) => [
      c.name,
      c.image,
    ]),
    [
      ['nginx', 'nginx:1.26'],
      ['proxy', 'envoy:1'],
    ],
  );
  t.end();
});

void t.test('server-side apply - a container the applier drops is removed', (t) => {
  const two = deployment({
    containers: [
      { name: 'a', image: 'a:1' },
      { name: 'b', image: 'b:1' },
    ],
  });
  const created = serverSideApply(undefined, two, options('kubectl', T1));
  const next = serverSideApply(
    created,
    deployment({ containers: [{ name: 'a', image: 'a:1' }] }),
    options('kubectl', T2),
  );
  t.strictSame(at(next, 'spec', 'template', 'spec', 'containers'), [{ name: 'a', image: 'a:1' }]);
  t.end();
});

void t.test('server-side apply - finalizers of two appliers merge as a set', (t) => {
  const base = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', finalizers: ['a'] },
  };
  const created = serverSideApply(undefined, base, options('one', T1));
  const merged = serverSideApply(
    created,
    { ...base, metadata: { name: 'web', finalizers: ['b'] } },
    options('two', T2),
  );
  t.strictSame(at(merged, 'metadata', 'finalizers'), ['a', 'b']);
  t.strictSame(at(entryOf(merged, 'two') ?? {}, 'fieldsV1'), {
    'f:metadata': { 'f:finalizers': { 'v:"b"': {} } },
  });
  t.end();
});

void t.test('server-side apply - atomic lists are owned and replaced whole', (t) => {
  const withArgs = (args: string[]): JsonObject =>
    deployment({ containers: [{ name: 'a', args }] });
  const created = serverSideApply(undefined, withArgs(['x', 'y']), options('kubectl', T1));
  t.strictSame(
    at(
      entryOf(created, 'kubectl') ?? {},
      'fieldsV1',
      'f:spec',
      'f:template',
      'f:spec',
      'f:containers',
      'k:{"name":"a"}',
    ),
    { '.': {}, 'f:args': {}, 'f:name': {} },
  );
  const next = serverSideApply(created, withArgs(['z']), options('kubectl', T2));
  t.strictSame(at(next, 'spec', 'template', 'spec', 'containers', 0, 'args'), ['z']);
  t.end();
});

void t.test('server-side apply - managedFields in the applied object are a bad request', (t) => {
  const bad = deployment();
  (bad.metadata as JsonObject).managedFields = [];
  t.strictSame(
    patchErrorOf(() => serverSideApply(undefined, bad, options('kubectl', T1))),
    { reason: 'BadRequest', message: 'metadata.managedFields must be nil' },
  );
  t.end();
});

void t.test('server-side apply - an item without its key is a bad request', (t) => {
  t.strictSame(
    patchErrorOf(() =>
      serverSideApply(
        undefined,
        deployment({ containers: [{ image: 'x' }] }),
        options('kubectl', T1),
      ),
    ),
    {
      reason: 'BadRequest',
      message:
        'failed to create typed patch object (apps/v1, Kind=Deployment): .spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    },
  );
  t.end();
});

void t.test('server-side apply - the status subresource is recorded on the entry', (t) => {
  const created = serverSideApply(undefined, deployment(), options('kubectl', T1));
  const status = serverSideApply(
    created,
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      status: { replicas: 1 },
    },
    options('controller', T2, { subresource: 'status' }),
  );
  t.equal(entryOf(status, 'controller')?.subresource, 'status');
  t.end();
});

void t.test('server-side apply - reset fields are neither applied nor owned', (t) => {
  const applied = { ...deployment(), status: { replicas: 9 } };
  const created = serverSideApply(
    undefined,
    applied,
    options('kubectl', T1, { resetFields: ['status'] }),
  );
  t.equal(created.status, undefined);
  t.equal(at(entryOf(created, 'kubectl') ?? {}, 'fieldsV1', 'f:status'), undefined);
  t.end();
});

void t.test('server-side apply - custom resources merge by their schema list keys', (t) => {
  const crRules = mergeRulesFromSchema({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          items: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['id'],
            items: {
              type: 'object',
              properties: { id: { type: 'string' }, v: { type: 'string' } },
            },
          },
        },
      },
    },
  });
  const cr = (items: JsonObject[]): JsonObject => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w' },
    spec: { items },
  });
  const opts = (manager: string, now: string): ApplyOptions => ({
    manager,
    force: false,
    rules: crRules,
    apiVersion: 'example.com/v1',
    now,
  });
  const one = serverSideApply(undefined, cr([{ id: 'a', v: '1' }]), opts('one', T1));
  const two = serverSideApply(one, cr([{ id: 'b', v: '2' }]), opts('two', T2));
  t.strictSame(at(two, 'spec', 'items'), [
    { id: 'a', v: '1' },
    { id: 'b', v: '2' },
  ]);
  t.end();
});

void t.test('managed fields - an update records the fields the manager changed', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const scaled = recordUpdate(
    created,
    { ...created, spec: { ...(created.spec as JsonObject), replicas: 5 } },
    options('kubectl-scale', T2),
  );
  t.strictSame(entryOf(scaled, 'kubectl-scale'), {
    manager: 'kubectl-scale',
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: T2,
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:replicas': {} } },
  });
  t.end();
});

void t.test(
  'managed fields - an update takes the changed fields from their previous owner',
  (t) => {
    const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
    const scaled = recordUpdate(
      created,
      { ...created, spec: { ...(created.spec as JsonObject), replicas: 5 } },
      options('kubectl-scale', T2),
    );
    t.equal(at(entryOf(scaled, 'kubectl') ?? {}, 'fieldsV1', 'f:spec', 'f:replicas'), undefined);
    t.end();
  },
);

void t.test('managed fields - entries are ordered Apply first, then by time', (t) => {
  const created = recordUpdate(
    undefined,
    deployment({ replicas: 1 }),
    options('kubectl-create', T1),
  );
  const applied = serverSideApply(
    created,
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { x: 'y' } } },
    options('kubectl', T2),
  );
  t.strictSame(
    managedFields(applied).map((e) => [e.manager, e.operation]),
    [
      ['kubectl', 'Apply'],
      ['kubectl-create', 'Update'],
    ],
  );
  t.end();
});

void t.test('managed fields - a create marks new maps and list items with "."', (t) => {
  const created = recordUpdate(
    undefined,
    deployment({ replicas: 1 }),
    options('kubectl-create', T1),
  );
  t.strictSame(at(entryOf(created, 'kubectl-create') ?? {}, 'fieldsV1'), {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    'f:spec': {
      'f:replicas': {},
      'f:selector': {},
      'f:template': {
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': {
          'f:containers': {
            'k:{"name":"nginx"}': {
              '.': {},
              'f:image': {},
              'f:name': {},
              'f:ports': {
                '.': {},
                'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
              },
            },
          },
        },
      },
    },
  });
  t.end();
});

void t.test('managed fields - repeated updates by one manager merge into one entry', (t) => {
  const created = recordUpdate(undefined, deployment({ replicas: 1 }), options('ctl', T1));
  const labelled = recordUpdate(
    created,
    {
      ...created,
      metadata: { ...(created.metadata as JsonObject), labels: { app: 'web', x: 'y' } },
    },
    options('ctl', T2),
  );
  const entries = managedFields(labelled).filter((e) => e.manager === 'ctl');
  t.equal(entries.length, 1);
  t.strictSame(at(entries[0] ?? {}, 'fieldsV1', 'f:metadata', 'f:labels'), {
    '.': {},
    'f:app': {},
    'f:x': {},
  });
  t.equal(entries[0]?.time, T2);
  t.end();
});

void t.test('managed fields - an update that changes nothing keeps the entry time', (t) => {
  const created = recordUpdate(undefined, deployment({ replicas: 1 }), options('ctl', T1));
  const same = recordUpdate(created, created, options('ctl', T2));
  t.strictSame(same, created);
  t.end();
});

void t.test('managed fields - removed fields leave every owner', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const spec = { ...(created.spec as JsonObject) };
  delete spec.replicas;
  const updated = recordUpdate(created, { ...created, spec }, options('editor', T2));
  t.equal(at(entryOf(updated, 'kubectl') ?? {}, 'fieldsV1', 'f:spec', 'f:replicas'), undefined);
  t.equal(entryOf(updated, 'editor'), undefined, 'a pure removal owns nothing');
  t.end();
});

void t.test('managed fields - managedFields [{}] in the update clears ownership', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const cleared = recordUpdate(
    created,
    { ...created, metadata: { ...(created.metadata as JsonObject), managedFields: [{}] } },
    options('ctl', T2),
  );
  t.equal(at(cleared, 'metadata', 'managedFields'), undefined);
  t.end();
});

void t.test('managed fields - an update without managedFields keeps the stored ones', (t) => {
  const created = serverSideApply(undefined, deployment({ replicas: 2 }), options('kubectl', T1));
  const { managedFields: _dropped, ...metadata } = created.metadata as JsonObject;
  const updated = recordUpdate(created, { ...created, metadata }, options('ctl', T2));
  t.strictSame(at(updated, 'metadata', 'managedFields'), at(created, 'metadata', 'managedFields'));
  t.end();
});

void t.test('server-side apply - null fields in the manifest set nothing', (t) => {
  const stored = serverSideApply(undefined, deployment(), options('kubectl', T1));
  (stored.metadata as JsonObject).creationTimestamp = T1;
  const manifest = deployment();
  (manifest.metadata as JsonObject).creationTimestamp = null;
  (manifest.spec as JsonObject).paused = null;
  const again = serverSideApply(stored, manifest, options('kubectl', T2));
  t.strictSame(again, stored);
  t.end();
});

void t.test('server-side apply - system metadata of the stored object is kept', (t) => {
  const stored = serverSideApply(undefined, deployment(), options('kubectl', T1));
  (stored.metadata as JsonObject).uid = 'u-1';
  const manifest = deployment();
  (manifest.metadata as JsonObject).uid = 'u-2';
  (manifest.metadata as JsonObject).generation = 7;
  const again = serverSideApply(stored, manifest, options('kubectl', T2));
  t.equal(at(again, 'metadata', 'uid'), 'u-1');
  t.equal(at(again, 'metadata', 'generation'), undefined);
  t.end();
});

void t.test('server-side apply - a conflict names the owner subresource', (t) => {
  const created = serverSideApply(undefined, deployment(), options('kubectl', T1));
  const status = (replicas: number): JsonObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    status: { replicas },
  });
  const owned = serverSideApply(
    created,
    status(1),
    options('controller', T2, { subresource: 'status' }),
  );
  const err = conflictOf(() =>
    serverSideApply(owned, status(2), options('other', T3, { subresource: 'status' })),
  );
  t.equal(
    err.message,
    'Apply failed with 1 conflict: conflict with "controller" with subresource "status": .status.replicas',
  );
  t.end();
});

void t.test('managed fields - creating a custom resource marks its new spec with "."', (t) => {
  const crRules = mergeRulesFromSchema({
    type: 'object',
    properties: { spec: { type: 'object' } },
  });
  const created = recordUpdate(
    undefined,
    { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } },
    { manager: 'kubectl-create', rules: crRules, apiVersion: 'example.com/v1', now: T1 },
  );
  t.strictSame(at(entryOf(created, 'kubectl-create') ?? {}, 'fieldsV1'), {
    'f:spec': { '.': {}, 'f:size': {} },
  });
  t.end();
});

void t.test('managed fields - reset fields are not recorded by an update', (t) => {
  const created = recordUpdate(undefined, deployment(), options('ctl', T1));
  const withStatus = recordUpdate(
    created,
    { ...created, status: { replicas: 1 } },
    options('ctl', T2, { resetFields: ['status'] }),
  );
  t.strictSame(withStatus, { ...created, status: { replicas: 1 } });
  t.end();
});

void t.test(
  'managed fields - a list this server wrote and the same list read back from JSON record the next writes alike',
  (t) => {
    // The written list carries its decoded entries; the parsed copy has to be decoded.
    const created = recordUpdate(undefined, deployment({ replicas: 1 }), options('create', T1));
    const parsed = JSON.parse(JSON.stringify(created)) as JsonObject;
    const scale = (before: JsonObject, manager: string, now: string) =>
      recordUpdate(
        before,
        { ...deployment({ replicas: 3 }), metadata: before['metadata'] ?? {} },
        options(manager, now),
      );
    t.strictSame(scale(created, 'scaler', T2), scale(parsed, 'scaler', T2));
    t.strictSame(scale(created, 'create', T3), scale(parsed, 'create', T3));
    const twice = scale(scale(created, 'scaler', T2), 'create', T3);
    const twiceParsed = scale(
      JSON.parse(JSON.stringify(scale(parsed, 'scaler', T2))) as JsonObject,
      'create',
      T3,
    );
    t.strictSame(twice, twiceParsed);
    t.end();
  },
);
