// Regression: a cluster-scoped object written with metadata.namespace in its body (upstream
// OLM's InstallPlan sends ClusterRoleBindings that way) was stored as a second copy under that
// namespace: LIST showed it twice, GET the stale one, and a DELETE left the ghost behind.
import t, { type Test } from 'tap';
import { ApiCore, systemWrite } from '../../devcluster/api/core.js';
import type { JsonObject } from '../../shared/kube/json.js';
import { builtinResourceTypes } from '../../devcluster/resources/builtin.js';
import { ResourceRegistry } from '../../devcluster/resources/registry.js';
import { ObjectStore } from '../../devcluster/storage/store.js';

function setup() {
  const core = new ApiCore({
    store: new ObjectStore(),
    registry: new ResourceRegistry(builtinResourceTypes()),
  });
  core.create(core.typeOf('', 'namespaces'), '', { metadata: { name: 'olm' } }, systemWrite());
  return { core, type: core.typeOf('rbac.authorization.k8s.io', 'clusterrolebindings') };
}

const binding = (labels: Record<string, string> = {}): JsonObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'crb', namespace: 'olm', labels },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
  subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'olm' }],
});

const everything = {
  labelSelector: [],
  fieldSelector: [],
  limit: undefined,
  continueToken: undefined,
};
const meta = (o: JsonObject) => o['metadata'] as JsonObject;

/** One stored copy, without a namespace, that LIST and GET agree on and DELETE removes. */
function assertSingleCopy(t: Test, setupResult: ReturnType<typeof setup>, label: string) {
  const { core, type } = setupResult;
  const items = core.list(type, undefined, everything).items;
  t.equal(items.length, 1, 'LIST has one copy');
  const got = core.get(type, '', 'crb');
  t.equal(meta(got)['namespace'], undefined, 'no namespace is stored');
  t.same(meta(got)['labels'], { step: label }, 'GET sees the latest write');
  t.same(items[0], got, 'LIST and GET agree');
  core.delete(type, '', 'crb', { dryRun: false });
  t.same(core.list(type, undefined, everything).items, [], 'DELETE leaves no ghost');
}

void t.test('cluster-scoped - create drops a namespace in the body', (t) => {
  const s = setup();
  const created = s.core.create(s.type, '', binding({ step: 'create' }), systemWrite());
  t.equal(meta(created)['namespace'], undefined);
  assertSingleCopy(t, s, 'create');
  t.end();
});

void t.test('cluster-scoped - update (PUT) drops a namespace in the body', (t) => {
  const s = setup();
  s.core.create(s.type, '', binding({ step: 'create' }), systemWrite());
  const updated = s.core.update(s.type, '', 'crb', binding({ step: 'update' }), systemWrite());
  t.equal(meta(updated)['namespace'], undefined);
  assertSingleCopy(t, s, 'update');
  t.end();
});

void t.test('cluster-scoped - an update only adding a namespace is a no-op', (t) => {
  const s = setup();
  const created = s.core.create(s.type, '', binding({ step: 'create' }), systemWrite());
  const updated = s.core.update(s.type, '', 'crb', binding({ step: 'create' }), systemWrite());
  t.equal(meta(updated)['resourceVersion'], meta(created)['resourceVersion']);
  t.end();
});

void t.test('cluster-scoped - merge patch setting a namespace does not move the object', (t) => {
  const s = setup();
  s.core.create(s.type, '', binding({ step: 'create' }), systemWrite());
  const patch = JSON.stringify({ metadata: { namespace: 'olm', labels: { step: 'patch' } } });
  const patched = s.core.patch(s.type, '', 'crb', 'merge', patch, {
    ...systemWrite(),
    force: false,
  });
  t.equal(meta(patched)['namespace'], undefined);
  assertSingleCopy(t, s, 'patch');
  t.end();
});

void t.test(
  'cluster-scoped - server-side apply with a namespace creates and updates one copy',
  (t) => {
    const s = setup();
    const apply = (step: string) =>
      s.core.patch(s.type, '', 'crb', 'apply', JSON.stringify(binding({ step })), {
        ...systemWrite('olm'),
        force: true,
      });
    apply('create');
    const applied = apply('apply');
    t.equal(meta(applied)['namespace'], undefined);
    assertSingleCopy(t, s, 'apply');
    t.end();
  },
);
