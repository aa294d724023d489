import t from 'tap';
import type { JsonValue } from '../../shared/kube/json.js';
import { applyMergePatch } from '../../devcluster/patch/index.js';

// RFC 7386 appendix A, every row.
const rows: [JsonValue, JsonValue, JsonValue][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [
    ['a', 'b'],
    ['c', 'd'],
    ['c', 'd'],
  ],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

rows.forEach(([target, patch, expected], i) => {
  void t.test(`merge patch - RFC 7386 example ${i + 1}: ${JSON.stringify(patch)}`, (t) => {
    t.same(applyMergePatch(target, patch), expected);
    t.end();
  });
});

void t.test('merge patch - the target is left untouched', (t) => {
  const target = { a: { b: 1 } };
  applyMergePatch(target, { a: { b: null, c: 2 } });
  t.same(target, { a: { b: 1 } });
  t.end();
});

void t.test('merge patch - parts the patch leaves alone are shared with the target', (t) => {
  const untouched = { b: 1 };
  const target = { a: untouched, c: { d: 1 } };
  const result = applyMergePatch(target, { c: { d: 2 } }) as Record<string, unknown>;
  t.equal(result['a'], untouched);
  t.same(target, { a: { b: 1 }, c: { d: 1 } });
  t.end();
});
