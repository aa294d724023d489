import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import { applyDefaults } from '../../shared/kube/schema/index.js';

const schema: JsonObject = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', default: 1 },
        mode: { type: 'string', default: 'auto' },
        opt: { type: 'string', nullable: true, default: 'x' },
        plain: { type: 'string' },
        nested: {
          type: 'object',
          default: {},
          properties: { level: { type: 'integer', default: 3 } },
        },
        ports: {
          type: 'array',
          items: { type: 'object', properties: { protocol: { type: 'string', default: 'TCP' } } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string', default: 'v' } },
      },
    },
  },
};

void t.test('defaulting - missing fields get their defaults', (t) => {
  const out = applyDefaults({ spec: { replicas: 5 } }, schema) as JsonObject;
  t.same(out.spec, { replicas: 5, mode: 'auto', opt: 'x', nested: { level: 3 } });
  t.end();
});

void t.test('defaulting - defaults apply inside list items', (t) => {
  const out = applyDefaults({ spec: { ports: [{}, { protocol: 'UDP' }] } }, schema) as {
    spec: JsonObject;
  };
  t.same(out.spec.ports, [{ protocol: 'TCP' }, { protocol: 'UDP' }]);
  t.end();
});

void t.test('defaulting - null of a non-nullable field takes the default, or is dropped', (t) => {
  const out = applyDefaults({ spec: { mode: null, plain: null, opt: null } }, schema) as {
    spec: JsonObject;
  };
  t.equal(out.spec.mode, 'auto');
  t.notOk('plain' in out.spec);
  t.equal(out.spec.opt, null, 'nullable fields keep their null');
  t.end();
});

void t.test('defaulting - additionalProperties nulls take the default', (t) => {
  const out = applyDefaults({ spec: { labels: { a: null, b: 'kept' } } }, schema) as {
    spec: JsonObject;
  };
  t.same(out.spec.labels, { a: 'v', b: 'kept' });
  t.end();
});

void t.test('defaulting - the input is not mutated and defaults are not shared', (t) => {
  const input = { spec: { ports: [{}] } };
  const first = applyDefaults(input, schema) as { spec: { nested: JsonObject } };
  t.same(input, { spec: { ports: [{}] } });
  first.spec.nested.level = 99;
  const second = applyDefaults(input, schema) as { spec: { nested: JsonObject } };
  t.equal(second.spec.nested.level, 3);
  t.end();
});

void t.test('defaulting - unchanged subtrees are shared, not copied', (t) => {
  const untouched = { level: 2 };
  const input = {
    spec: { replicas: 1, mode: 'm', opt: 'o', nested: untouched },
    status: { big: [1, 2, 3] },
  };
  const out = applyDefaults(input, schema) as typeof input;
  t.equal(out, input, 'nothing to default returns the same object');
  t.end();
});
