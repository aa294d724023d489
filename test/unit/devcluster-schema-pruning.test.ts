import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import { prune } from '../../shared/kube/schema/index.js';

const schema: JsonObject = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        items: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
        free: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { typed: { type: 'object', properties: { k: { type: 'string' } } } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        anything: { type: 'object', additionalProperties: true },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object', properties: { x: { type: 'string' } } } },
        },
      },
    },
  },
};

void t.test('pruning - unknown fields are removed and listed as kube prints them', (t) => {
  const input = {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'a' },
    spec: { name: 'n', foo: 1, items: [{ a: 'x', b: 2 }] },
    extra: true,
  };
  const out = prune(input, schema);
  t.same(out.value, {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'a' },
    spec: { name: 'n', items: [{ a: 'x' }] },
  });
  t.same(out.unknownFields, ['extra', 'spec.foo', 'spec.items[0].b']);
  t.end();
});

void t.test(
  'pruning - preserve-unknown-fields keeps unknown keys but prunes known subtrees',
  (t) => {
    const out = prune({ spec: { free: { any: { deep: 1 }, typed: { k: 'v', junk: 1 } } } }, schema);
    t.same(out.value, { spec: { free: { any: { deep: 1 }, typed: { k: 'v' } } } });
    t.same(out.unknownFields, ['spec.free.typed.junk']);
    t.end();
  },
);

void t.test('pruning - additionalProperties keeps every key', (t) => {
  const out = prune({ spec: { labels: { a: 'b', c: 'd' } } }, schema);
  t.same(out.value, { spec: { labels: { a: 'b', c: 'd' } } });
  t.same(out.unknownFields, []);
  t.end();
});

void t.test('pruning - additionalProperties true keeps scalars but empties nested objects', (t) => {
  const out = prune({ spec: { anything: { s: 'x', o: { k: 1 } } } }, schema);
  t.same(out.value, { spec: { anything: { s: 'x', o: {} } } });
  t.same(out.unknownFields, ['spec.anything.o.k']);
  t.end();
});

void t.test('pruning - embedded resources keep apiVersion, kind and metadata', (t) => {
  const template = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { labels: { a: 'b' } },
    spec: { x: 'y', z: 1 },
    junk: 1,
  };
  const out = prune({ spec: { template } }, schema);
  t.same(out.value, {
    spec: {
      template: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { labels: { a: 'b' } },
        spec: { x: 'y' },
      },
    },
  });
  t.same(out.unknownFields, ['spec.template.junk', 'spec.template.spec.z']);
  t.end();
});

void t.test('pruning - a non-string kind at the root is pruned', (t) => {
  const out = prune({ kind: 5, spec: {} }, schema);
  t.same(out.value, { spec: {} });
  t.same(out.unknownFields, ['kind']);
  t.end();
});

void t.test('pruning - the input is untouched and clean subtrees are shared', (t) => {
  const clean = { name: 'n' };
  const input = { spec: clean, junk: 1 };
  const out = prune(input, schema);
  t.same(input, { spec: { name: 'n' }, junk: 1 });
  t.equal((out.value as JsonObject).spec, clean);
  const untouched = { spec: { name: 'n' } };
  t.equal(prune(untouched, schema).value, untouched);
  t.end();
});

void t.test('pruning - a root that preserves unknown fields keeps everything', (t) => {
  const open: JsonObject = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const input = { apiVersion: 'x/v1', kind: 'X', spec: { anything: [1, { a: 2 }] } };
  const out = prune(input, open);
  t.equal(out.value, input);
  t.same(out.unknownFields, []);
  t.end();
});
