import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  crdStoredVersionProblem,
  customResourceProblem,
  versionsServedBeforeAndAfter,
} from '../../functions/install/install-plan/crd-update.js';
import { decidePlan } from '../../functions/install/install-plan/decide.js';
import { settlePlan } from '../../functions/install/install-plan/settle.js';
import { installedAlongsideAnnotation } from '../../functions/install/install-plan/step-writes.js';
import type {
  PlanSnapshot,
  ServedInstallPlan as InstallPlanObject,
} from '../../functions/install/install-plan/types.js';
import { fnv64aHex } from '../../functions/install/hash.js';
import { installPlanFor, restrictSize, smallBundle } from '../harness/install-plan.js';

const now = new Date('2026-01-01T00:00:00Z');

async function etcdPlan(
  approval: 'Automatic' | 'Manual' = 'Automatic',
): Promise<InstallPlanObject> {
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  const { plan, status } = installPlanFor({
    name: 'install-x',
    namespace: 'ns1',
    bundles: [bundle],
    approval,
  });
  return {
    ...(plan as InstallPlanObject),
    metadata: { ...plan.metadata, uid: 'ip-uid', resourceVersion: '1' },
    status,
  };
}

function snapshot(plan: InstallPlanObject, extra: Partial<PlanSnapshot> = {}): PlanSnapshot {
  return {
    plan,
    now,
    existing: new Map(),
    csvs: new Map(),
    subscriptions: [],
    operatorGroups: [],
    ...extra,
  };
}

const established = (crd: KubeObject): KubeObject => ({
  ...crd,
  metadata: { ...crd.metadata, uid: 'crd-uid' },
  status: {
    conditions: [
      { type: 'Established', status: 'True' },
      { type: 'NamesAccepted', status: 'True' },
    ],
    storedVersions: ['v1beta2'],
  },
});

const manifest = (plan: InstallPlanObject, i: number): KubeObject =>
  JSON.parse(plan.status?.plan?.[i]?.resource.manifest ?? '{}') as KubeObject;

t.test('install plan - a Manual plan waits until approved', async (t) => {
  const plan = await etcdPlan('Manual');
  t.same(decidePlan(snapshot(plan)).writes.steps, [], 'no writes while unapproved');
  t.equal(decidePlan(snapshot(plan)).writes.status, undefined, 'no status change');
  const approved = { ...plan, spec: { ...plan.spec, approved: true } };
  const d = decidePlan(snapshot(approved));
  t.equal(d.writes.status?.phase, 'Installing');
  t.equal(d.writes.status?.startTime, now.toISOString());
});

t.test(
  'install plan - one pass creates the CSV, the CRDs and the objects the CSV owns',
  async (t) => {
    const plan = await etcdPlan();
    const d = decidePlan(snapshot(plan));
    const kinds = d.writes.steps.map((s) => [
      s.write.op,
      'object' in s.write ? s.write.object.kind : '',
      s.status,
      s.ownerCsv ?? '',
    ]);
    const csv = 'etcdoperator.v0.9.4';
    t.same(kinds, [
      ['create', 'ClusterServiceVersion', 'Created', ''],
      ['create', 'CustomResourceDefinition', 'WaitingForApi', ''],
      ['create', 'CustomResourceDefinition', 'WaitingForApi', ''],
      ['create', 'CustomResourceDefinition', 'WaitingForApi', ''],
      ['create', 'ServiceAccount', 'Created', csv],
      ['create', 'Role', 'Created', csv],
      ['create', 'RoleBinding', 'Created', csv],
    ]);
    t.match(
      d.writes.steps[0]?.write,
      { object: { metadata: { finalizers: ['operators.coreos.com/csv-cleanup'] } } },
      'the CSV is created with its cleanup finalizer',
    );
    const crd = d.writes.steps[1]?.write;
    const [key, value] = installedAlongsideAnnotation('ns1', csv);
    t.match(crd, {
      object: { metadata: { labels: { 'olm.managed': 'true' }, annotations: { [key]: value } } },
    });
    t.match(
      d.writes.steps[4]?.write,
      {
        object: {
          metadata: { ownerReferences: [{ kind: 'ClusterServiceVersion', name: csv, uid: '' }] },
        },
      },
      "an owned object points at the CSV, its uid to come from the CSV's create",
    );
    t.equal(d.requeueAfterMs, 100, 'looks again soon, for the CRDs to be served');
    t.equal(d.again, undefined, 'nothing waits on a write of this pass');

    // A pass that does not create the CSV (it exists) points at the existing CSV's uid.
    const existingCsv: KubeObject = {
      ...manifest(plan, 0),
      metadata: { name: csv, namespace: 'ns1', uid: 'csv-uid' },
    };
    const next = decidePlan(snapshot(plan, { csvs: new Map([[csv, existingCsv]]) }));
    const sa = next.writes.steps.find(
      (s) => 'object' in s.write && s.write.object.kind === 'ServiceAccount',
    );
    t.equal(sa?.ownerCsv, undefined);
    t.match(sa?.write, { object: { metadata: { ownerReferences: [{ uid: 'csv-uid' }] } } });
  },
);

t.test(
  'install plan - a served CRD becomes Created, then owned objects point at the CSV',
  async (t) => {
    const plan = await etcdPlan();
    const steps = plan.status?.plan ?? [];
    for (const s of steps)
      if (
        s.resource.kind !== 'ServiceAccount' &&
        s.resource.kind !== 'Role' &&
        s.resource.kind !== 'RoleBinding'
      )
        s.status = s.resource.kind === 'ClusterServiceVersion' ? 'Created' : 'WaitingForApi';
    const existing = new Map<number, KubeObject>();
    steps.forEach((s, i) => {
      if (s.resource.kind === 'CustomResourceDefinition')
        existing.set(i, established(manifest(plan, i)));
    });
    const csv: KubeObject = {
      ...manifest(plan, 0),
      metadata: { name: 'etcdoperator.v0.9.4', namespace: 'ns1', uid: 'csv-uid' },
    };
    const d = decidePlan(
      snapshot(plan, { existing, csvs: new Map([['etcdoperator.v0.9.4', csv]]) }),
    );
    t.same(
      d.writes.status?.plan
        ?.filter((s) => s.resource.kind === 'CustomResourceDefinition')
        .map((s) => s.status),
      ['Created', 'Created', 'Created'],
    );
    const sa = d.writes.steps.find(
      (s) => 'object' in s.write && s.write.object.kind === 'ServiceAccount',
    );
    t.match(sa?.write, {
      op: 'create',
      object: {
        metadata: {
          namespace: 'ns1',
          labels: { 'olm.managed': 'true' },
          ownerReferences: [
            {
              kind: 'ClusterServiceVersion',
              name: 'etcdoperator.v0.9.4',
              uid: 'csv-uid',
              controller: false,
              blockOwnerDeletion: false,
            },
          ],
        },
      },
    });
    const status = settlePlan(d.writes, { succeeded: d.writes.steps.length }, now);
    t.equal(status?.phase, 'Complete');
    t.equal(d.requeueAfterMs, undefined, 'a pass that completes the plan asks for no other');
    const retrying = structuredClone(plan);
    if (retrying.status !== undefined)
      retrying.status.message = 'retrying execution due to error: forbidden';
    const again = decidePlan(
      snapshot(retrying, { existing, csvs: new Map([['etcdoperator.v0.9.4', csv]]) }),
    );
    t.equal(again.requeueAfterMs, 100, 'one after a failed pass looks again, should it fail again');
    t.match(status?.conditions, [{ type: 'Installed', status: 'True' }]);
  },
);

t.test(
  'install plan - the CSV and a dependency Subscription are created labelled olm.managed',
  async (t) => {
    const plan = await etcdPlan();
    const steps = plan.status?.plan ?? [];
    const subscription = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd-alpha-community-olm', namespace: 'ns1' },
      spec: { name: 'etcd', source: 'community', sourceNamespace: 'olm' },
    };
    steps.push({
      resolving: 'etcdoperator.v0.9.4',
      resource: {
        group: 'operators.coreos.com',
        version: 'v1alpha1',
        kind: 'Subscription',
        name: subscription.metadata.name,
        manifest: JSON.stringify(subscription),
        sourceName: 'community',
        sourceNamespace: 'olm',
      },
      status: 'Unknown',
    });
    const created = (kind: string): KubeObject | undefined => {
      for (const { write } of decidePlan(snapshot(plan)).writes.steps)
        if (write.op === 'create' && write.object.kind === kind) return write.object;
      return undefined;
    };
    t.same(created('ClusterServiceVersion')?.metadata.labels, { 'olm.managed': 'true' });
    t.match(created('Subscription')?.metadata, {
      labels: { 'olm.managed': 'true' },
      annotations: { 'olm.generated-by': 'install-x' },
    });
  },
);

t.test(
  "install plan - the CSV is created a member of the namespace's one OperatorGroup",
  async (t) => {
    const plan = await etcdPlan();
    const group = (name: string, namespaces?: string[]) => ({
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name, namespace: 'ns1' },
      spec: { upgradeStrategy: 'Default' as const },
      ...(namespaces === undefined
        ? {}
        : { status: { namespaces, lastUpdated: now.toISOString() } }),
    });
    const annotations = (operatorGroups: ReturnType<typeof group>[]) => {
      for (const { write } of decidePlan(snapshot(plan, { operatorGroups })).writes.steps)
        if (write.op === 'create' && write.object.kind === 'ClusterServiceVersion')
          return write.object.metadata.annotations ?? {};
      return undefined;
    };
    t.match(annotations([group('og', ['ns1', 'b'])]), {
      'olm.operatorGroup': 'og',
      'olm.operatorNamespace': 'ns1',
      'olm.targetNamespaces': 'b,ns1',
    });
    const none = {
      'olm.operatorGroup': undefined,
      'olm.operatorNamespace': undefined,
      'olm.targetNamespaces': undefined,
    };
    t.match(annotations([group('og')]), none, 'a group without targets yet: rbac annotates');
    t.match(
      annotations([group('a', ['ns1']), group('b', ['ns1'])]),
      none,
      'two groups: the CSV is no member of either',
    );
  },
);

t.test(
  "install plan - the CSV a Subscription names, and what it owns, carry its Operator's label",
  async (t) => {
    const plan = await etcdPlan();
    const csv = 'etcdoperator.v0.9.4';
    const subscription = (name: string, pkg: string, status: Record<string, string>) =>
      ({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name, namespace: 'ns1' },
        spec: { name: pkg, source: 'community', sourceNamespace: 'olm' },
        status: { lastUpdated: now.toISOString(), ...status },
      }) as PlanSnapshot['subscriptions'][number];
    const labelsOf = (s: PlanSnapshot): Record<string, Record<string, string>> =>
      Object.fromEntries(
        decidePlan(s).writes.steps.flatMap(({ write }) =>
          write.op === 'create' || write.op === 'update'
            ? [
                [
                  `${write.object.kind}/${write.object.metadata.name ?? ''}`,
                  write.object.metadata.labels ?? {},
                ],
              ]
            : [],
        ),
      );
    const component = 'operators.coreos.com/etcd.ns1';

    // The Subscription names the CSV current: the CSV, its CRDs, its service account and RBAC.
    const labelled = labelsOf(
      snapshot(plan, {
        subscriptions: [
          subscription('etcd', 'etcd', { currentCSV: csv }),
          subscription('other', 'other', { currentCSV: 'other.v1', installedCSV: 'other.v0' }),
        ],
      }),
    );
    t.equal(Object.keys(labelled).length, 7, 'every step is written');
    for (const [object, labels] of Object.entries(labelled)) {
      t.equal(labels[component], '', `${object} carries the component label`);
      t.notOk(
        Object.keys(labels).some((k) => k.includes('other')),
        `${object} has no label of a Subscription naming another CSV`,
      );
    }

    // No Subscription shown naming it (the mirror lags): no component label; adoption adds it.
    const unlabelled = labelsOf(
      snapshot(plan, { subscriptions: [subscription('etcd', 'etcd', {})] }),
    );
    for (const [object, labels] of Object.entries(unlabelled))
      t.equal(labels[component], undefined, `${object} is written without it`);

    // An existing CSV's own component labels reach what it owns; a CRD it does not own gets none.
    const owned = plan.status?.plan?.find((s) => s.resource.kind === 'CustomResourceDefinition');
    const existingCsv: KubeObject = {
      ...manifest(plan, 0),
      metadata: {
        name: csv,
        namespace: 'ns1',
        uid: 'csv-uid',
        labels: { 'operators.coreos.com/etcd.elsewhere': '' },
      },
    };
    const spec = existingCsv['spec'] as {
      customresourcedefinitions: { owned: { name: string }[] };
    };
    spec.customresourcedefinitions.owned = spec.customresourcedefinitions.owned.filter(
      (d) => d.name !== owned?.resource.name,
    );
    const fromCsv = labelsOf(snapshot(plan, { csvs: new Map([[csv, existingCsv]]) }));
    t.equal(fromCsv['ServiceAccount/etcd-operator']?.['operators.coreos.com/etcd.elsewhere'], '');
    t.equal(
      fromCsv[`CustomResourceDefinition/${owned?.resource.name ?? ''}`]?.[
        'operators.coreos.com/etcd.elsewhere'
      ],
      undefined,
      'a CRD the CSV does not list as owned is not its component',
    );
  },
);

t.test('install plan - an existing CSV is Present and never overwritten', async (t) => {
  const plan = await etcdPlan();
  const csv: KubeObject = {
    ...manifest(plan, 0),
    metadata: { name: 'etcdoperator.v0.9.4', namespace: 'ns1', uid: 'u' },
  };
  const d = decidePlan(
    snapshot(plan, {
      existing: new Map([[0, csv]]),
      csvs: new Map([['etcdoperator.v0.9.4', csv]]),
    }),
  );
  t.equal(d.writes.status?.plan?.[0]?.status, 'Present');
  t.notOk(
    d.writes.steps.some((s) => s.step === 0),
    'no write for the CSV step',
  );
});

t.test('install plan - an unknown kind is UnsupportedResource and the pass fails', async (t) => {
  const plan = await etcdPlan();
  const step = plan.status?.plan?.[4];
  if (step !== undefined) step.resource.kind = 'Pod';
  const d = decidePlan(snapshot(plan));
  t.equal(d.writes.error?.message, 'the InstallPlan contains invalid data');
  t.equal(d.writes.status?.plan?.[4]?.status, 'UnsupportedResource');
});

t.test(
  'install plan - errors retry for a minute, then the plan Failed; Forbidden retries on',
  async (t) => {
    const plan = await etcdPlan();
    const d = decidePlan(snapshot(plan));
    const error = { message: 'boom', forbidden: false };
    const early = settlePlan(d.writes, { succeeded: 0, error }, new Date(now.getTime() + 30_000));
    t.equal(early?.phase, 'Installing');
    t.equal(early?.message, 'retrying execution due to error: boom');
    const late = settlePlan(d.writes, { succeeded: 0, error }, new Date(now.getTime() + 61_000));
    t.equal(late?.phase, 'Failed');
    t.match(late?.conditions, [
      { type: 'Installed', status: 'False', reason: 'InstallComponentFailed', message: 'boom' },
    ]);
    const forbidden = settlePlan(
      d.writes,
      { succeeded: 0, error: { message: 'no', forbidden: true } },
      new Date(now.getTime() + 600_000),
    );
    t.equal(forbidden?.phase, 'Installing');
  },
);

t.test('install plan - a CRD update must keep every stored version', (t) => {
  const existing: KubeObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    status: { storedVersions: ['v1alpha1', 'v1'] },
  };
  const next: KubeObject = {
    ...existing,
    spec: { versions: [{ name: 'v1', served: true, storage: true }] },
  };
  t.equal(
    crdStoredVersionProblem(existing, next),
    'risk of data loss updating "widgets.example.com": new CRD removes version v1alpha1 that is listed as a stored version on the existing CRD',
  );
  const keeps: KubeObject = {
    ...next,
    spec: {
      versions: [
        { name: 'v1alpha1', served: false },
        { name: 'v1', served: true },
      ],
    },
  };
  t.equal(crdStoredVersionProblem(existing, keeps), undefined);
  t.end();
});

t.test('install plan - a scope lookup error fails the plan with InstallCheckFailed', async (t) => {
  const plan = await etcdPlan();
  const d = decidePlan(
    snapshot(plan, { scope: { error: 'no operator group found that is managing this namespace' } }),
  );
  t.equal(d.writes.status?.phase, 'Failed');
  t.match(d.writes.status?.conditions, [
    { type: 'Installed', status: 'False', reason: 'InstallCheckFailed' },
  ]);
});

t.test('install plan - fnv64a matches the reference vectors', (t) => {
  t.equal(fnv64aHex(''), 'cbf29ce484222325');
  t.equal(fnv64aHex('a'), 'af63dc4c8601ec8c');
  t.equal(fnv64aHex('foobar'), '85944171f73967e8');
  t.end();
});

t.test('install plan - fnv64a agrees with 64-bit arithmetic on any text', (t) => {
  // The definition, in BigInt: XOR each UTF-8 byte in, multiply by the prime, modulo 2^64.
  const reference = (text: string): string => {
    let hash = 0xcbf29ce484222325n;
    for (const byte of Buffer.from(text, 'utf8'))
      hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
    return hash.toString(16);
  };
  let seed = 7;
  const random = (n: number): number => (seed = (seed * 48271) % 0x7fffffff) % n;
  const alphabet = 'abcxyz{}":,0189 é漢🙂\n';
  for (let i = 0; i < 2_000; i++) {
    const text = Array.from({ length: random(80) }, () => alphabet[random(alphabet.length)]).join(
      '',
    );
    if (fnv64aHex(text) !== reference(text)) {
      t.fail(`differs for ${JSON.stringify(text)}`);
      break;
    }
  }
  t.pass('2,000 texts agree');
  t.end();
});

t.test('install plan - existing CRs must validate against the updated CRD schema', async (t) => {
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  const crd = bundle.others.find(
    (o) => o.metadata.name === 'etcdclusters.etcd.database.coreos.com',
  );
  if (crd === undefined) throw new Error('no etcdclusters CRD');
  const stricter = restrictSize(crd);
  const cr: KubeObject = {
    apiVersion: 'etcd.database.coreos.com/v1beta2',
    kind: 'EtcdCluster',
    metadata: { name: 'example', namespace: 'ns1' },
    spec: { size: 'three' },
  };
  t.match(
    customResourceProblem(stricter, [{ version: 'v1beta2', items: [cr] }]),
    /^error validating existing CRs against new CRD's schema for "etcdclusters.etcd.database.coreos.com": error validating etcd.database.coreos.com\/v1beta2, Kind=EtcdCluster "ns1\/example": updated validation is too restrictive: .*spec.size/,
  );
  const fine = { ...cr, spec: { size: 3 } };
  t.equal(customResourceProblem(stricter, [{ version: 'v1beta2', items: [fine] }]), undefined);
  const webhook = {
    ...stricter,
    spec: { ...(stricter['spec'] as object), conversion: { strategy: 'Webhook' } },
  };
  t.equal(
    customResourceProblem(webhook, [{ version: 'v1beta2', items: [cr] }]),
    undefined,
    'tolerated with webhook conversion',
  );
  t.same(versionsServedBeforeAndAfter(crd, stricter), ['v1beta2']);
});

t.test(
  'install plan - an existing bundle object is updated without an annotations map it never had',
  async (t) => {
    const plan = await etcdPlan();
    const index = plan.status?.plan?.findIndex((s) => s.resource.kind === 'ServiceAccount') ?? -1;
    t.ok(index >= 0, 'the plan has a ServiceAccount step');
    const csv: KubeObject = {
      ...manifest(plan, 0),
      metadata: { name: 'etcdoperator.v0.9.4', namespace: 'ns1', uid: 'csv-uid' },
    };
    const account = manifest(plan, index);
    const existing: KubeObject = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name: account.metadata.name ?? '',
        namespace: 'ns1',
        uid: 'sa-uid',
        resourceVersion: '7',
      },
    };
    const d = decidePlan(
      snapshot(plan, {
        existing: new Map([
          [0, csv],
          [index, existing],
        ]),
        csvs: new Map([['etcdoperator.v0.9.4', csv]]),
      }),
    );
    const write = d.writes.steps.find((s) => s.step === index)?.write;
    t.equal(write?.op, 'update');
    const updated = write !== undefined && 'object' in write ? write.object : undefined;
    t.equal(updated?.metadata.resourceVersion, '7', 'conditional on the version read');
    t.notOk('annotations' in (updated?.metadata ?? {}), 'no empty annotations map');
    t.equal(updated?.metadata.labels?.['olm.managed'], 'true');
  },
);
