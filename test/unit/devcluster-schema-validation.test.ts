import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import { formatCause, validateAgainstSchema } from '../../shared/kube/schema/index.js';

const schema = (spec: JsonObject): JsonObject => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: spec } },
});
const lines = (object: JsonObject, s: JsonObject): string[] =>
  validateAgainstSchema(object, s).map(formatCause);

void t.test('validation - a conforming object has no causes', (t) => {
  const s = schema({ replicas: { type: 'integer' }, name: { type: 'string' } });
  t.same(
    validateAgainstSchema({ apiVersion: 'x/v1', kind: 'X', spec: { replicas: 2, name: 'a' } }, s),
    [],
  );
  t.end();
});

void t.test('validation - wrong type is reported with the type name as value', (t) => {
  const s = schema({ replicas: { type: 'integer' } });
  t.same(validateAgainstSchema({ spec: { replicas: 'three' } }, s), [
    {
      type: 'FieldValueTypeInvalid',
      field: 'spec.replicas',
      message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    },
  ]);
  t.end();
});

void t.test('validation - a fractional number is not an integer', (t) => {
  const s = schema({ replicas: { type: 'integer' } });
  t.same(lines({ spec: { replicas: 1.5 } }, s), [
    'spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"',
  ]);
  t.end();
});

void t.test('validation - an integer is a valid number', (t) => {
  t.same(lines({ spec: { ratio: 2 } }, schema({ ratio: { type: 'number' } })), []);
  t.end();
});

void t.test('validation - objects, arrays and booleans are type-checked', (t) => {
  const s = schema({
    a: { type: 'object' },
    b: { type: 'array', items: { type: 'string' } },
    c: { type: 'boolean' },
  });
  t.same(lines({ spec: { a: [], b: {}, c: 'yes' } }, s), [
    'spec.a: Invalid value: "array": spec.a in body must be of type object: "array"',
    'spec.b: Invalid value: "object": spec.b in body must be of type array: "object"',
    'spec.c: Invalid value: "string": spec.c in body must be of type boolean: "string"',
  ]);
  t.end();
});

void t.test('validation - null is rejected unless nullable', (t) => {
  const s = schema({ a: { type: 'string' }, b: { type: 'string', nullable: true } });
  t.same(lines({ spec: { a: null, b: null } }, s), [
    'spec.a: Invalid value: "null": spec.a in body must be of type string: "null"',
  ]);
  t.end();
});

void t.test('validation - missing required fields', (t) => {
  const s: JsonObject = {
    type: 'object',
    required: ['spec'],
    properties: {
      spec: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    },
  };
  t.same(validateAgainstSchema({}, s), [
    { type: 'FieldValueRequired', field: 'spec', message: 'Required value' },
  ]);
  t.same(lines({ spec: {} }, s), ['spec.name: Required value']);
  t.end();
});

void t.test('validation - enum lists the supported values', (t) => {
  const s = schema({
    mode: { type: 'string', enum: ['a', 'b'] },
    level: { type: 'integer', enum: [1, 2] },
  });
  t.same(validateAgainstSchema({ spec: { mode: 'x', level: 3 } }, s), [
    {
      type: 'FieldValueNotSupported',
      field: 'spec.mode',
      message: 'Unsupported value: "x": supported values: "a", "b"',
    },
    {
      type: 'FieldValueNotSupported',
      field: 'spec.level',
      message: 'Unsupported value: 3: supported values: "1", "2"',
    },
  ]);
  t.end();
});

void t.test('validation - pattern uses the ECMAScript dialect of the Go regex', (t) => {
  const s = schema({
    name: { type: 'string', pattern: '^[a-z]+$' },
    day: { type: 'string', pattern: '^(?i)mon$' },
  });
  t.same(lines({ spec: { name: 'Ab', day: 'MON' } }, s), [
    `spec.name: Invalid value: "Ab": spec.name in body should match '^[a-z]+$'`,
  ]);
  t.end();
});

void t.test('validation - minimum and maximum, inclusive and exclusive', (t) => {
  const s = schema({
    a: { type: 'integer', minimum: 1 },
    b: { type: 'integer', maximum: 10 },
    c: { type: 'number', minimum: 0, exclusiveMinimum: true },
    d: { type: 'number', maximum: 1.5, exclusiveMaximum: true },
  });
  t.same(lines({ spec: { a: 0, b: 11, c: 0, d: 1.5 } }, s), [
    'spec.a: Invalid value: 0: spec.a in body should be greater than or equal to 1',
    'spec.b: Invalid value: 11: spec.b in body should be less than or equal to 10',
    'spec.c: Invalid value: 0: spec.c in body should be greater than 0',
    'spec.d: Invalid value: 1.5: spec.d in body should be less than 1.5',
  ]);
  t.end();
});

void t.test('validation - multipleOf', (t) => {
  const s = schema({
    a: { type: 'integer', multipleOf: 5 },
    b: { type: 'number', multipleOf: 0.1 },
  });
  t.same(lines({ spec: { a: 7, b: 0.3 } }, s), [
    'spec.a: Invalid value: 7: spec.a in body should be a multiple of 5',
  ]);
  t.end();
});

void t.test('validation - string length counts characters, maxLength is Too long', (t) => {
  const s = schema({ a: { type: 'string', minLength: 3 }, b: { type: 'string', maxLength: 2 } });
  t.same(validateAgainstSchema({ spec: { a: 'éé', b: 'abc' } }, s), [
    {
      type: 'FieldValueInvalid',
      field: 'spec.a',
      message: 'Invalid value: "éé": spec.a in body should be at least 3 chars long',
    },
    { type: 'FieldValueTooLong', field: 'spec.b', message: 'Too long: may not be longer than 2' },
  ]);
  t.same(lines({ spec: { b: 'éé' } }, s), []);
  t.end();
});

void t.test('validation - minItems, maxItems and uniqueItems', (t) => {
  const s = schema({
    a: { type: 'array', items: { type: 'string' }, minItems: 1 },
    b: { type: 'array', items: { type: 'string' }, maxItems: 1 },
    c: { type: 'array', items: { type: 'object' }, uniqueItems: true },
  });
  t.same(validateAgainstSchema({ spec: { a: [], b: ['x', 'y'], c: [{ k: 1 }, { k: 1 }] } }, s), [
    {
      type: 'FieldValueInvalid',
      field: 'spec.a',
      message: 'Invalid value: 0: spec.a in body should have at least 1 items',
    },
    {
      type: 'FieldValueTooMany',
      field: 'spec.b',
      message: 'Too many: 2: must have at most 1 items',
    },
    {
      type: 'FieldValueInvalid',
      field: 'spec.c',
      message: `Invalid value: "": spec.c in body shouldn't contain duplicates`,
    },
  ]);
  t.end();
});

void t.test('validation - minProperties and maxProperties', (t) => {
  const s = schema({
    a: { type: 'object', minProperties: 2, additionalProperties: { type: 'string' } },
    b: { type: 'object', maxProperties: 1, additionalProperties: { type: 'string' } },
  });
  t.same(lines({ spec: { a: { x: '1' }, b: { x: '1', y: '2' } } }, s), [
    'spec.a: Invalid value: 2: spec.a in body should have at least 2 properties',
    'spec.b: Too many: 2: must have at most 1 items',
  ]);
  t.end();
});

void t.test('validation - list items are addressed with [i]', (t) => {
  const s = schema({
    ports: {
      type: 'array',
      items: { type: 'object', required: ['port'], properties: { port: { type: 'integer' } } },
    },
  });
  t.same(lines({ spec: { ports: [{ port: 1 }, { port: 'x' }, {}] } }, s), [
    'spec.ports[1].port: Invalid value: "string": spec.ports[1].port in body must be of type integer: "string"',
    'spec.ports[2].port: Required value',
  ]);
  t.end();
});

void t.test('validation - additionalProperties schema applies to every other key', (t) => {
  const s = schema({ labels: { type: 'object', additionalProperties: { type: 'string' } } });
  t.same(lines({ spec: { labels: { a: 'x', b: 2 } } }, s), [
    'spec.labels.b: Invalid value: "integer": spec.labels.b in body must be of type string: "integer"',
  ]);
  t.end();
});

void t.test('validation - additionalProperties false forbids other keys', (t) => {
  const s = schema({ opts: { type: 'object', additionalProperties: false } });
  t.same(lines({ spec: { opts: { x: 1 } } }, s), [
    'spec.opts: Invalid value: "x": spec.opts.x in body is a forbidden property',
  ]);
  t.end();
});

void t.test('validation - int-or-string accepts both and names both types', (t) => {
  const s = schema({ port: { 'x-kubernetes-int-or-string': true } });
  t.same(lines({ spec: { port: 80 } }, s), []);
  t.same(lines({ spec: { port: 'http' } }, s), []);
  t.same(lines({ spec: { port: true } }, s), [
    'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
  ]);
  t.end();
});

void t.test(
  'validation - anyOf failure names the value and keeps the closest branch errors',
  (t) => {
    const s = schema({
      v: { type: 'integer', anyOf: [{ minimum: 10 }, { maximum: 1 }, { minimum: 5, maximum: 6 }] },
    });
    t.same(lines({ spec: { v: 7 } }, s), [
      '<nil>: Invalid value: "": "spec.v" must validate at least one schema (anyOf)',
      'spec.v: Invalid value: 7: spec.v in body should be greater than or equal to 10',
    ]);
    t.same(lines({ spec: { v: 11 } }, s), []);
    t.end();
  },
);

void t.test('validation - oneOf requires exactly one match', (t) => {
  const s = schema({ v: { type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] } });
  t.same(lines({ spec: { v: { a: 1 } } }, s), []);
  t.same(lines({ spec: { v: { a: 1, b: 2 } } }, s), [
    '<nil>: Invalid value: "": "spec.v" must validate one and only one schema (oneOf). Found 2 valid alternatives',
  ]);
  t.same(lines({ spec: { v: {} } }, s), [
    '<nil>: Invalid value: "": "spec.v" must validate one and only one schema (oneOf). Found none valid',
    'spec.v.a: Required value',
  ]);
  t.end();
});

void t.test('validation - allOf reports every failing branch', (t) => {
  const s = schema({ v: { type: 'string', allOf: [{ minLength: 2 }, { pattern: '^a' }] } });
  t.same(lines({ spec: { v: 'b' } }, s), [
    'spec.v: Invalid value: "b": spec.v in body should be at least 2 chars long',
    `spec.v: Invalid value: "b": spec.v in body should match '^a'`,
    '<nil>: Invalid value: "": "spec.v" must validate all the schemas (allOf). None validated',
  ]);
  t.end();
});

void t.test('validation - not rejects values matching its schema', (t) => {
  const s = schema({ v: { type: 'string', not: { enum: ['forbidden'] } } });
  t.same(lines({ spec: { v: 'forbidden' } }, s), [
    '<nil>: Invalid value: "": "spec.v" must not validate the schema (not)',
  ]);
  t.same(lines({ spec: { v: 'fine' } }, s), []);
  t.end();
});

void t.test('validation - formats kube checks on strings', (t) => {
  const s = schema({
    when: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    id: { type: 'string', format: 'uuid' },
    ip: { type: 'string', format: 'ipv4' },
    data: { type: 'string', format: 'byte' },
    other: { type: 'string', format: 'not-a-kube-format' },
  });
  t.same(
    lines(
      {
        spec: {
          when: '2024-01-02T03:04:05Z',
          day: '2024-01-02',
          id: '123e4567-e89b-12d3-a456-426614174000',
          ip: '10.0.0.1',
          data: 'aGk=',
          other: '?',
        },
      },
      s,
    ),
    [],
  );
  t.same(lines({ spec: { when: 'yesterday', ip: '10.0.0.300' } }, s), [
    'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
    'spec.ip: Invalid value: "10.0.0.300": spec.ip in body must be of type ipv4: "10.0.0.300"',
  ]);
  t.end();
});

void t.test('validation - integer formats are not range-checked', (t) => {
  t.same(lines({ spec: { n: 2 ** 40 } }, schema({ n: { type: 'integer', format: 'int32' } })), []);
  t.end();
});

void t.test('validation - x-kubernetes-list-type set rejects duplicates once each', (t) => {
  const s = schema({
    tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
  });
  t.same(validateAgainstSchema({ spec: { tags: ['a', 'b', 'a', 'a'] } }, s), [
    { type: 'FieldValueDuplicate', field: 'spec.tags[2]', message: 'Duplicate value: "a"' },
  ]);
  t.end();
});

void t.test('validation - x-kubernetes-list-type map rejects duplicate keys', (t) => {
  const s = schema({
    ports: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name', 'protocol'],
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          protocol: { type: 'string', default: 'TCP' },
          port: { type: 'integer' },
        },
      },
    },
  });
  const ports = [
    { name: 'a', protocol: 'TCP', port: 1 },
    { name: 'a', port: 2 },
    { name: 'a', protocol: 'UDP', port: 3 },
  ];
  t.same(lines({ spec: { ports } }, s), [
    'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a", "protocol":"TCP"}',
  ]);
  t.end();
});

void t.test('validation - embedded resources need apiVersion and kind', (t) => {
  const s = schema({
    template: {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    },
  });
  t.same(lines({ spec: { template: { metadata: {} } } }, s), [
    'spec.template.apiVersion: Required value: must not be empty',
    'spec.template.kind: Required value: must not be empty',
  ]);
  t.same(lines({ spec: { template: { apiVersion: 'v1', kind: 'Pod' } } }, s), []);
  t.end();
});

void t.test('validation - x-kubernetes-validations are neither evaluated nor failing', (t) => {
  const s = schema({
    a: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == "never"' }] },
  });
  t.same(lines({ spec: { a: 'x' } }, s), []);
  t.end();
});

void t.test('validation - values in messages are printed as Go prints them', (t) => {
  const s = schema({ big: { type: 'number', maximum: 1 }, tiny: { type: 'number', minimum: 1 } });
  t.same(lines({ spec: { big: 1e21, tiny: 0.00001 } }, s), [
    'spec.big: Invalid value: 1e+21: spec.big in body should be less than or equal to 1',
    'spec.tiny: Invalid value: 1e-05: spec.tiny in body should be greater than or equal to 1',
  ]);
  t.end();
});

void t.test('validation - date-time needs a time with seconds and a zone, on a real date', (t) => {
  const s = schema({
    when: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
  });
  t.same(lines({ spec: { when: '2024-01-02T03:04:05.5+01:00', day: '2024-02-29' } }, s), []);
  t.same(
    ['2024-01-02', '2024-01-02T03:04Z', '2024-02-30T00:00:00Z'].map(
      (when) => lines({ spec: { when } }, s).length,
    ),
    [1, 1, 1],
  );
  t.same(lines({ spec: { day: '2023-02-29' } }, s), [
    'spec.day: Invalid value: "2023-02-29": spec.day in body must be of type date: "2023-02-29"',
  ]);
  t.end();
});

void t.test('validation - a schema is compiled once and reused by identity', async (t) => {
  const { compileSchema } = await import('../../shared/kube/schema/compiled.js');
  const s = schema({ a: { type: 'string', pattern: '^x' } });
  t.equal(compileSchema(s), compileSchema(s));
  t.not(compileSchema(s), compileSchema(structuredClone(s)), 'a different object compiles anew');
});
