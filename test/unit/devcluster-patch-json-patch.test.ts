import t from 'tap';
import { patchErrorOf } from '../harness/patch.js';
import type { JsonValue } from '../../shared/kube/json.js';
import { PatchError, applyJsonPatch } from '../../devcluster/patch/index.js';

const REJECTED = 'the server rejected our request due to an error in our request';

// RFC 6902 appendix A examples that succeed.
const rfcExamples: { name: string; doc: JsonValue; patch: JsonValue; expected: JsonValue }[] = [
  {
    name: 'add appends an object member (A.1)',
    doc: { foo: 'bar' },
    patch: [{ op: 'add', path: '/baz', value: 'qux' }],
    expected: { baz: 'qux', foo: 'bar' },
  },
  {
    name: 'add inserts an array element before the index (A.2)',
    doc: { foo: ['bar', 'baz'] },
    patch: [{ op: 'add', path: '/foo/1', value: 'qux' }],
    expected: { foo: ['bar', 'qux', 'baz'] },
  },
  {
    name: 'remove drops an object member (A.3)',
    doc: { baz: 'qux', foo: 'bar' },
    patch: [{ op: 'remove', path: '/baz' }],
    expected: { foo: 'bar' },
  },
  {
    name: 'remove drops an array element (A.4)',
    doc: { foo: ['bar', 'qux', 'baz'] },
    patch: [{ op: 'remove', path: '/foo/1' }],
    expected: { foo: ['bar', 'baz'] },
  },
  {
    name: 'replace changes a value (A.5)',
    doc: { baz: 'qux', foo: 'bar' },
    patch: [{ op: 'replace', path: '/baz', value: 'boo' }],
    expected: { baz: 'boo', foo: 'bar' },
  },
  {
    name: 'move relocates a member (A.6)',
    doc: { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
    patch: [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
    expected: { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
  },
  {
    name: 'move reorders an array (A.7)',
    doc: { foo: ['all', 'grass', 'cows', 'eat'] },
    patch: [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
    expected: { foo: ['all', 'cows', 'eat', 'grass'] },
  },
  {
    name: 'test passes on equal values (A.8)',
    doc: { baz: 'qux', foo: ['a', 2, 'c'] },
    patch: [
      { op: 'test', path: '/baz', value: 'qux' },
      { op: 'test', path: '/foo/1', value: 2 },
    ],
    expected: { baz: 'qux', foo: ['a', 2, 'c'] },
  },
  {
    name: 'add creates a nested object (A.10)',
    doc: { foo: 'bar' },
    patch: [{ op: 'add', path: '/child', value: { grandchild: {} } }],
    expected: { foo: 'bar', child: { grandchild: {} } },
  },
  {
    name: 'unknown operation members are ignored (A.11)',
    doc: { foo: 'bar' },
    patch: [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
    expected: { foo: 'bar', baz: 'qux' },
  },
  {
    name: 'pointer escapes ~0 and ~1 decode in order (A.14)',
    doc: { '/': 9, '~1': 10 },
    patch: [{ op: 'test', path: '/~01', value: 10 }],
    expected: { '/': 9, '~1': 10 },
  },
  {
    name: 'the "-" index appends, an array value stays one element (A.16)',
    doc: { foo: ['bar'] },
    patch: [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
    expected: { foo: ['bar', ['abc', 'def']] },
  },
  {
    name: 'testing a missing key against null passes',
    doc: { spec: {} },
    patch: [{ op: 'test', path: '/spec/paused', value: null }],
    expected: { spec: {} },
  },
  {
    name: 'copy duplicates a value without aliasing it',
    doc: { a: { b: 1 } },
    patch: [
      { op: 'copy', from: '/a', path: '/c' },
      { op: 'replace', path: '/c/b', value: 2 },
    ],
    expected: { a: { b: 1 }, c: { b: 2 } },
  },
  {
    name: 'a slash in a key is written ~1',
    doc: { metadata: { annotations: { 'example.com/x': 'a' } } },
    patch: [{ op: 'replace', path: '/metadata/annotations/example.com~1x', value: 'b' }],
    expected: { metadata: { annotations: { 'example.com/x': 'b' } } },
  },
];

for (const c of rfcExamples) {
  void t.test(`json patch - ${c.name}`, (t) => {
    t.same(applyJsonPatch(c.doc, c.patch), c.expected);
    t.end();
  });
}

void t.test('json patch - the target is left untouched', (t) => {
  const doc = { foo: ['bar'] };
  applyJsonPatch(doc, [{ op: 'add', path: '/foo/0', value: 'x' }]);
  t.same(doc, { foo: ['bar'] });
  t.end();
});

// Failures kube-apiserver answers 422 Invalid with its fixed message; the detail is the cause.
const failures: { name: string; doc: JsonValue; patch: JsonValue; detail: string }[] = [
  {
    name: 'a failed test is rejected (A.9)',
    doc: { baz: 'qux' },
    patch: [{ op: 'test', path: '/baz', value: 'bar' }],
    detail: 'testing value /baz failed: test failed',
  },
  {
    name: 'add under a missing parent is rejected (A.12)',
    doc: { foo: 'bar' },
    patch: [{ op: 'add', path: '/baz/bat', value: 'qux' }],
    detail: 'add operation does not apply: doc is missing path: "/baz/bat": missing value',
  },
  {
    name: 'a string never equals a number (A.15)',
    doc: { '/': 9, '~1': 10 },
    patch: [{ op: 'test', path: '/~01', value: '10' }],
    detail: 'testing value /~01 failed: test failed',
  },
  {
    name: 'replace of a missing key is rejected',
    doc: { spec: {} },
    patch: [{ op: 'replace', path: '/spec/replicas', value: 3 }],
    detail: 'replace operation does not apply: doc is missing key: /spec/replicas: missing value',
  },
  {
    name: 'remove of a missing key is rejected',
    doc: { spec: {} },
    patch: [{ op: 'remove', path: '/spec/replicas' }],
    detail:
      "error in remove for path: '/spec/replicas': unable to remove nonexistent key: replicas: missing value",
  },
  {
    name: 'an index past the end is rejected',
    doc: { foo: [1] },
    patch: [{ op: 'add', path: '/foo/5', value: 2 }],
    detail:
      "error in add for path: '/foo/5': Unable to access invalid index: 5: invalid index referenced",
  },
  {
    name: 'testing a missing key against a value fails',
    doc: { spec: {} },
    patch: [{ op: 'test', path: '/spec/paused', value: true }],
    detail: 'testing value /spec/paused failed: test failed',
  },
  {
    name: 'an unknown op is rejected',
    doc: {},
    patch: [{ op: 'frobnicate', path: '/a' }],
    detail: 'Unexpected kind: frobnicate',
  },
];

for (const c of failures) {
  void t.test(`json patch - ${c.name}`, (t) => {
    try {
      applyJsonPatch(c.doc, c.patch);
      t.fail('patch applied');
    } catch (err) {
      t.ok(err instanceof PatchError);
      const e = err as PatchError;
      t.equal(e.reason, 'Invalid');
      t.equal(e.message, REJECTED);
      t.equal((e.cause as Error).message, c.detail);
    }
    t.end();
  });
}

void t.test('json patch - a patch that is not a list is a bad request', (t) => {
  t.strictSame(
    patchErrorOf(() => applyJsonPatch({}, { op: 'add' })),
    {
      reason: 'BadRequest',
      message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    },
  );
  t.end();
});
