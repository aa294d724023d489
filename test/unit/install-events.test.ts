import t from 'tap';
import { csvNamespaceSnapshot } from '../harness/csv-snapshot.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { coreEvent, eventName } from '../../shared/kube/events.js';
import { parseWarningHeader } from '../../shared/kube/warnings.js';
import { csvPhaseEvent } from '../../functions/install/csv/events.js';
import { decideNamespace } from '../../functions/install/csv/decide.js';
import { csvCleanupFinalizer } from '../../functions/install/csv/gates.js';
import { appliedWithWarningsEvent } from '../../functions/install/install-plan/events.js';
import type { CsvObject, InstallPlanObject } from '../harness/install-fixtures.js';
import { decideRbacRetry, scopedNamespacesOf } from '../../functions/install/rbac-retry/decide.js';
import { resourceTypesOfCrd } from '../../devcluster/resources/crds.js';

const now = new Date('2026-01-01T00:00:00.250Z');

t.test('warnings - a Kubernetes Warning header gives code, agent and unquoted text', (t) => {
  t.same(parseWarningHeader('299 - "example.com/v1 Widget is deprecated"'), [
    { code: 299, agent: '-', text: 'example.com/v1 Widget is deprecated' },
  ]);
  t.end();
});

t.test('warnings - several warnings, escapes and a warn-date in one header value', (t) => {
  t.same(
    parseWarningHeader(
      '299 - "unknown field \\"spec.foo\\"", 299 - "a, b" "Sat, 01 Jan 2000 00:00:00 GMT",110 proxy "stale"',
    ),
    [
      { code: 299, agent: '-', text: 'unknown field "spec.foo"' },
      { code: 299, agent: '-', text: 'a, b' },
      { code: 110, agent: 'proxy', text: 'stale' },
    ],
  );
  t.end();
});

t.test('warnings - a malformed header yields what was read before the fault, never throws', (t) => {
  t.same(parseWarningHeader(''), []);
  t.same(parseWarningHeader('garbage'), []);
  t.same(parseWarningHeader('299 - unquoted'), []);
  t.same(parseWarningHeader('299 - "ok", 299 - "unterminated'), [
    { code: 299, agent: '-', text: 'ok' },
  ]);
  t.end();
});

const csvRef = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  namespace: 'ns1',
  name: 'etcdoperator.v0.9.4',
  uid: 'u1',
};

t.test('events - the name is deterministic and differs per reason, message and type', (t) => {
  const a = { type: 'Normal' as const, reason: 'InstallSucceeded', message: 'done' };
  t.equal(eventName(csvRef, a), eventName(csvRef, { ...a }), 'same Event, same name');
  t.match(eventName(csvRef, a), /^etcdoperator\.v0\.9\.4\.[0-9a-f]{16}$/);
  t.not(eventName(csvRef, a), eventName(csvRef, { ...a, message: 'other' }));
  t.not(eventName(csvRef, a), eventName(csvRef, { ...a, type: 'Warning' }));
  t.not(eventName(csvRef, a), eventName({ ...csvRef, uid: 'u2' }, a), 'another incarnation');
  const long = eventName({ ...csvRef, name: 'x'.repeat(253) }, a);
  t.ok(long.length <= 253, 'a long object name still gives a valid Event name');
  t.end();
});

t.test('events - a core/v1 Event as client-go records it, in whole seconds', (t) => {
  const event = coreEvent(
    { ...csvRef, fieldPath: 'status.plan[1]' },
    { type: 'Warning', reason: 'R', message: 'm' },
    now,
  );
  t.match(event, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { namespace: 'ns1' },
    involvedObject: { ...csvRef, fieldPath: 'status.plan[1]' },
    type: 'Warning',
    reason: 'R',
    message: 'm',
    count: 1,
    source: { component: 'operator-lifecycle-manager' },
    firstTimestamp: '2026-01-01T00:00:00Z',
    lastTimestamp: '2026-01-01T00:00:00Z',
  });
  const cluster = coreEvent(
    { apiVersion: 'v1', kind: 'Namespace', name: 'ns1' },
    { type: 'Normal', reason: 'R', message: 'm' },
    now,
  );
  t.equal(cluster.metadata.namespace, 'default', 'cluster-scoped objects: Events in default');
  t.end();
});

const csv: CsvObject = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'etcdoperator.v0.9.4', namespace: 'ns1', uid: 'u1', resourceVersion: '7' },
};

t.test('csv events - a phase write is a Normal Event with the status reason and message', (t) => {
  const event = csvPhaseEvent(
    csv,
    undefined,
    { phase: 'Pending', reason: 'RequirementsUnknown', message: 'requirements not yet checked' },
    now,
  );
  t.match(event, {
    type: 'Normal',
    reason: 'RequirementsUnknown',
    message: 'requirements not yet checked',
    involvedObject: { kind: 'ClusterServiceVersion', name: 'etcdoperator.v0.9.4', uid: 'u1' },
  });
  t.end();
});

t.test('csv events - Failed phases are Warning Events', (t) => {
  t.match(
    csvPhaseEvent(
      csv,
      { phase: 'Installing', reason: 'InstallSucceeded', message: 'x' },
      { phase: 'Failed', reason: 'InstallCheckFailed', message: 'install timeout' },
      now,
    ),
    { type: 'Warning', reason: 'InstallCheckFailed', message: 'install timeout' },
  );
  t.end();
});

t.test('csv events - no Event when phase, reason and message stay', (t) => {
  const status = { phase: 'Succeeded', reason: 'InstallSucceeded', message: 'm' };
  t.equal(csvPhaseEvent(csv, status, { ...status, lastUpdateTime: 'later' }, now), undefined);
  t.ok(csvPhaseEvent(csv, status, { ...status, message: 'other' }, now), 'a new message is');
  t.end();
});

t.test('csv events - DetectedClusterChange is written without an Event, as upstream', (t) => {
  t.equal(
    csvPhaseEvent(
      csv,
      { phase: 'Failed', reason: 'InstallComponentFailedNoRetry', message: 'x' },
      {
        phase: 'Pending',
        reason: 'DetectedClusterChange',
        message: 'Cluster resources changed state',
      },
      now,
    ),
    undefined,
  );
  t.end();
});

const og: KubeObject = {
  apiVersion: 'operators.coreos.com/v1',
  kind: 'OperatorGroup',
  metadata: { name: 'og', namespace: 'ns1' },
  spec: { targetNamespaces: ['ns1'] },
  status: { namespaces: ['ns1'] },
};

const snapshot = (csvs: CsvObject[]) => csvNamespaceSnapshot(now, csvs, [og]);

const member: CsvObject = {
  ...csv,
  metadata: {
    ...csv.metadata,
    finalizers: [csvCleanupFinalizer],
    annotations: {
      'olm.operatorGroup': 'og',
      'olm.operatorNamespace': 'ns1',
      'olm.targetNamespaces': 'ns1',
    },
  },
  spec: {
    installModes: [{ type: 'OwnNamespace', supported: true }],
    install: { strategy: 'deployment', spec: { deployments: [] } },
    customresourcedefinitions: { owned: [{ name: 'missing.example.com', version: 'v1' }] },
  },
};

t.test('csv events - each chained move of one pass has its Event, in order', (t) => {
  const { writes } = decideNamespace(snapshot([member]));
  const c = writes.csvs[0];
  t.equal(c?.status?.phase, 'Pending');
  t.equal(c?.status?.reason, 'RequirementsNotMet');
  t.same(
    c?.events?.map((e) => [e['type'], e['reason']]),
    [
      ['Normal', 'RequirementsUnknown'],
      ['Normal', 'RequirementsNotMet'],
    ],
  );
  t.end();
});

t.test('csv events - a pass that changes nothing records no Event', (t) => {
  const { writes } = decideNamespace(snapshot([member]));
  const settled = { ...member, status: writes.csvs[0]?.status };
  const again = decideNamespace(snapshot([settled]));
  t.equal(again.writes.csvs[0]?.events, undefined);
  t.end();
});

t.test(
  'csv events - the install strategy move leaves its Event to apply (it alone knows the outcome)',
  (t) => {
    const ready: CsvObject = {
      ...member,
      spec: {
        ...member.spec,
        customresourcedefinitions: {},
        install: {
          strategy: 'deployment',
          spec: {
            deployments: [
              {
                name: 'op',
                spec: {
                  selector: { matchLabels: { app: 'op' } },
                  template: {
                    metadata: { labels: { app: 'op' } },
                    spec: { containers: [{ name: 'op', image: 'op' }] },
                  },
                },
              },
            ],
          },
        },
      },
      status: { phase: 'InstallReady', reason: 'AllRequirementsMet', message: 'x' },
    };
    const { writes } = decideNamespace(snapshot([ready]));
    t.equal(writes.csvs[0]?.onFailure, 'installStrategy');
    t.equal(writes.csvs[0]?.status?.phase, 'Installing');
    t.equal(writes.csvs[0]?.events, undefined);
    t.end();
  },
);

t.test('csv events - a move chained past a strategy without objects keeps its Event', (t) => {
  const ready: CsvObject = {
    ...member,
    spec: { ...member.spec, customresourcedefinitions: {} },
    status: { phase: 'InstallReady', reason: 'AllRequirementsMet', message: 'x' },
  };
  const { writes } = decideNamespace(snapshot([ready]));
  t.equal(writes.csvs[0]?.status?.phase, 'Succeeded');
  t.same(
    writes.csvs[0]?.events?.map((e) => [e['reason'], e['message']]),
    [
      ['InstallSucceeded', 'waiting for install components to report healthy'],
      ['InstallSucceeded', 'install strategy completed with no errors'],
    ],
  );
  t.end();
});

t.test('rbac retry - NoRetry CSVs go Pending/DetectedClusterChange; others stay', (t) => {
  const failed = (name: string, reason: string): CsvObject => ({
    ...csv,
    metadata: { ...csv.metadata, name },
    status: { phase: 'Failed', reason, message: 'install strategy failed: forbidden' },
  });
  const copied = failed('copy', 'InstallComponentFailedNoRetry');
  copied.metadata.labels = { 'olm.copiedFrom': 'other' };
  const { writes } = decideRbacRetry({
    namespace: 'ns1',
    now,
    csvs: [
      failed('stuck', 'InstallComponentFailedNoRetry'),
      failed('retrying', 'InstallComponentFailed'),
      copied,
    ],
  });
  t.same(
    writes.csvs.map((c) => c.metadata.name),
    ['stuck'],
  );
  t.match(writes.csvs[0]?.status, {
    phase: 'Pending',
    reason: 'DetectedClusterChange',
    message: 'Cluster resources changed state',
    conditions: [{ phase: 'Pending', reason: 'DetectedClusterChange' }],
  });
  t.end();
});

t.test(
  'rbac retry - RBAC changes concern namespaces whose OperatorGroup names a service account',
  (t) => {
    t.same(
      scopedNamespacesOf([
        { metadata: { namespace: 'b' }, spec: { serviceAccountName: 'installer' } },
        { metadata: { namespace: 'plain' }, spec: {} },
        { metadata: { namespace: 'a' }, spec: { serviceAccountName: 'x' } },
        { metadata: { namespace: 'empty' }, spec: { serviceAccountName: '' } },
        { metadata: { namespace: 'a' }, spec: { serviceAccountName: 'y' } },
      ]),
      ['a', 'b'],
    );
    t.end();
  },
);

const plan: InstallPlanObject = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'InstallPlan',
  metadata: { name: 'install-abc', namespace: 'ns1', uid: 'ip1' },
  spec: {},
  status: {
    phase: 'Installing',
    catalogSources: [],
    plan: [
      {
        resolving: 'etcdoperator.v0.9.4',
        resource: {
          group: 'monitoring.coreos.com',
          version: 'v1',
          kind: 'ServiceMonitor',
          name: 'etcd',
          manifest: '{}',
          sourceName: 'c',
          sourceNamespace: 'olm',
        },
        status: 'Unknown',
      },
    ],
  } as unknown as NonNullable<InstallPlanObject['status']>,
};

t.test(
  'plan warnings - AppliedWithWarnings on the plan, fieldPath of the step, upstream wording',
  (t) => {
    const event = appliedWithWarningsEvent(plan, 0, ['w1', 'w2'], now);
    t.match(event, {
      type: 'Warning',
      reason: 'AppliedWithWarnings',
      involvedObject: { kind: 'InstallPlan', name: 'install-abc', fieldPath: 'status.plan[0]' },
      message:
        '2 warning(s) generated during installation of operator "etcdoperator.v0.9.4" (ServiceMonitor "etcd"): w1, w2',
    });
    const orphan = structuredClone(plan);
    const step = orphan.status?.plan?.[0];
    if (step !== undefined) step.resolving = '';
    t.equal(
      appliedWithWarningsEvent(orphan, 0, ['w1'], now)['message'],
      '1 warning(s) generated during operator installation (ServiceMonitor "etcd"): w1',
    );
    t.end();
  },
);

function crd(versions: Record<string, unknown>[]): Parameters<typeof resourceTypesOfCrd>[0] {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions,
    },
    status: {
      acceptedNames: {
        plural: 'widgets',
        singular: 'widget',
        kind: 'Widget',
        listKind: 'WidgetList',
      },
    },
  } as never;
}

t.test('devcluster - a deprecated CRD version warns as kube-apiserver does', (t) => {
  const warning = (versions: Record<string, unknown>[], version: string) =>
    resourceTypesOfCrd(crd(versions)).find((r) => r.version === version)?.deprecationWarning;
  t.equal(
    warning([{ name: 'v1', served: true, storage: true, deprecated: true }], 'v1'),
    'example.com/v1 Widget is deprecated',
  );
  t.equal(
    warning(
      [
        { name: 'v1alpha1', served: true, storage: false, deprecated: true },
        { name: 'v1beta1', served: true, storage: false },
        { name: 'v1', served: true, storage: true },
        { name: 'v2alpha1', served: false, storage: false },
      ],
      'v1alpha1',
    ),
    'example.com/v1alpha1 Widget is deprecated; use example.com/v1 Widget',
    'names the most preferred served, non-deprecated newer version',
  );
  t.equal(
    warning(
      [{ name: 'v1', served: true, storage: true, deprecated: true, deprecationWarning: 'use v2' }],
      'v1',
    ),
    'use v2',
  );
  t.equal(warning([{ name: 'v1', served: true, storage: true }], 'v1'), undefined);
  t.end();
});
