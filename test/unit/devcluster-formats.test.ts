import t from 'tap';
import { aggregatedVersionAccepted } from '../../devcluster/discovery/documents.js';
import { openApiV2Protobuf, schemaName } from '../../devcluster/discovery/openapi.js';
import { builtinResourceTypes, formatAge } from '../../devcluster/resources/builtin.js';
import { compareKubeVersions } from '../../devcluster/resources/registry.js';
import { evaluateJsonPath } from '../../devcluster/server/table.js';
import { StatusReasons } from '../../devcluster/api/errors.js';

void t.test('formats - JSONPath filters pick the condition a printer column names', (t) => {
  const object = {
    status: {
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'Synced', status: 'True' },
      ],
    },
  };
  t.same(evaluateJsonPath(object, '.status.conditions[?(@.type=="Synced")].status'), ['True']);
  t.same(evaluateJsonPath(object, '.status.conditions[*].type'), ['Ready', 'Synced']);
  t.same(evaluateJsonPath(object, '.status.conditions[0].status'), ['False']);
  t.same(evaluateJsonPath(object, '.spec.missing'), []);
  t.end();
});

void t.test('formats - ages print as kubectl does', (t) => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  t.equal(formatAge('2026-01-01T11:59:30Z', now), '30s');
  t.equal(formatAge('2026-01-01T11:55:00Z', now), '5m');
  t.equal(formatAge('2026-01-01T11:54:50Z', now), '5m10s');
  t.equal(formatAge('2026-01-01T07:30:00Z', now), '4h30m');
  t.equal(formatAge('2026-01-01T10:00:00Z', now), '120m');
  t.equal(formatAge('2025-12-29T12:00:00Z', now), '3d');
  t.end();
});

void t.test('formats - versions sort GA before beta before alpha', (t) => {
  t.same(['v1alpha1', 'v1beta1', 'v2', 'v1', 'v1beta2'].sort(compareKubeVersions), [
    'v2',
    'v1',
    'v1beta2',
    'v1beta1',
    'v1alpha1',
  ]);
  t.end();
});

void t.test('formats - aggregated discovery is chosen from the Accept header', (t) => {
  t.equal(
    aggregatedVersionAccepted(
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    ),
    'v2',
  );
  t.equal(
    aggregatedVersionAccepted(
      'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
    ),
    'v2beta1',
  );
  t.equal(aggregatedVersionAccepted('application/json'), undefined);
  t.end();
});

void t.test('formats - OpenAPI schema names follow kube conventions', (t) => {
  const deployment = builtinResourceTypes().find((r) => r.kind === 'Deployment');
  t.equal(deployment && schemaName(deployment), 'io.k8s.api.apps.v1.Deployment');
  t.end();
});

void t.test(
  'formats - the protobuf OpenAPI v2 document starts with the swagger version field',
  (t) => {
    const bytes = openApiV2Protobuf('v1.30.6');
    t.same([...bytes.subarray(0, 5)], [0x0a, 3, 0x32, 0x2e, 0x30]);
    t.end();
  },
);

void t.test('formats - the Status reason catalogue and its HTTP codes are pinned', (t) => {
  t.same(StatusReasons, {
    BadRequest: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    MethodNotAllowed: 405,
    NotAcceptable: 406,
    AlreadyExists: 409,
    Conflict: 409,
    Gone: 410,
    Expired: 410,
    RequestEntityTooLarge: 413,
    UnsupportedMediaType: 415,
    Invalid: 422,
    TooManyRequests: 429,
    InternalError: 500,
    ServiceUnavailable: 503,
  });
  t.end();
});
