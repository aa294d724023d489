// API semantics over raw HTTPS: CRD versions and cleanup, subresources, discovery and OpenAPI
// documents, tables, watch bookmarks and timeouts, ClusterRole aggregation.
import t from 'tap';
import {
  rawRequest,
  startCluster,
  type ClusterFixture,
  widgetsCrd,
} from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

let fixture: ClusterFixture;
const crd = widgetsCrd();
const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const widgets = '/apis/example.olmq.io/v1/namespaces/default/widgets';

t.before(async () => {
  fixture = await startCluster({ bookmarkIntervalMs: 50 });
});
t.teardown(async () => {
  await fixture.close();
});

type Json = Record<string, unknown>;
async function json(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const response = await rawRequest(
    fixture,
    method,
    path,
    body === undefined ? undefined : JSON.stringify(body),
    headers,
  );
  return { status: response.status, body: JSON.parse(response.body) as Json };
}

const widget = (name: string, extra: Json = {}) => ({
  apiVersion: 'example.olmq.io/v1',
  kind: 'Widget',
  metadata: { name },
  spec: { size: 'small', ...extra },
});

void t.test(
  'api - a created CRD is established and served in the same request cycle',
  async (t) => {
    const created = await json('POST', crdPath, crd);
    t.equal(created.status, 201);
    const conditions = (
      created.body['status'] as { conditions: { type: string; status: string }[] }
    ).conditions;
    t.same(conditions.map((c) => `${c.type}=${c.status}`).sort(), [
      'Established=True',
      'NamesAccepted=True',
    ]);
    t.same((created.body['status'] as Json)['storedVersions'], ['v1']);
    const object = await json('POST', widgets, widget('first'));
    t.equal(object.status, 201);
  },
);

void t.test('api - CRD defaults are applied and unknown fields pruned', async (t) => {
  const created = await json('POST', widgets, widget('defaults', { unknownThing: true }));
  t.same(created.body['spec'], { size: 'small', replicas: 1, colour: 'blue' });
});

void t.test(
  'api - every served version reads the same object with its own apiVersion',
  async (t) => {
    const v1alpha1 = await json(
      'GET',
      '/apis/example.olmq.io/v1alpha1/namespaces/default/widgets/first',
    );
    t.equal(v1alpha1.status, 200);
    t.equal(v1alpha1.body['apiVersion'], 'example.olmq.io/v1alpha1');
    const v1 = await json('GET', `${widgets}/first`);
    t.equal((v1.body['metadata'] as Json)['uid'], (v1alpha1.body['metadata'] as Json)['uid']);
  },
);

void t.test(
  'api - the status subresource changes status only and does not bump generation',
  async (t) => {
    const current = await json('GET', `${widgets}/first`);
    const updated = await json('PUT', `${widgets}/first/status`, {
      ...current.body,
      spec: { size: 'large' },
      status: { phase: 'Ready' },
    });
    t.equal(updated.status, 200);
    t.same(updated.body['status'], { phase: 'Ready' });
    t.equal((updated.body['spec'] as Json)['size'], 'small');
    t.equal((updated.body['metadata'] as Json)['generation'], 1);
  },
);

void t.test('api - the scale subresource reads and writes the replica path', async (t) => {
  const scale = await json('GET', `${widgets}/first/scale`);
  t.match(scale.body, { kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 1 } });
  const written = await json('PUT', `${widgets}/first/scale`, {
    ...scale.body,
    spec: { replicas: 4 },
  });
  t.equal(written.status, 200);
  const object = await json('GET', `${widgets}/first`);
  t.equal((object.body['spec'] as Json)['replicas'], 4);
  t.equal((object.body['metadata'] as Json)['generation'], 2, 'a spec change bumps generation');
});

void t.test('api - Table output uses the CRD printer columns', async (t) => {
  const table = await json('GET', widgets, undefined, {
    Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
  });
  t.equal(table.body['kind'], 'Table');
  const columns = (table.body['columnDefinitions'] as { name: string }[]).map((c) => c.name);
  t.same(columns, ['Name', 'Size', 'Ready', 'Age']);
  const rows = table.body['rows'] as { cells: unknown[]; object: Json }[];
  t.same(rows[0]?.cells.slice(0, 2), ['defaults', 'small']);
  t.equal(rows[0]?.object['kind'], 'PartialObjectMetadata');
});

void t.test(
  'api - aggregated discovery lists CRD resources with categories and short names',
  async (t) => {
    const discovery = await json('GET', '/apis', undefined, {
      Accept:
        'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    });
    t.equal(discovery.body['kind'], 'APIGroupDiscoveryList');
    const group = (
      discovery.body['items'] as {
        metadata: { name: string };
        versions: { version: string; resources: Json[] }[];
      }[]
    ).find((g) => g.metadata.name === 'example.olmq.io');
    t.same(
      group?.versions.map((v) => v.version),
      ['v1', 'v1alpha1'],
    );
    t.match(group?.versions[0]?.resources[0], {
      resource: 'widgets',
      shortNames: ['wd'],
      categories: ['olm'],
      scope: 'Namespaced',
    });
  },
);

void t.test(
  'api - the OpenAPI v3 document of a CRD group carries its schema and GVK',
  async (t) => {
    const index = await json('GET', '/openapi/v3');
    const entry = (index.body['paths'] as Record<string, { serverRelativeURL: string }>)[
      'apis/example.olmq.io/v1'
    ];
    t.ok(entry);
    const document = await json('GET', entry?.serverRelativeURL ?? '');
    const schema = (document.body['components'] as { schemas: Record<string, Json> }).schemas[
      'io.olmq.example.v1.Widget'
    ];
    t.same(schema?.['x-kubernetes-group-version-kind'], [
      { group: 'example.olmq.io', version: 'v1', kind: 'Widget' },
    ]);
    const v2 = await rawRequest(fixture, 'GET', '/openapi/v2');
    t.equal(v2.status, 200);
  },
);

void t.test('api - watches send bookmarks and end at timeoutSeconds', async (t) => {
  const started = Date.now();
  const response = await rawRequest(
    fixture,
    'GET',
    `${widgets}?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`,
  );
  t.ok(Date.now() - started >= 900, 'the watch lasted about timeoutSeconds');
  const events = response.body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string });
  t.ok(events.some((e) => e.type === 'ADDED'));
  t.ok(events.some((e) => e.type === 'BOOKMARK'));
});

void t.test(
  'api - a ClusterRole aggregationRule collects the rules of labelled roles',
  async (t) => {
    const rbac = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    await json('POST', rbac, {
      metadata: { name: 'collector' },
      aggregationRule: {
        clusterRoleSelectors: [{ matchLabels: { 'example.olmq.io/aggregate': 'true' } }],
      },
    });
    await json('POST', rbac, {
      metadata: { name: 'piece', labels: { 'example.olmq.io/aggregate': 'true' } },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    });
    const rules = await waitFor('collector to aggregate', async () => {
      const role = await json('GET', `${rbac}/collector`);
      const r = role.body['rules'] as Json[] | undefined;
      return r !== undefined && r.length > 0 ? r : undefined;
    });
    t.match(rules, [{ resources: ['configmaps'], verbs: ['get'] }]);

    const mergePatch = { 'Content-Type': 'application/merge-patch+json' };
    // Nested: a role aggregating the collector gets what the collector got.
    await json(
      'PATCH',
      `${rbac}/collector`,
      {
        metadata: { labels: { 'example.olmq.io/aggregate-outer': 'true' } },
      },
      mergePatch,
    );
    await json('POST', rbac, {
      metadata: { name: 'outer' },
      aggregationRule: {
        clusterRoleSelectors: [{ matchLabels: { 'example.olmq.io/aggregate-outer': 'true' } }],
      },
    });
    const rulesOf = async (name: string): Promise<Json[]> =>
      ((await json('GET', `${rbac}/${name}`)).body['rules'] as Json[] | undefined) ?? [];
    const outer = await waitFor('outer to aggregate the collector', async () => {
      const r = await rulesOf('outer');
      return r.length > 0 ? r : undefined;
    });
    t.match(outer, [{ resources: ['configmaps'], verbs: ['get'] }]);

    // A role whose label goes away no longer feeds either, down the chain.
    await json(
      'PATCH',
      `${rbac}/piece`,
      {
        metadata: { labels: { 'example.olmq.io/aggregate': null } },
      },
      mergePatch,
    );
    await waitFor('collector and outer to drop the unlabelled role', async () =>
      (await rulesOf('collector')).length === 0 && (await rulesOf('outer')).length === 0
        ? true
        : undefined,
    );
    t.pass('rules of a role no longer selected are removed');
  },
);

void t.test('api - deleting a CRD deletes its objects and stops serving it', async (t) => {
  const deleted = await rawRequest(fixture, 'DELETE', `${crdPath}/widgets.example.olmq.io`);
  t.ok(deleted.status === 200 || deleted.status === 202);
  await waitFor('the CRD to be gone', async () =>
    (await rawRequest(fixture, 'GET', `${crdPath}/widgets.example.olmq.io`)).status === 404
      ? true
      : undefined,
  );
  const list = await rawRequest(fixture, 'GET', widgets);
  t.equal(list.status, 404);
  const again = await json('POST', crdPath, crd);
  t.equal(again.status, 201);
  const empty = await json('GET', widgets);
  t.same(empty.body['items'], [], 'objects did not come back with the CRD');
});
