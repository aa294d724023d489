import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import { formatCause, structuralIssues } from '../../shared/kube/schema/index.js';

const P = 'spec.validation.openAPIV3Schema';
const issues = (schema: JsonObject): string[] => structuralIssues(schema, P).map(formatCause);
const root = (properties: JsonObject): JsonObject => ({ type: 'object', properties });

void t.test('structural - a typed schema is structural', (t) => {
  t.same(issues(root({ spec: { type: 'object', properties: { a: { type: 'string' } } } })), []);
  t.end();
});

void t.test('structural - fields need a type', (t) => {
  t.same(structuralIssues(root({ spec: { properties: { a: { type: 'string' } } } }), P), [
    {
      type: 'FieldValueRequired',
      field: `${P}.properties[spec].type`,
      message: 'Required value: must not be empty for specified object fields',
    },
  ]);
  t.end();
});

void t.test('structural - the root and array items need a type', (t) => {
  t.same(issues({ properties: { l: { type: 'array', items: {} } } }), [
    `${P}.properties[l].items.type: Required value: must not be empty for specified array items`,
    `${P}.type: Required value: must not be empty at the root`,
  ]);
  t.end();
});

void t.test('structural - the root must be an object', (t) => {
  t.same(issues({ type: 'string' }), [
    `${P}.type: Invalid value: "string": must be object at the root`,
  ]);
  t.end();
});

void t.test('structural - arrays need items', (t) => {
  t.same(issues(root({ l: { type: 'array' } })), [
    `${P}.properties[l].items: Required value: must be specified`,
  ]);
  t.end();
});

void t.test('structural - int-or-string and preserve-unknown-fields may omit the type', (t) => {
  t.same(
    issues(
      root({
        a: { 'x-kubernetes-int-or-string': true },
        b: { 'x-kubernetes-preserve-unknown-fields': true },
      }),
    ),
    [],
  );
  t.end();
});

void t.test('structural - the int-or-string anyOf pattern is allowed', (t) => {
  const port = {
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
  };
  t.same(issues(root({ port })), []);
  t.end();
});

void t.test(
  'structural - value validations may not carry type, default, description or nullable',
  (t) => {
    const v = {
      type: 'string',
      anyOf: [
        {
          type: 'string',
          description: 'd',
          nullable: true,
          default: 'x',
          additionalProperties: { type: 'string' },
        },
      ],
    };
    t.same(issues(root({ v })), [
      `${P}.properties[v].anyOf[0].additionalProperties: Forbidden: must be undefined to be structural`,
      `${P}.properties[v].anyOf[0].default: Forbidden: must be undefined to be structural`,
      `${P}.properties[v].anyOf[0].description: Forbidden: must be empty to be structural`,
      `${P}.properties[v].anyOf[0].nullable: Forbidden: must be false to be structural`,
      `${P}.properties[v].anyOf[0].type: Forbidden: must be empty to be structural`,
    ]);
    t.end();
  },
);

void t.test('structural - properties in value validations must exist in the structure', (t) => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'string' } },
    anyOf: [{ properties: { b: {} } }],
  };
  t.same(issues(schema), [
    `${P}.properties[b]: Required value: because it is defined in ${P}.anyOf[0].properties[b]`,
  ]);
  t.end();
});

void t.test('structural - metadata in a nested context is forbidden', (t) => {
  const schema = {
    type: 'object',
    properties: { metadata: { type: 'object' } },
    allOf: [{ properties: { metadata: {} } }],
  };
  t.same(issues(schema), [
    `${P}.allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`,
  ]);
  t.end();
});

void t.test('structural - root metadata may only restrict name and generateName', (t) => {
  t.same(
    issues(
      root({
        metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } },
      }),
    ),
    [],
  );
  t.same(
    issues(root({ metadata: { type: 'object', properties: { labels: { type: 'object' } } } })),
    [
      `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
    ],
  );
  t.same(issues(root({ metadata: { type: 'string' } })), [
    `${P}.properties[metadata].type: Invalid value: "string": must be object`,
  ]);
  t.end();
});

void t.test(
  'structural - additionalProperties is forbidden at the root and exclusive with properties',
  (t) => {
    t.same(issues({ type: 'object', additionalProperties: { type: 'string' } }), [
      `${P}.additionalProperties: Forbidden: must not be used at the root`,
    ]);
    t.same(
      issues(
        root({
          m: {
            type: 'object',
            properties: { a: { type: 'string' } },
            additionalProperties: { type: 'string' },
          },
        }),
      ),
      [
        `${P}.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      ],
    );
    t.end();
  },
);

void t.test(
  'structural - embedded resources must be objects with properties or preserved fields',
  (t) => {
    t.same(
      issues(
        root({
          e: {
            type: 'string',
            'x-kubernetes-embedded-resource': true,
            'x-kubernetes-preserve-unknown-fields': true,
          },
        }),
      ),
      [
        `${P}.properties[e].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`,
      ],
    );
    t.same(issues(root({ e: { type: 'object', 'x-kubernetes-embedded-resource': true } })), [
      `${P}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
    ]);
    t.end();
  },
);

void t.test('structural - unsupported keywords are forbidden', (t) => {
  t.same(
    issues(
      root({
        r: { $ref: '#/definitions/x' },
        l: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      }),
    ),
    [
      `${P}.properties[r].$ref: Forbidden: $ref is not supported`,
      `${P}.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      `${P}.properties[r].type: Required value: must not be empty for specified object fields`,
    ],
  );
  t.end();
});

void t.test('structural - unknown types are not supported', (t) => {
  t.same(issues(root({ a: { type: 'float' } })), [
    `${P}.properties[a].type: Unsupported value: "float": supported values: "array", "boolean", "integer", "number", "object", "string"`,
  ]);
  t.end();
});

void t.test('structural - preserve-unknown-fields false is invalid', (t) => {
  t.same(issues(root({ a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } })), [
    `${P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
  ]);
  t.end();
});

void t.test('structural - list-type map needs keys naming scalar item properties', (t) => {
  const l = {
    type: 'array',
    'x-kubernetes-list-type': 'map',
    items: { type: 'object', properties: { n: { type: 'string' } } },
  };
  t.same(issues(root({ l })), [
    `${P}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
  ]);
  t.same(issues(root({ l: { ...l, 'x-kubernetes-list-map-keys': ['m'] } })), [
    `${P}.properties[l].x-kubernetes-list-map-keys: Invalid value: []string{"m"}: entries must all be names of item properties`,
  ]);
  t.end();
});

void t.test('structural - list-type needs an array and a known value', (t) => {
  t.same(issues(root({ a: { type: 'object', 'x-kubernetes-list-type': 'set' } })), [
    `${P}.properties[a].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified`,
  ]);
  t.same(
    issues(
      root({ a: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' } }),
    ),
    [
      `${P}.properties[a].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
    ],
  );
  t.end();
});

void t.test('structural - defaults must validate against their schema', (t) => {
  t.same(issues(root({ n: { type: 'integer', default: 'three' } })), [
    `${P}.properties[n].default: Invalid value: "string":  in body must be of type integer: "string"`,
  ]);
  t.same(
    issues(
      root({ o: { type: 'object', properties: { a: { type: 'integer' } }, default: { a: 'x' } } }),
    ),
    [
      `${P}.properties[o].default.a: Invalid value: "string": a in body must be of type integer: "string"`,
    ],
  );
  t.end();
});

void t.test('structural - defaults must already be pruned', (t) => {
  t.same(
    issues(
      root({
        o: { type: 'object', properties: { a: { type: 'integer' } }, default: { a: 1, b: 2 } },
      }),
    ),
    [
      `${P}.properties[o].default: Invalid value: map[string]interface {}{"a":1, "b":2}: must not have unknown fields`,
    ],
  );
  t.end();
});

void t.test('structural - a non-schema is reported as required', (t) => {
  t.same(issues(null as unknown as JsonObject), [`${P}: Required value: schemas are required`]);
  t.end();
});

void t.test('structural - patterns must compile as Go RE2 patterns', (t) => {
  t.same(issues(root({ a: { type: 'string', pattern: '^(?i)[a-z]+(?P<n>x)\\z' } })), []);
  t.same(
    issues(
      root({ a: { type: 'string', pattern: '^(?=a)b' }, b: { type: 'string', pattern: 'a(' } }),
    ),
    [
      `${P}.properties[a].pattern: Invalid value: "^(?=a)b": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: \`(?=\``,
      `${P}.properties[b].pattern: Invalid value: "a(": must be a valid regular expression, but isn't: error parsing regexp: invalid pattern: \`a(\``,
    ],
  );
  t.end();
});
