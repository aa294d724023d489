// Bad inputs get proper Status errors, and the server keeps serving after each.
import t from 'tap';
import {
  rawRequest,
  startCluster,
  type ClusterFixture,
  type RawResponse,
  widgetsCrd,
} from '../harness/devcluster.js';

let fixture: ClusterFixture;
t.before(async () => {
  fixture = await startCluster();
  const crd = widgetsCrd();
  const created = await rawRequest(
    fixture,
    'POST',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    JSON.stringify(crd),
  );
  if (created.status !== 201) throw new Error(`CRD not created: ${created.body}`);
});
t.teardown(async () => {
  await fixture.close();
});
t.afterEach(async () => {
  const version = await rawRequest(fixture, 'GET', '/version');
  if (version.status !== 200) throw new Error('the server stopped serving');
});

interface Status {
  kind: string;
  reason: string;
  code: number;
  message: string;
  details?: { causes?: { field?: string; type?: string; message: string }[] };
}

function status(response: RawResponse): Status {
  return JSON.parse(response.body) as Status;
}

const cms = '/api/v1/namespaces/default/configmaps';
const widgets = '/apis/example.olmq.io/v1/namespaces/default/widgets';

void t.test('bad inputs - malformed JSON is a 400 BadRequest Status', async (t) => {
  const response = await rawRequest(fixture, 'POST', cms, '{"metadata": {');
  t.equal(response.status, 400);
  t.match(status(response), { kind: 'Status', reason: 'BadRequest', code: 400 });
});

void t.test('bad inputs - malformed YAML is a 400 BadRequest Status', async (t) => {
  const response = await rawRequest(fixture, 'POST', cms, 'metadata: [unclosed', {
    'Content-Type': 'application/yaml',
  });
  t.equal(response.status, 400);
  t.equal(status(response).reason, 'BadRequest');
});

void t.test('bad inputs - an unknown version is a 404 NotFound Status', async (t) => {
  const response = await rawRequest(
    fixture,
    'GET',
    '/apis/example.olmq.io/v9/namespaces/default/widgets',
  );
  t.equal(response.status, 404);
  t.match(status(response), { kind: 'Status', reason: 'NotFound' });
});

void t.test('bad inputs - a body of another kind is a 400 BadRequest', async (t) => {
  const response = await rawRequest(
    fixture,
    'POST',
    cms,
    JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }),
  );
  t.equal(response.status, 400);
  t.match(status(response).message, 'does not match the expected kind');
});

void t.test('bad inputs - an invalid name is a 422 Invalid naming metadata.name', async (t) => {
  const response = await rawRequest(
    fixture,
    'POST',
    cms,
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } }),
  );
  t.equal(response.status, 422);
  const body = status(response);
  t.equal(body.reason, 'Invalid');
  t.match(
    body.message,
    'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"',
  );
  t.equal(body.details?.causes?.[0]?.field, 'metadata.name');
});

void t.test(
  'bad inputs - schema violations are a 422 Invalid listing each bad field',
  async (t) => {
    const response = await rawRequest(
      fixture,
      'POST',
      widgets,
      JSON.stringify({
        apiVersion: 'example.olmq.io/v1',
        kind: 'Widget',
        metadata: { name: 'bad' },
        spec: { size: 'huge', replicas: -1 },
      }),
    );
    t.equal(response.status, 422);
    const body = status(response);
    t.equal(body.reason, 'Invalid');
    const fields = (body.details?.causes ?? []).map((c) => c.field).sort();
    t.same(fields, ['spec.replicas', 'spec.size']);
  },
);

void t.test(
  'bad inputs - unknown fields with fieldValidation=Strict are a 400, with Warn a Warning header',
  async (t) => {
    const widget = (name: string) =>
      JSON.stringify({
        apiVersion: 'example.olmq.io/v1',
        kind: 'Widget',
        metadata: { name },
        spec: { size: 'small', extra: 1 },
      });
    const strict = await rawRequest(
      fixture,
      'POST',
      `${widgets}?fieldValidation=Strict`,
      widget('strict'),
    );
    t.equal(strict.status, 400);
    t.match(status(strict).message, 'unknown field "spec.extra"');
    const warn = await rawRequest(
      fixture,
      'POST',
      `${widgets}?fieldValidation=Warn`,
      widget('warned'),
    );
    t.equal(warn.status, 201);
    t.match(String(warn.headers['warning']), '299 - "unknown field \\"spec.extra\\""');
  },
);

void t.test('bad inputs - a body over 3 MiB is a 413 RequestEntityTooLarge', async (t) => {
  const big = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'big' },
    data: { blob: 'x'.repeat(4 * 1024 * 1024) },
  });
  const response = await rawRequest(fixture, 'POST', cms, big);
  t.equal(response.status, 413);
  t.equal(status(response).reason, 'RequestEntityTooLarge');
});

void t.test(
  'bad inputs - a watch from a garbage resourceVersion is a 400 BadRequest',
  async (t) => {
    const response = await rawRequest(fixture, 'GET', `${cms}?watch=true&resourceVersion=garbage`);
    t.equal(response.status, 400);
    t.equal(status(response).reason, 'BadRequest');
  },
);

void t.test(
  'bad inputs - a watch from an expired resourceVersion gets a 410 Expired ERROR event',
  async (t) => {
    fixture.cluster.faults.expireWatches();
    const response = await rawRequest(fixture, 'GET', `${cms}?watch=true&resourceVersion=1`);
    t.equal(response.status, 200);
    const event = JSON.parse(response.body.trim().split('\n')[0] ?? '{}') as {
      type: string;
      object: Status;
    };
    t.equal(event.type, 'ERROR');
    t.match(event.object, { reason: 'Expired', code: 410 });
  },
);

void t.test('bad inputs - a garbage continue token is a 400 BadRequest', async (t) => {
  const response = await rawRequest(fixture, 'GET', `${cms}?limit=1&continue=garbage`);
  t.equal(response.status, 400);
});

void t.test('bad inputs - an unsupported patch type is a 415 UnsupportedMediaType', async (t) => {
  await rawRequest(fixture, 'POST', cms, JSON.stringify({ metadata: { name: 'patchme' } }));
  const response = await rawRequest(fixture, 'PATCH', `${cms}/patchme`, '{}', {
    'Content-Type': 'text/plain',
  });
  t.equal(response.status, 415);
  t.equal(status(response).reason, 'UnsupportedMediaType');
  t.equal(
    status(response).message,
    'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
  );
});

void t.test(
  'bad inputs - a strategic merge patch of a custom resource is a 415 naming the accepted types, before the object is read',
  async (t) => {
    const response = await rawRequest(fixture, 'PATCH', `${widgets}/missing`, '{}', {
      'Content-Type': 'application/strategic-merge-patch+json',
    });
    t.equal(response.status, 415);
    t.equal(
      status(response).message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  },
);

void t.test('bad inputs - a bad label selector is a 400 BadRequest', async (t) => {
  const response = await rawRequest(
    fixture,
    'GET',
    `${cms}?labelSelector=${encodeURIComponent('a in (')}`,
  );
  t.equal(response.status, 400);
});

void t.test('bad inputs - requests without credentials are a 401 Unauthorized', async (t) => {
  const response = await rawRequest(
    fixture,
    'GET',
    cms,
    undefined,
    { Authorization: 'Bearer not-a-token' },
    'none',
  );
  t.equal(response.status, 401);
  t.equal(status(response).reason, 'Unauthorized');
});

void t.test(
  'bad inputs - a typo in a built-in kind with fieldValidation=Strict is a 400 naming the field',
  async (t) => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'typo', lables: { a: 'b' } },
      dta: { a: '1' },
    });
    const response = await rawRequest(fixture, 'POST', `${cms}?fieldValidation=Strict`, body);
    t.equal(response.status, 400);
    t.equal(
      status(response).message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dta", unknown field "metadata.lables"',
    );
  },
);

void t.test('bad inputs - ConfigMap data over 1 MiB is a 422 Invalid', async (t) => {
  const body = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'large' },
    data: { blob: 'x'.repeat(2 * 1024 * 1024) },
  });
  const response = await rawRequest(fixture, 'POST', cms, body);
  t.equal(response.status, 422);
  t.equal(
    status(response).message,
    'ConfigMap "large" is invalid: []: Too long: must have at most 1048576 bytes',
  );
});
