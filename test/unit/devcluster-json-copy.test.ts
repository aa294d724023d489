import t from 'tap';
import { copyJson, type JsonObject } from '../../shared/kube/json.js';
import { builtinMergeRules, recordUpdate } from '../../devcluster/patch/index.js';

t.test('json copy - nested objects and arrays are new and equal', (t) => {
  const original: JsonObject = { a: { b: [1, { c: 'x' }, null] }, d: true, e: 2.5 };
  const copy = copyJson(original);
  t.same(copy, original);
  t.not(copy.a, original.a);
  t.end();
});

t.test('json copy - changing the copy leaves the original as it was', (t) => {
  const original: JsonObject = { spec: { list: [{ name: 'a' }] } };
  const copy = copyJson(original);
  ((copy.spec as JsonObject).list as JsonObject[])[0]!.name = 'b';
  t.same(original, { spec: { list: [{ name: 'a' }] } });
  t.end();
});

t.test('json copy - a frozen value gives a writable copy', (t) => {
  const original = Object.freeze({ metadata: Object.freeze({ name: 'x' }) }) as JsonObject;
  const copy = copyJson(original);
  (copy.metadata as JsonObject).name = 'y';
  t.equal((copy.metadata as JsonObject).name, 'y');
  t.end();
});

t.test('json copy - undefined members are left out, as JSON would', (t) => {
  const original = { a: 1, b: undefined } as unknown as JsonObject;
  t.same(Object.keys(copyJson(original)), ['a']);
  t.end();
});

t.test(
  'managed fields - recordUpdate does not change the metadata of the object it was given',
  (t) => {
    const after: JsonObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { k: 'v' },
    };
    const result = recordUpdate(undefined, after, {
      manager: 'm',
      rules: builtinMergeRules('', 'ConfigMap'),
      apiVersion: 'v1',
      now: '2026-01-01T00:00:00Z',
    });
    t.equal((after.metadata as JsonObject).managedFields, undefined);
    t.ok(Array.isArray((result.metadata as JsonObject).managedFields));
    t.end();
  },
);
