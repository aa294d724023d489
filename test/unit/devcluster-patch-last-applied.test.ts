// Server-side apply by kubectl over client-side apply, as kube-apiserver's field manager does it
// (lastAppliedManager, lastAppliedUpdater), and a dropped map's "." entry kept while fields
// below it are owned.
import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import {
  ApplyConflictError,
  applyWithLastApplied,
  builtinMergeRules,
  recordUpdate,
  serverSideApply,
} from '../../devcluster/patch/index.js';
import type { ApplyOptions } from '../../devcluster/patch/index.js';

const rules = builtinMergeRules('', 'ConfigMap');
const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';

function options(manager: string, extra: Partial<ApplyOptions> = {}): ApplyOptions {
  return { manager, force: false, rules, apiVersion: 'v1', now: '2026-01-01T00:00:00Z', ...extra };
}

function configMap(data: Record<string, string>, annotations?: Record<string, string>): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'default', ...(annotations ? { annotations } : {}) },
    data,
  };
}

// What kubectl's client-side apply stores: the file in the annotation, managed by an Update.
function clientSideApplied(data: Record<string, string>): JsonObject {
  const annotation = `${JSON.stringify(configMap(data))}\n`;
  return recordUpdate(undefined, configMap(data, { [lastApplied]: annotation }), {
    manager: 'kubectl-client-side-apply',
    rules,
    apiVersion: 'v1',
    now: '2026-01-01T00:00:00Z',
  });
}

void t.test(
  'last applied - kubectl takes fields client-side apply set to their live value',
  (t) => {
    const live = clientSideApplied({ a: '1' });
    t.throws(
      () => serverSideApply(live, configMap({ a: '2' }), options('kubectl')),
      ApplyConflictError,
      'without the migration support it conflicts',
    );
    const applied = applyWithLastApplied(live, configMap({ a: '2' }), options('kubectl'));
    t.same(applied['data'], { a: '2' });
    const metadata = applied['metadata'] as JsonObject;
    t.equal(
      (metadata['annotations'] as JsonObject)[lastApplied],
      '{"apiVersion":"v1","data":{"a":"2"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}\n',
      'the annotation is rewritten to the applied configuration',
    );
    t.end();
  },
);

void t.test('last applied - other managers and changed fields still conflict', (t) => {
  const live = clientSideApplied({ a: '1' });
  t.throws(
    () => applyWithLastApplied(live, configMap({ a: '2' }), options('other')),
    ApplyConflictError,
    'only the manager "kubectl" migrates',
  );
  // The live value is no longer what the annotation says: not client-side apply's to give.
  const changed = recordUpdate(live, { ...live, data: { a: 'x' } }, options('editor'));
  t.throws(() => applyWithLastApplied(changed, configMap({ a: '2' }), options('kubectl')), {
    message: 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a',
  });
  t.end();
});

void t.test(
  'last applied - a map whose fields stay owned is not dropped with its "." entry',
  (t) => {
    // kubectl's migration gives the applier client-side apply's set, "." entries included.
    const migrated: JsonObject = {
      ...configMap({ a: '1' }),
      metadata: {
        name: 'c',
        namespace: 'default',
        managedFields: [
          {
            manager: 'kubectl',
            operation: 'Apply',
            apiVersion: 'v1',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } },
          },
        ],
      },
    };
    const applied = serverSideApply(migrated, configMap({ a: '1' }), options('kubectl'));
    t.same(applied['data'], { a: '1' });
    t.end();
  },
);
