// The plan function's pure decisions: grouping into independent plans, deterministic names,
// approval, Subscription linking and conditions, and keeping at most five plans.
import t from 'tap';
import {
  decidePlan,
  keepPlans,
  planGroups,
  type PlanSnapshot,
} from '../../functions/plan/decide.js';
import { dependencySubscriptionName, planSteps } from '../../shared/install-plan/index.js';
import type { InstallPlan, Subscription } from '../../shared/api/index.js';
import type { RecordedBundle } from '../../shared/resolver/record.js';

const now = '2026-11-22T10:00:00Z';

function bundle(name: string, extra: Partial<RecordedBundle> = {}): RecordedBundle {
  return {
    package: name,
    name: `${name}.v1`,
    version: '1.0.0',
    catalog: { name: 'community', namespace: 'olm' },
    catalogDigest: 'sha256:x',
    channel: 'stable',
    subscription: name,
    action: 'install',
    replaces: null,
    properties: [],
    requires: [],
    ...extra,
  };
}

function sub(name: string, extra: Partial<Subscription> = {}): Subscription {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '1' },
    spec: { source: 'community', sourceNamespace: 'olm', name },
    ...extra,
  };
}

function plan(name: string, generation: number, extra: Partial<InstallPlan> = {}): InstallPlan {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '1' },
    spec: { clusterServiceVersionNames: [], approval: 'Automatic', approved: true, generation },
    ...extra,
  };
}

const manifests = (name: string) => ({
  csv: {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name },
    spec: { replaces: 'upstream-said-this' },
  },
  others: [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } },
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'c' },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' } },
  ],
});

function snapshot(extra: Partial<PlanSnapshot>): PlanSnapshot {
  return {
    namespace: 'ns',
    record: undefined,
    subscriptions: [],
    installPlans: [],
    csvs: new Set(),
    manifests: new Map(),
    now,
    ...extra,
  };
}

void t.test('bundles group by dependency; names are deterministic', (t) => {
  const a = bundle('a', { requires: ['dep.v1'] });
  const dep = bundle('dep', { subscription: null });
  const b = bundle('b');
  const kept = bundle('kept', { action: 'keep' });
  const groups = planGroups('ns', [a, dep, b, kept]);
  t.equal(groups.length, 2, 'a with its dependency, b alone; kept bundles need no plan');
  t.same(groups.map((g) => g.bundles.map((x) => x.name)).sort(), [['a.v1', 'dep.v1'], ['b.v1']]);
  t.same(planGroups('ns', [b, dep, a]), groups, 'order does not matter');
  t.not(planGroups('other', [b])[0]?.name, groups.find((g) => g.bundles.length === 1)?.name);
  t.match(groups[0]?.name, /^install-[0-9a-z]{5}$/);
  t.end();
});

void t.test('a new group gets a plan; Manual subscriptions make it wait', (t) => {
  const d = decidePlan(
    snapshot({
      record: {
        namespace: 'ns',
        status: 'resolved',
        bundles: [bundle('a'), bundle('b')],
        problems: [],
      },
      subscriptions: [
        sub('a', {
          spec: {
            source: 'community',
            sourceNamespace: 'olm',
            name: 'a',
            installPlanApproval: 'Manual',
          },
        }),
        sub('b', { status: { lastUpdated: now, installPlanGeneration: 3 } }),
      ],
      installPlans: [plan('old', 2)],
    }),
  );
  const creates = d.writes.filter((w) => w.op === 'create');
  t.equal(creates.length, 2);
  const specs = creates.map((w) =>
    w.op === 'create' ? w.object : undefined,
  ) as unknown as InstallPlan[];
  const forA = specs.find((p) => p.spec.clusterServiceVersionNames[0] === 'a.v1');
  const forB = specs.find((p) => p.spec.clusterServiceVersionNames[0] === 'b.v1');
  t.match(forA?.spec, { approval: 'Manual', approved: false });
  t.match(forB?.spec, { approval: 'Automatic', approved: true });
  t.same(
    specs.map((p) => p.spec.generation).sort(),
    [4, 5],
    'generations continue after the highest seen on plans and subscriptions',
  );
  t.match(forA?.metadata.ownerReferences, [{ kind: 'Subscription', name: 'a', uid: 'uid-a' }]);
  t.equal(forA?.metadata.generateName, 'install-', "upstream's generateName, beside the name");
  t.match(forA?.metadata.name, /^install-/, 'the deterministic name wins');
  t.same(
    forA?.metadata.labels,
    { 'operators.coreos.com/a.ns': '' },
    "created with the component label of its Subscription's Operator",
  );
  t.end();
});

void t.test('an existing plan gets its steps once, and its subscriptions follow it', (t) => {
  const b = bundle('a', { replaces: 'a.v0', action: 'upgrade' });
  const [group] = planGroups('ns', [b]);
  const ip = plan(group?.name ?? '', 1, {
    spec: {
      clusterServiceVersionNames: ['a.v1'],
      approval: 'Manual',
      approved: false,
      generation: 1,
    },
  });
  const d = decidePlan(
    snapshot({
      record: { namespace: 'ns', status: 'resolved', bundles: [b], problems: [] },
      subscriptions: [
        sub('a', { status: { lastUpdated: now, installedCSV: 'a.v0', state: 'AtLatestKnown' } }),
      ],
      installPlans: [ip],
      csvs: new Set(['a.v0']),
      manifests: new Map([['a.v1', manifests('a.v1')]]),
    }),
  );
  const statusWrites = d.writes
    .filter((w) => w.op === 'updateStatus')
    .map((w) => (w as { object: unknown }).object);
  const planStatus = statusWrites.find(
    (o) => (o as { kind: string }).kind === 'InstallPlan',
  ) as InstallPlan;
  t.equal(planStatus.status?.phase, 'RequiresApproval');
  t.same(
    planStatus.status?.plan?.map((s) => s.resource.kind),
    ['ClusterServiceVersion', 'CustomResourceDefinition', 'BundleSecret', 'Service'],
    'CSVs, then CRDs, then the rest; Secrets are BundleSecrets',
  );
  const csv = JSON.parse(planStatus.status?.plan?.[0]?.resource.manifest ?? '{}') as {
    spec: { replaces?: string };
  };
  t.equal(csv.spec.replaces, 'a.v0', "the resolution's replaces wins over the bundle's");
  const subStatus = statusWrites.find(
    (o) => (o as { kind: string }).kind === 'Subscription',
  ) as Subscription;
  t.match(subStatus.status, {
    state: 'UpgradePending',
    currentCSV: 'a.v1',
    installedCSV: 'a.v0',
    installPlanGeneration: 1,
    installPlanRef: { kind: 'InstallPlan', name: group?.name, uid: `uid-${group?.name}` },
    conditions: [{ type: 'InstallPlanPending', status: 'True', reason: 'RequiresApproval' }],
  });
  // The steps let the plan run and create its CSV: never before the Subscription names it.
  t.same(
    statusWrites.map((o) => (o as { kind: string }).kind),
    ['Subscription', 'InstallPlan'],
    'the Subscription is linked before the plan gets its steps',
  );
  t.end();
});

void t.test('missing manifests fail the decision with the reason', (t) => {
  const b = bundle('a');
  const [group] = planGroups('ns', [b]);
  t.throws(
    () =>
      decidePlan(
        snapshot({
          record: { namespace: 'ns', status: 'resolved', bundles: [b], problems: [] },
          installPlans: [plan(group?.name ?? '', 1)],
          manifests: new Map([
            ['a.v1', new Error('catalog olm/community has no manifests for bundle a.v1')],
          ]),
        }),
      ),
    /no manifests for bundle a\.v1/,
  );
  t.end();
});

void t.test("a new Subscription's status is left to the resolve function", (t) => {
  // Nothing to link yet: a write here would only race resolve's first status.
  t.same(decidePlan(snapshot({ subscriptions: [sub('a')] })).writes, []);
  t.end();
});

void t.test('plan progress reaches the subscription conditions', (t) => {
  // The Subscription's conditions once it follows a plan in `phase` (with `conditions`), from
  // `had` (none by default).
  const linked = (phase: string, conditions?: unknown, had?: Subscription['status']) =>
    decidePlan(
      snapshot({
        subscriptions: [
          sub('a', {
            status: {
              lastUpdated: now,
              state: 'UpgradePending',
              currentCSV: 'a.v1',
              installPlanRef: { name: 'ip1', namespace: 'ns' },
              ...had,
            },
          }),
        ],
        installPlans: [
          plan('ip1', 1, {
            status: { phase, catalogSources: [], conditions },
          } as Partial<InstallPlan>),
        ],
      }),
    ).writes.map((w) => (w as unknown as { object: Subscription }).object.status?.conditions);
  t.match(linked('Installing'), [[{ type: 'InstallPlanPending', reason: 'Installing' }]]);
  t.match(
    linked('Failed', [
      { type: 'Installed', status: 'False', reason: 'InstallComponentFailed', message: 'boom' },
    ]),
    [
      [
        {
          type: 'InstallPlanFailed',
          status: 'True',
          reason: 'InstallComponentFailed',
          message: 'boom',
        },
      ],
    ],
  );
  t.same(linked('Complete'), [], 'nothing to write: no condition to clear');
  const complete = linked('Complete', undefined, {
    lastUpdated: now,
    conditions: [{ type: 'InstallPlanPending', status: 'True', reason: 'Installing' }],
  });
  t.same(complete, [[]], 'no pending or failed condition once complete');
  const gone = decidePlan(
    snapshot({
      subscriptions: [
        sub('a', {
          status: {
            lastUpdated: now,
            state: 'UpgradePending',
            currentCSV: 'a.v1',
            installPlanRef: { name: 'gone' },
          },
        }),
      ],
    }),
  ).writes[0] as unknown as { object: Subscription };
  t.equal(
    gone.object.status?.installPlanRef,
    undefined,
    'a pending upgrade whose plan vanished starts over',
  );
  t.equal(gone.object.status?.state, '');
  const missing = decidePlan(
    snapshot({
      subscriptions: [
        sub('a', {
          status: { lastUpdated: now, state: 'AtLatestKnown', installPlanRef: { name: 'gone' } },
        }),
      ],
    }),
  ).writes[0] as unknown as { object: Subscription };
  t.match(missing.object.status?.conditions, [
    { type: 'InstallPlanMissing', status: 'True', reason: 'ReferencedInstallPlanNotFound' },
  ]);
  t.end();
});

void t.test('at most five plans are kept, never one a subscription follows', (t) => {
  const plans = [1, 2, 3, 4, 5, 6, 7].map((g) => plan(`ip${g}`, g));
  const d = decidePlan(
    snapshot({
      installPlans: plans,
      subscriptions: [sub('a', { status: { lastUpdated: now, installPlanRef: { name: 'ip1' } } })],
    }),
  );
  const deleted = d.writes
    .filter((w) => w.op === 'delete')
    .map((w) => (w.op === 'delete' ? w.ref.name : ''));
  t.same(
    deleted,
    ['ip2', 'ip3'],
    `oldest generations beyond ${keepPlans}, skipping the followed ip1`,
  );
  t.end();
});

void t.test('steps: dependencies without a subscription get one', (t) => {
  const dep = bundle('dep', { subscription: null, channel: 'alpha' });
  const steps = planSteps('ns', [{ bundle: dep, manifests: manifests('dep.v1') }]);
  const subStep = steps.find((s) => s.resource.kind === 'Subscription');
  t.equal(subStep?.resource.name, dependencySubscriptionName(dep));
  t.equal(subStep?.resource.name, 'dep-alpha-community-olm');
  t.match(JSON.parse(subStep?.resource.manifest ?? '{}'), {
    spec: {
      name: 'dep',
      channel: 'alpha',
      startingCSV: 'dep.v1',
      source: 'community',
      sourceNamespace: 'olm',
    },
  });
  // As upstream serialises the typed Subscription it generates: no apiVersion/kind (the step's
  // group, version and kind say them), a zero status.
  const manifest = JSON.parse(subStep?.resource.manifest ?? '{}') as Record<string, unknown>;
  t.notOk('apiVersion' in manifest || 'kind' in manifest, 'untyped');
  t.same(manifest['status'], { lastUpdated: null });
  t.match(subStep?.resource, { group: 'operators.coreos.com', version: 'v1alpha1' });
  t.throws(
    () => planSteps('ns', [{ bundle: dep, manifests: { csv: undefined, others: [] } }]),
    /bundle dep\.v1 cannot be planned: it has no ClusterServiceVersion/,
  );
  t.end();
});

void t.test(
  "plan steps - a fresh install's CSV keeps the catalog's replaces and is in the plan's namespace",
  (t) => {
    const placeholder = manifests('a.v1');
    (placeholder.csv.metadata as Record<string, unknown>)['namespace'] = 'placeholder';
    const fresh = bundle('a', { channelReplaces: 'a.v0' });
    const [step] = planSteps('team-a', [{ bundle: fresh, manifests: placeholder }]);
    const csv = JSON.parse(step?.resource.manifest ?? '{}') as {
      metadata: { namespace?: string };
      spec: { replaces?: string };
    };
    t.equal(csv.metadata.namespace, 'team-a', "not the bundle's placeholder namespace");
    t.equal(csv.spec.replaces, 'a.v0', "the channel entry's replaces, as upstream");
    const upgrade = bundle('a', { action: 'upgrade', replaces: 'a.v-1', channelReplaces: 'a.v0' });
    const [upgradeStep] = planSteps('team-a', [{ bundle: upgrade, manifests: placeholder }]);
    t.equal(
      (JSON.parse(upgradeStep?.resource.manifest ?? '{}') as { spec: { replaces?: string } }).spec
        .replaces,
      'a.v-1',
      'an upgrade names the CSV it replaces',
    );
    const head = bundle('a', { channelReplaces: null });
    const [headStep] = planSteps('team-a', [{ bundle: head, manifests: placeholder }]);
    t.notOk(
      'replaces' in (JSON.parse(headStep?.resource.manifest ?? '{}') as { spec: object }).spec,
      'a bundle that replaces nothing in its channel has no spec.replaces',
    );
    t.end();
  },
);

void t.test(
  'plan - regression: no second plan for the CSVs an executing plan is still creating',
  (t) => {
    // Plan for a.v1 + b.v1 (b requires a) is executing; a.v1 exists already, so the namespace
    // re-resolved to "keep a.v1, install b.v1": a group of its own, under another name.
    const a = bundle('a');
    const b = bundle('b', { requires: ['a.v1'] });
    const [whole] = planGroups('ns', [a, b]);
    const executing = plan(whole?.name ?? '', 1, {
      spec: {
        clusterServiceVersionNames: ['a.v1', 'b.v1'],
        approval: 'Automatic',
        approved: true,
        generation: 1,
      },
      status: { phase: 'Installing', catalogSources: ['community'], plan: [] },
    });
    const followed = { lastUpdated: now, installPlanRef: { name: whole?.name ?? '' } };
    const record = {
      namespace: 'ns',
      status: 'resolved' as const,
      bundles: [{ ...a, action: 'keep' as const }, b],
      problems: [],
    };
    const [rest] = planGroups('ns', record.bundles);
    t.not(rest?.name, whole?.name, 'the rest of the plan is a group with another name');
    const d = decidePlan(
      snapshot({
        record,
        subscriptions: [sub('a', { status: followed }), sub('b', { status: followed })],
        installPlans: [executing],
        csvs: new Set(['a.v1']),
        manifests: new Map([['b.v1', manifests('b.v1')]]),
      }),
    );
    t.same(
      d.writes.filter((w) => w.op === 'create'),
      [],
      'no InstallPlan created',
    );
    t.notOk(d.again, 'nothing to come back for');
    const complete = decidePlan(
      snapshot({
        record,
        subscriptions: [sub('a', { status: followed }), sub('b', { status: followed })],
        installPlans: [
          { ...executing, status: { phase: 'Complete', catalogSources: ['community'], plan: [] } },
        ],
        csvs: new Set(['a.v1']),
        manifests: new Map([['b.v1', manifests('b.v1')]]),
      }),
    );
    t.equal(
      complete.writes.filter((w) => w.op === 'create').length,
      1,
      'a CSV missing after its plan completed (deleted since) is planned again',
    );
    t.end();
  },
);

void t.test(
  'fail forward - a failed plan holds its Subscription with Default; TechPreviewUnsafeFailForward plans the next bundle',
  (t) => {
    // The plan to install b.v2 failed before its CSV existed; the catalog now offers b.v3.
    const held = sub('b', {
      status: {
        lastUpdated: now,
        state: 'UpgradePending',
        installedCSV: 'b.v1',
        currentCSV: 'b.v2',
        installPlanRef: { name: 'ip-failed', namespace: 'ns' },
      },
    });
    const failed = plan('ip-failed', 2, {
      status: { phase: 'Failed', catalogSources: [] },
    });
    const next = bundle('b', { name: 'b.v3', action: 'upgrade', replaces: 'b.v1' });
    const base = {
      record: { namespace: 'ns', bundles: [next] } as unknown as PlanSnapshot['record'],
      subscriptions: [held],
      installPlans: [failed],
      csvs: new Set(['b.v1']),
    };
    const creates = (d: ReturnType<typeof decidePlan>) => d.writes.filter((w) => w.op === 'create');
    t.same(creates(decidePlan(snapshot(base))), [], 'Default: no new plan');
    const forward = decidePlan(snapshot({ ...base, failForward: true }));
    t.match(creates(forward), [
      { object: { kind: 'InstallPlan', spec: { clusterServiceVersionNames: ['b.v3'] } } },
    ]);
    // Before the new plan exists, upstream's state for the failed upgrade.
    const waiting = decidePlan(
      snapshot({ ...base, record: undefined, failForward: true }),
    ).writes.find((w) => w.op === 'updateStatus');
    t.match(waiting, { object: { status: { state: 'UpgradeFailed' } } });
    t.end();
  },
);

void t.test(
  'a dependency Subscription adopts the plan that created it without an installPlanGeneration',
  (t) => {
    // Upstream (ensureSubscriptionInstallPlanState) links a Subscription its plan created —
    // installPlanRef, installplan, currentCSV = startingCSV, UpgradePending — and leaves its
    // installPlanGeneration unset; only the Subscriptions a resolution changed get one.
    const creator = plan('install-abcde', 4, {
      spec: {
        clusterServiceVersionNames: ['a.v1', 'dep.v1'],
        approval: 'Automatic',
        approved: true,
        generation: 4,
      },
      status: { phase: 'Installing', catalogSources: ['community'], plan: [] },
    });
    const dependency = sub('dep-stable-community-olm', {
      metadata: {
        name: 'dep-stable-community-olm',
        namespace: 'ns',
        uid: 'uid-dep',
        resourceVersion: '1',
        annotations: { 'olm.generated-by': 'install-abcde' },
      },
      spec: { source: 'community', sourceNamespace: 'olm', name: 'dep', startingCSV: 'dep.v1' },
    });
    const d = decidePlan(snapshot({ subscriptions: [dependency], installPlans: [creator] }));
    const [update] = d.writes.filter((w) => w.op === 'updateStatus');
    const status = (update?.op === 'updateStatus' ? update.object : {}) as {
      status?: Record<string, unknown>;
    };
    t.match(status.status, {
      installPlanRef: { name: 'install-abcde' },
      installplan: { name: 'install-abcde' },
      currentCSV: 'dep.v1',
      state: 'UpgradePending',
    });
    t.notOk('installPlanGeneration' in (status.status ?? {}), 'no installPlanGeneration');
    t.end();
  },
);

void t.test('plan steps - the properties annotation is escaped as Go writes JSON', (t) => {
  const needs = {
    type: 'olm.package.required',
    value: { packageName: 'b', versionRange: '>2.0.0 <3.0.0 & more' },
  };
  const [csvStep] = planSteps('ns', [
    { bundle: bundle('a', { properties: [needs] }), manifests: manifests('a.v1') },
  ]);
  const csv = JSON.parse(csvStep?.resource.manifest ?? '{}') as {
    metadata: { annotations: Record<string, string> };
  };
  t.equal(
    csv.metadata.annotations['operatorframework.io/properties'],
    '{"properties":[{"type":"olm.package.required","value":{"packageName":"b","versionRange":"\\u003e2.0.0 \\u003c3.0.0 \\u0026 more"}}]}',
  );
  t.end();
});

void t.test(
  'plan steps - the CSV keeps only the fields its type declares, as upstream plans it',
  (t) => {
    const bundled = manifests('a.v1');
    const csv = bundled.csv as Record<string, unknown>;
    csv['metadata'] = { name: 'a.v1', annotations: { 'x.io/kept': 'yes' }, labels: { l: 'v' } };
    csv['spec'] = {
      displayName: 'A',
      support: 'Community based',
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [{ name: 'a', spec: { replicas: 1, template: { anything: 'kept' } } }],
        },
      },
    };
    const [step] = planSteps('ns', [{ bundle: bundle('a'), manifests: bundled }]);
    const planned = JSON.parse(step?.resource.manifest ?? '{}') as {
      metadata: { annotations: Record<string, string>; labels: Record<string, string> };
      spec: Record<string, unknown>;
    };
    t.notOk('support' in planned.spec, 'a field the CSV type lacks is dropped');
    t.equal(planned.spec['displayName'], 'A');
    t.same(
      (planned.spec['install'] as { spec: { deployments: unknown[] } }).spec.deployments,
      [{ name: 'a', spec: { replicas: 1, template: { anything: 'kept' } } }],
      'the embedded DeploymentSpec is kept whole',
    );
    t.equal(planned.metadata.annotations['x.io/kept'], 'yes', 'metadata is kept');
    t.same(planned.metadata.labels, { l: 'v' });
    t.end();
  },
);
