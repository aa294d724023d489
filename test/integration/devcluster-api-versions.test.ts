// Versions served from another version's storage, as kube-apiserver converts them: autoscaling/v1
// HorizontalPodAutoscalers (stored as v2) and events.k8s.io/v1 Events (stored as core/v1 Events).
// One object, written through either version, reads, lists and watches in each version's form.
import t from 'tap';
import { rawRequest, startCluster, type ClusterFixture } from '../harness/devcluster.js';

const tableAccept = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };

async function json(
  fixture: ClusterFixture,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const answer = await rawRequest(
    fixture,
    method,
    path,
    body === undefined ? undefined : JSON.stringify(body),
    method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : {},
  );
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.body}`);
  return JSON.parse(answer.body) as Record<string, unknown>;
}

/** The first event of a watch from `resourceVersion` (the watch ends after a second). */
async function firstWatchEvent(
  fixture: ClusterFixture,
  path: string,
  resourceVersion: string,
): Promise<unknown> {
  const answer = await rawRequest(
    fixture,
    'GET',
    `${path}?watch=true&resourceVersion=${resourceVersion}&timeoutSeconds=1`,
  );
  return JSON.parse(answer.body.split('\n')[0] ?? '{}') as unknown;
}

const rvOf = (list: Record<string, unknown>): string =>
  (list['metadata'] as { resourceVersion: string }).resourceVersion;

void t.test(
  'devcluster versions - autoscaling/v1 and v2 are one HorizontalPodAutoscaler',
  async (t) => {
    const fixture = await startCluster();
    t.teardown(() => fixture.close());
    const v1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
    const v2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
    const before = rvOf(await json(fixture, 'GET', v1));
    const created = await json(fixture, 'POST', v1, {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        maxReplicas: 5,
        targetCPUUtilizationPercentage: 50,
      },
    });
    t.match(created, {
      apiVersion: 'autoscaling/v1',
      spec: { minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
    });
    t.notOk('metrics' in (created['spec'] as object), 'no v2 field in the v1 answer');
    t.match(await json(fixture, 'GET', `${v2}/web`), {
      apiVersion: 'autoscaling/v2',
      spec: {
        minReplicas: 1,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { averageUtilization: 50 } } },
        ],
      },
    });
    // A second metric written through v2 is kept in v1's annotation, the CPU target in its field.
    await json(fixture, 'PATCH', `${v2}/web`, {
      spec: {
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } },
          },
          {
            type: 'Resource',
            resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } },
          },
        ],
      },
    });
    const read = await json(fixture, 'GET', `${v1}/web`);
    t.equal((read['spec'] as Record<string, unknown>)['targetCPUUtilizationPercentage'], 60);
    const annotations =
      (read['metadata'] as { annotations?: Record<string, string> }).annotations ?? {};
    t.match(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/metrics'] ?? '[]'), [
      { resource: { name: 'memory' } },
    ]);
    // Writing the v1 form back (as kubectl edit does) keeps the memory metric.
    await json(fixture, 'PUT', `${v1}/web`, {
      ...read,
      spec: { ...(read['spec'] as object), maxReplicas: 7 },
    });
    t.match(await json(fixture, 'GET', `${v2}/web`), {
      spec: {
        maxReplicas: 7,
        metrics: [{ resource: { name: 'cpu' } }, { resource: { name: 'memory' } }],
      },
    });
    t.match(await firstWatchEvent(fixture, v1, before), {
      type: 'ADDED',
      object: { apiVersion: 'autoscaling/v1', spec: { targetCPUUtilizationPercentage: 50 } },
    });
    const table = JSON.parse(
      (await rawRequest(fixture, 'GET', v1, undefined, tableAccept)).body,
    ) as {
      rows: { cells: unknown[] }[];
    };
    t.same(table.rows[0]?.cells.slice(0, 6), [
      'web',
      'Deployment/web',
      '<unknown>/60%, <unknown>/100Mi',
      '1',
      '7',
      '0',
    ]);
    t.equal((await rawRequest(fixture, 'DELETE', `${v1}/web`)).status, 200);
    t.equal(
      (await rawRequest(fixture, 'GET', `${v2}/web`)).status,
      404,
      'deleted through v1, gone in v2',
    );
  },
);

void t.test(
  'devcluster versions - events.k8s.io/v1 and core/v1 Events are one Event',
  async (t) => {
    const fixture = await startCluster();
    t.teardown(() => fixture.close());
    const core = '/api/v1/namespaces/default/events';
    const events = '/apis/events.k8s.io/v1/namespaces/default/events';
    const before = rvOf(await json(fixture, 'GET', events));
    await json(fixture, 'POST', core, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'core-made' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
      reason: 'Started',
      message: 'Started container',
      type: 'Normal',
      source: { component: 'kubelet' },
      count: 2,
    });
    t.match(await json(fixture, 'GET', `${events}/core-made`), {
      apiVersion: 'events.k8s.io/v1',
      regarding: { kind: 'Pod', name: 'p' },
      note: 'Started container',
      deprecatedSource: { component: 'kubelet' },
      deprecatedCount: 2,
      reason: 'Started',
    });
    await json(fixture, 'POST', events, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'new-made' },
      eventTime: '2026-11-26T10:00:00.000000Z',
      reportingController: 'example.com/controller',
      reportingInstance: 'controller-1',
      action: 'Scale',
      reason: 'Scaled',
      regarding: { kind: 'Deployment', namespace: 'default', name: 'd' },
      note: 'scaled to 3',
      type: 'Normal',
    });
    t.match(await json(fixture, 'GET', `${core}/new-made`), {
      apiVersion: 'v1',
      involvedObject: { kind: 'Deployment', name: 'd' },
      message: 'scaled to 3',
      reportingComponent: 'example.com/controller',
      reportingInstance: 'controller-1',
    });
    const selected = await json(fixture, 'GET', `${events}?fieldSelector=regarding.name%3Dd`);
    t.same(
      (selected['items'] as { metadata: { name: string } }[]).map((e) => e.metadata.name),
      ['new-made'],
      'field selectors of events.k8s.io read the stored fields',
    );
    t.match(await firstWatchEvent(fixture, events, before), {
      type: 'ADDED',
      object: {
        apiVersion: 'events.k8s.io/v1',
        metadata: { name: 'core-made' },
        note: 'Started container',
      },
    });
  },
);
