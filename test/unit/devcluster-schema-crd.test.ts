import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import { formatCause, validateCustomResourceDefinition } from '../../shared/kube/schema/index.js';

const schema: JsonObject = {
  type: 'object',
  properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } } },
};

function crd(spec: JsonObject = {}, name = 'widgets.example.com'): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      ...spec,
    },
  };
}
const lines = (object: JsonObject): string[] =>
  validateCustomResourceDefinition(object).map(formatCause);

void t.test('crd - a well-formed CRD is valid', (t) => {
  t.same(validateCustomResourceDefinition(crd()), []);
  t.end();
});

void t.test('crd - the name must be plural.group', (t) => {
  t.same(validateCustomResourceDefinition(crd({}, 'gadgets.example.com')), [
    {
      type: 'FieldValueInvalid',
      field: 'metadata.name',
      message: 'Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group',
    },
  ]);
  t.end();
});

void t.test('crd - the group must be a DNS subdomain with a dot', (t) => {
  t.same(lines(crd({ group: 'example' }, 'widgets.example')), [
    'spec.group: Invalid value: "example": should be a domain with at least one dot',
  ]);
  const groupCauses = validateCustomResourceDefinition(crd({ group: '' }, 'widgets.')).filter(
    (c) => c.field === 'spec.group',
  );
  t.same(groupCauses, [
    { type: 'FieldValueRequired', field: 'spec.group', message: 'Required value' },
  ]);
  t.end();
});

void t.test('crd - scope must be Namespaced or Cluster', (t) => {
  t.same(lines(crd({ scope: 'Global' })), [
    'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
  ]);
  t.end();
});

void t.test('crd - exactly one version is the storage version', (t) => {
  const versions = [
    { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } },
    { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: schema } },
  ];
  const causes = validateCustomResourceDefinition(crd({ versions }));
  t.equal(causes.length, 1);
  t.equal(causes[0]?.field, 'spec.versions');
  t.match(causes[0]?.message, /: must have exactly one version marked as storage version$/);
  t.end();
});

void t.test('crd - version names are unique DNS-1035 labels', (t) => {
  const versions = [
    { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } },
    { name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: schema } },
    { name: 'V2', served: true, storage: false, schema: { openAPIV3Schema: schema } },
  ];
  const out = lines(crd({ versions }));
  t.equal(out.length, 2);
  t.equal(
    out[0],
    `spec.versions[2].name: Invalid value: "V2": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
  );
  t.match(out[1], /^spec\.versions: Invalid value: .*: must contain unique version names$/);
  t.end();
});

void t.test(
  'crd - names are required and well-formed, singular and listKind are defaulted',
  (t) => {
    t.same(lines(crd({ names: { plural: 'widgets', kind: 'Widget' } })), []);
    t.same(
      lines(
        crd({
          names: { plural: 'widgets', kind: 'Widget', listKind: 'Widget', shortNames: ['w_1'] },
        }),
      ),
      [
        `spec.names.shortNames[0]: Invalid value: "w_1": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
        'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same',
      ],
    );
    t.same(lines(crd({ names: { plural: 'widgets' } })), [
      'spec.names.kind: Required value',
      'spec.names.singular: Required value',
      'spec.names.listKind: Required value',
    ]);
    t.end();
  },
);

void t.test('crd - a schema shared by all versions is reported under spec.validation', (t) => {
  const bad = { type: 'object', properties: { spec: { properties: {} } } };
  const versions = [
    { name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: bad } },
    { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: bad } },
  ];
  t.same(lines(crd({ versions })), [
    'spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
  ]);
  t.end();
});

void t.test('crd - differing schemas are reported per version', (t) => {
  const bad = { type: 'object', properties: { spec: { properties: {} } } };
  const versions = [
    { name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: schema } },
    { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: bad } },
  ];
  t.same(lines(crd({ versions })), [
    'spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
  ]);
  t.end();
});

void t.test('crd - schemas are required', (t) => {
  t.same(lines(crd({ versions: [{ name: 'v1', served: true, storage: true }] })), [
    'spec.validation.openAPIV3Schema: Required value: schemas are required',
  ]);
  t.end();
});

void t.test('crd - with the status subresource the schema root is restricted', (t) => {
  const rooted = { ...schema, anyOf: [{ required: ['spec'] }] };
  const versions = [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: { openAPIV3Schema: rooted },
      subresources: { status: {} },
    },
  ];
  const out = lines(crd({ versions }));
  t.equal(out.length, 1);
  t.match(
    out[0],
    /^spec\.validation\.openAPIV3Schema: Invalid value: .*: only \[Description Type .*\] fields are allowed at the root of the schema if the status subresource is enabled$/,
  );
  t.end();
});

void t.test('crd - printer columns need a name, a known type and a JSON path', (t) => {
  const versions = [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: { openAPIV3Schema: schema },
      additionalPrinterColumns: [
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: '', type: 'float', jsonPath: 'spec.replicas' },
        { name: 'Age', type: 'date' },
      ],
    },
  ];
  t.same(lines(crd({ versions })), [
    'spec.additionalPrinterColumns[1].name: Required value',
    'spec.additionalPrinterColumns[1].type: Unsupported value: "float": supported values: "boolean", "date", "integer", "number", "string"',
    'spec.additionalPrinterColumns[1].JSONPath: Invalid value: "spec.replicas": must be a simple json path starting with .',
    'spec.additionalPrinterColumns[2].JSONPath: Required value',
  ]);
  t.end();
});

void t.test('crd - scale subresource paths must point under spec and status', (t) => {
  const subresources = {
    scale: {
      specReplicasPath: '.status.replicas',
      statusReplicasPath: '',
      labelSelectorPath: '.x',
    },
  };
  const versions = [
    { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, subresources },
  ];
  t.same(lines(crd({ versions })), [
    'spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec',
    'spec.subresources.scale.statusReplicasPath: Required value',
    'spec.subresources.scale.labelSelectorPath: Invalid value: ".x": should be a json path under either .spec or .status',
  ]);
  t.end();
});

void t.test('crd - conversion strategy is None or Webhook', (t) => {
  t.same(lines(crd({ conversion: { strategy: 'None' } })), []);
  t.same(lines(crd({ conversion: { strategy: 'Magic' } })), [
    'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"',
  ]);
  t.end();
});

void t.test('crd - webhook conversion needs a client config and review versions', (t) => {
  t.same(lines(crd({ conversion: { strategy: 'Webhook' } })), [
    'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
    'spec.conversion.conversionReviewVersions: Required value',
  ]);
  const webhook = {
    clientConfig: { service: { name: 'conv', namespace: 'ns', path: '/convert', port: 443 } },
    conversionReviewVersions: ['v1'],
  };
  t.same(lines(crd({ conversion: { strategy: 'Webhook', webhook } })), []);
  t.same(
    lines(
      crd({
        conversion: {
          strategy: 'Webhook',
          webhook: { clientConfig: { url: 'http://x/' }, conversionReviewVersions: ['v3'] },
        },
      }),
    ),
    [
      `spec.conversion.webhookClientConfig.url: Invalid value: "http://x/": 'https' is the only allowed URL scheme`,
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v3"}: must include at least one of v1, v1beta1',
    ],
  );
  t.end();
});

void t.test('crd - preserveUnknownFields true is rejected in v1', (t) => {
  t.same(lines(crd({ preserveUnknownFields: true })), [
    'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
  ]);
  t.end();
});

void t.test('crd - webhook settings are forbidden without the Webhook strategy', (t) => {
  const webhook = {
    clientConfig: { url: 'https://conv.example.com/' },
    conversionReviewVersions: ['v1'],
  };
  t.same(lines(crd({ conversion: { strategy: 'None', webhook } })), [
    'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
    'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
  ]);
  t.end();
});

void t.test('crd - kind may have mixed case but must otherwise be a DNS label', (t) => {
  t.same(
    lines(
      crd({
        names: { plural: 'widgets', kind: 'My_Widget', singular: 'widget', listKind: 'WidgetList' },
      }),
    ),
    [
      `spec.names.kind: Invalid value: "My_Widget": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ],
  );
  t.end();
});

void t.test('crd - a deprecation warning needs a deprecated version', (t) => {
  const versions = [
    {
      name: 'v1',
      served: true,
      storage: true,
      deprecationWarning: 'old',
      schema: { openAPIV3Schema: schema },
    },
  ];
  t.same(lines(crd({ versions })), [
    'spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions',
  ]);
  t.end();
});
