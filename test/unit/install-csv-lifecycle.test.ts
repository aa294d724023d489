import t from 'tap';
import { csvNamespaceSnapshot } from '../harness/csv-snapshot.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { decideCsv, decideNamespace } from '../../functions/install/csv/decide.js';
import { csvCleanupFinalizer } from '../../functions/install/csv/gates.js';
import { installModeProblem, webhookProblem } from '../../functions/install/csv/checks.js';
import type { CsvNamespaceSnapshot, CsvObject } from '../harness/install-fixtures.js';
import {
  applySubscriptionConfig,
  deploymentFor,
  deploymentHealth,
} from '../../functions/install/csv/deployments.js';
import { smallBundle } from '../harness/install-plan.js';

const now = new Date('2026-01-01T00:00:00Z');
const og: KubeObject = {
  apiVersion: 'operators.coreos.com/v1',
  kind: 'OperatorGroup',
  metadata: { name: 'og', namespace: 'ns1' },
  spec: { targetNamespaces: ['ns1'] },
  status: { namespaces: ['ns1'] },
};

async function etcdCsv(status?: CsvObject['status']): Promise<CsvObject> {
  const { csv } = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  return {
    ...(csv as CsvObject),
    metadata: {
      ...csv.metadata,
      namespace: 'ns1',
      uid: 'csv-uid',
      finalizers: [csvCleanupFinalizer],
      annotations: {
        ...csv.metadata.annotations,
        'olm.operatorGroup': 'og',
        'olm.operatorNamespace': 'ns1',
        'olm.targetNamespaces': 'ns1',
      },
    },
    ...(status === undefined ? {} : { status }),
  };
}

const snapshot = (csvs: CsvObject[], extra: Partial<CsvNamespaceSnapshot> = {}) =>
  csvNamespaceSnapshot(now, csvs, [og], extra);

// One move of the first CSV (decideNamespace chains status-only moves; tested below).
const first = (s: CsvNamespaceSnapshot) =>
  s.csvs[0] === undefined ? undefined : decideCsv(s.csvs[0], s);

t.test('csv - a new CSV gets the cleanup finalizer first', async (t) => {
  const csv = await etcdCsv();
  csv.metadata.finalizers = [];
  const d = first(snapshot([csv]));
  t.match(d?.writes, [
    { op: 'update', object: { metadata: { finalizers: [csvCleanupFinalizer] } } },
  ]);
  t.equal(d?.status, undefined);
});

t.test('csv - waits for the rbac function to sync its OperatorGroup and annotate it', async (t) => {
  const unannotated = await etcdCsv();
  delete unannotated.metadata.annotations?.['olm.targetNamespaces'];
  t.same(first(snapshot([unannotated])), { csv: unannotated, writes: [] }, 'not annotated yet');
  const csv = await etcdCsv();
  const unsynced = { ...og, status: {} };
  t.same(
    first(snapshot([csv], { operatorGroups: [unsynced] })),
    { csv, writes: [] },
    'group status not written yet',
  );
  const stale = { ...og, status: { namespaces: ['ns1', 'ns2'] } };
  t.same(first(snapshot([csv], { operatorGroups: [stale] }))?.writes, [], 'annotation out of date');
  t.match(first(snapshot([csv], { operatorGroups: [{ ...og, status: { namespaces: [] } }] })), {
    status: {
      phase: 'Failed',
      reason: 'NoTargetNamespaces',
      message: 'no targetNamespaces are matched operatorgroups namespace selection',
    },
  });
});

t.test('csv - None goes Pending/RequirementsUnknown', async (t) => {
  const d = first(snapshot([await etcdCsv()]));
  t.match(d?.status, {
    phase: 'Pending',
    reason: 'RequirementsUnknown',
    message: 'requirements not yet checked',
  });
  t.match(d?.status?.conditions, [{ phase: 'Pending', reason: 'RequirementsUnknown' }]);
});

t.test('csv - zero or several OperatorGroups fail the CSV', async (t) => {
  const csv = await etcdCsv();
  t.match(first(snapshot([csv], { operatorGroups: [] }))?.status, {
    phase: 'Failed',
    reason: 'NoOperatorGroup',
  });
  t.match(
    first(snapshot([csv], { operatorGroups: [og, { ...og, metadata: { name: 'og2' } }] }))?.status,
    {
      phase: 'Failed',
      reason: 'TooManyOperatorGroups',
      message:
        "csv created in namespace with multiple operatorgroups, can't pick one automatically",
    },
  );
});

t.test(
  'csv - Pending with requirements met goes InstallReady; then deployments are written',
  async (t) => {
    const pending = await etcdCsv({ phase: 'Pending', reason: 'RequirementsUnknown' });
    const crds = new Map<string, KubeObject>();
    for (const name of ['etcdclusters', 'etcdbackups', 'etcdrestores']) {
      crds.set(`${name}.etcd.database.coreos.com`, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `${name}.etcd.database.coreos.com` },
        spec: { versions: [{ name: 'v1beta2', served: true }] },
        status: {
          conditions: [
            { type: 'Established', status: 'True' },
            { type: 'NamesAccepted', status: 'True' },
          ],
        },
      });
    }
    const sa: KubeObject = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'etcd-operator', namespace: 'ns1' },
    };
    const ready = first(snapshot([pending], { crds, serviceAccounts: [sa] }));
    t.match(ready?.status, { phase: 'InstallReady', reason: 'AllRequirementsMet' });
    t.ok(ready?.status?.requirementStatus?.every((r) => r.status === 'Present'));

    const installReady = await etcdCsv({ phase: 'InstallReady', reason: 'AllRequirementsMet' });
    const install = first(snapshot([installReady], { crds, serviceAccounts: [sa] }));
    t.match(install?.status, { phase: 'Installing', reason: 'InstallSucceeded' });
    t.match(install?.writes, [
      { op: 'create', object: { kind: 'Deployment', metadata: { name: 'etcd-operator' } } },
    ]);
    t.equal(install?.onFailure, 'installStrategy');
  },
);

t.test(
  'csv - Succeeded with an unavailable deployment goes Failed/ComponentUnhealthy',
  async (t) => {
    const csv = await etcdCsv({ phase: 'Succeeded', reason: 'InstallSucceeded' });
    const [entry] = (
      csv.spec?.['install'] as {
        spec: { deployments: { name: string; spec: Record<string, unknown> }[] };
      }
    ).spec.deployments;
    const intended = deploymentFor({ csv, entry: entry! });
    const sick: KubeObject = {
      ...intended,
      metadata: { ...intended.metadata, generation: 1 },
      status: {
        observedGeneration: 1,
        updatedReplicas: 1,
        conditions: [
          {
            type: 'Available',
            status: 'False',
            message: 'Deployment does not have minimum availability.',
          },
        ],
      },
    };
    const crdsOk = new Map<string, KubeObject>(); // requirements are not rechecked here: rows for CRDs would fail
    const d = first(
      snapshot([{ ...csv, spec: { ...csv.spec, customresourcedefinitions: {} } }], {
        deployments: [sick],
        crds: crdsOk,
        serviceAccounts: [
          { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'etcd-operator' } },
        ],
      }),
    );
    t.match(d?.status, {
      phase: 'Failed',
      reason: 'ComponentUnhealthy',
      message:
        'installing: waiting for deployment etcd-operator to become ready: deployment "etcd-operator" not available: Deployment does not have minimum availability.',
    });
  },
);

t.test(
  'csv - Succeeded with a replacement goes Replacing; Replacing goes Deleting once it Succeeded',
  async (t) => {
    const old = await etcdCsv({ phase: 'Succeeded', reason: 'InstallSucceeded' });
    old.metadata.name = 'etcdoperator.v0.9.2';
    const next = await etcdCsv({ phase: 'Pending', reason: 'RequirementsUnknown' });
    next.spec = { ...next.spec, replaces: 'etcdoperator.v0.9.2' };
    const d = decideNamespace(snapshot([old, next])).writes.csvs[0];
    t.match(d?.status, {
      phase: 'Replacing',
      reason: 'BeingReplaced',
      message: 'being replaced by csv: etcdoperator.v0.9.4',
    });
    t.equal(d?.upgrade, true);
    const replacing = { ...old, status: { phase: 'Replacing', reason: 'BeingReplaced' } };
    const done = { ...next, status: { phase: 'Succeeded', reason: 'InstallSucceeded' } };
    t.match(decideNamespace(snapshot([replacing, done])).writes.csvs[0]?.status, {
      phase: 'Deleting',
      reason: 'Replaced',
      message:
        'has been replaced by a newer ClusterServiceVersion that has successfully installed.',
    });
    const deleting = { ...old, status: { phase: 'Deleting', reason: 'Replaced' } };
    t.match(decideNamespace(snapshot([deleting, done])).writes.csvs[0]?.writes, [
      { op: 'delete', ref: { name: 'etcdoperator.v0.9.2' } },
    ]);
  },
);

t.test(
  'csv - Replacing to Deleting is written with its Replaced Event before the CSV goes (regression: the delete came first and lost both)',
  async (t) => {
    const old = await etcdCsv({ phase: 'Replacing', reason: 'BeingReplaced' });
    old.metadata.name = 'etcdoperator.v0.9.2';
    const next = await etcdCsv({ phase: 'Succeeded', reason: 'InstallSucceeded' });
    next.spec = { ...next.spec, replaces: 'etcdoperator.v0.9.2' };
    const d = decideNamespace(snapshot([old, next])).writes.csvs[0];
    t.same(d?.writes, [], 'no delete in the same pass');
    t.match(d?.status, { phase: 'Deleting', reason: 'Replaced' });
    t.match(d?.events, [
      {
        reason: 'Replaced',
        type: 'Normal',
        message:
          'has been replaced by a newer ClusterServiceVersion that has successfully installed.',
        involvedObject: { kind: 'ClusterServiceVersion', name: 'etcdoperator.v0.9.2' },
        source: { component: 'operator-lifecycle-manager' },
      },
    ]);
  },
);

t.test(
  'csv - fail forward: a Failed CSV with a replacement goes Replacing only with TechPreviewUnsafeFailForward',
  async (t) => {
    const failed = await etcdCsv({ phase: 'Failed', reason: 'InstallComponentFailed' });
    failed.metadata.name = 'etcdoperator.v0.9.2';
    const next = await etcdCsv({ phase: 'Pending', reason: 'RequirementsUnknown' });
    next.spec = { ...next.spec, replaces: 'etcdoperator.v0.9.2' };
    const forward = {
      ...og,
      spec: { targetNamespaces: ['ns1'], upgradeStrategy: 'TechPreviewUnsafeFailForward' },
    };
    const d = decideNamespace(snapshot([failed, next], { operatorGroups: [forward] })).writes
      .csvs[0];
    t.match(d?.status, {
      phase: 'Replacing',
      reason: 'BeingReplaced',
      message:
        'Fail Forward is enabled, allowing Failed csv to be replaced by csv: etcdoperator.v0.9.4',
    });
    t.equal(d?.upgrade, true, 'counted as an upgrade');
    const stays = decideNamespace(snapshot([failed, next])).writes.csvs[0];
    t.not(stays?.status?.phase, 'Replacing', 'Default: a Failed CSV is not replaced');
  },
);

t.test(
  'csv - fail forward: a replaced CSV goes once the last CSV of its replacement chain Succeeded',
  async (t) => {
    const v090 = await etcdCsv({ phase: 'Replacing', reason: 'BeingReplaced' });
    v090.metadata.name = 'etcdoperator.v0.9.0';
    v090.spec = { ...v090.spec, replaces: undefined };
    const v092 = await etcdCsv({ phase: 'Replacing', reason: 'BeingReplaced' });
    v092.metadata.name = 'etcdoperator.v0.9.2';
    v092.spec = { ...v092.spec, replaces: 'etcdoperator.v0.9.0' };
    const v094 = await etcdCsv({ phase: 'Succeeded', reason: 'InstallSucceeded' });
    v094.spec = { ...v094.spec, replaces: 'etcdoperator.v0.9.2' };
    const forward = {
      ...og,
      spec: { targetNamespaces: ['ns1'], upgradeStrategy: 'TechPreviewUnsafeFailForward' },
    };
    const d = decideNamespace(snapshot([v090, v092, v094], { operatorGroups: [forward] })).writes
      .csvs[0];
    t.match(d?.status, { phase: 'Deleting', reason: 'Replaced' });
    const stays = decideNamespace(snapshot([v090, v092, v094])).writes.csvs[0];
    t.equal(stays?.status, undefined, 'Default: waits for its own replacement to succeed');
  },
);

t.test('csv - install modes: upstream messages', async (t) => {
  const csv = await etcdCsv(); // Own + Single
  t.equal(installModeProblem(csv, ['ns1']), undefined);
  t.equal(installModeProblem(csv, ['other']), undefined);
  t.match(installModeProblem(csv, ['']), {
    reason: 'UnsupportedOperatorGroup',
    message:
      'AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces',
  });
  t.match(installModeProblem(csv, ['a', 'b']), {
    message: 'MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces',
  });
  t.match(installModeProblem(csv, []), {
    message:
      'operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces',
  });
});

t.test('csv - webhook rules upstream rejects', async (t) => {
  const csv = await etcdCsv();
  const withRule = (rule: Record<string, unknown>, name = 'a'): CsvObject => ({
    ...csv,
    spec: { ...csv.spec, webhookdefinitions: [{ generateName: name, rules: [rule] }] },
  });
  t.equal(
    webhookProblem(withRule({ apiGroups: ['*'] })),
    'webhook rules cannot include all groups',
  );
  t.equal(
    webhookProblem(withRule({ apiGroups: ['operators.coreos.com'] })),
    'webhook rules cannot include the OLM group',
  );
  t.equal(
    webhookProblem(withRule({ apiGroups: ['admissionregistration.k8s.io'], resources: ['*'] })),
    'webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources',
  );
  t.equal(webhookProblem(withRule({ apiGroups: ['apps'], resources: ['deployments'] })), undefined);
  const dup: CsvObject = {
    ...csv,
    spec: { ...csv.spec, webhookdefinitions: [{ generateName: 'x' }, { generateName: 'x' }] },
  };
  t.equal(webhookProblem(dup), 'CSV contains repeated WebhookDescription name');
});

t.test(
  'deployments - CSV annotations reach the pod template; the hash detects drift',
  async (t) => {
    const csv = await etcdCsv();
    const [entry] = (
      csv.spec?.['install'] as {
        spec: { deployments: { name: string; spec: Record<string, unknown> }[] };
      }
    ).spec.deployments;
    const d = deploymentFor({ csv, entry: entry! });
    t.notOk(
      Object.keys(d.metadata.labels ?? {}).some((k) => k.startsWith('operators.coreos.com/')),
      'no component label while its CSV has none',
    );
    const labelled = deploymentFor({
      csv: {
        ...csv,
        metadata: { ...csv.metadata, labels: { 'operators.coreos.com/etcd.ns1': '', x: 'y' } },
      },
      entry: entry!,
    });
    t.same(
      Object.entries(labelled.metadata.labels ?? {}).filter(([k]) => !k.startsWith('olm.')),
      [['operators.coreos.com/etcd.ns1', '']],
      "the CSV's component labels, and no other of its labels",
    );
    t.match(d, {
      metadata: {
        labels: {
          'olm.owner': 'etcdoperator.v0.9.4',
          'olm.owner.kind': 'ClusterServiceVersion',
          'olm.managed': 'true',
        },
      },
      spec: {
        revisionHistoryLimit: 1,
        template: {
          metadata: { annotations: { 'olm.targetNamespaces': 'ns1', 'olm.operatorGroup': 'og' } },
        },
      },
    });
    const drifted = {
      ...d,
      metadata: {
        ...d.metadata,
        labels: { ...d.metadata.labels, 'olm.deployment-spec-hash': 'other' },
      },
    };
    t.match(deploymentHealth(d, drifted), {
      reinstall: true,
      message: /^deployment changed old hash=other/,
    });
    t.match(deploymentHealth(d, undefined), {
      reinstall: true,
      message: 'missing deployment with name=etcd-operator',
    });
  },
);

t.test('deployments - Subscription config: proxy env is a unit, lists merge by name', (t) => {
  const spec = {
    template: {
      spec: {
        containers: [
          {
            name: 'c',
            env: [{ name: 'A', value: '1' }],
            volumeMounts: [{ name: 'v', mountPath: '/a' }],
          },
        ],
        volumes: [{ name: 'v', emptyDir: {} }],
        affinity: { nodeAffinity: { x: 1 }, podAffinity: { y: 2 } },
      },
    },
  };
  const cluster = [
    { name: 'HTTP_PROXY', value: 'http://cluster' },
    { name: 'NO_PROXY', value: '' },
  ];
  const out = applySubscriptionConfig(spec, { env: [{ name: 'A', value: '2' }] }, cluster);
  t.same(
    out.template?.spec?.containers?.[0]?.env,
    [
      { name: 'A', value: '2' },
      { name: 'HTTP_PROXY', value: 'http://cluster' },
    ],
    'cluster proxy injected, empties dropped',
  );
  const userProxy = applySubscriptionConfig(
    spec,
    { env: [{ name: 'HTTPS_PROXY', value: 'http://mine' }] },
    cluster,
  );
  t.notOk(
    userProxy.template?.spec?.containers?.[0]?.env?.some((e) => e.name === 'HTTP_PROXY'),
    'a user proxy var suppresses the cluster ones',
  );
  const mounts = applySubscriptionConfig(spec, {
    volumes: [{ name: 'v', configMap: {} }],
    volumeMounts: [{ name: 'w', mountPath: '/w' }],
  });
  t.same(mounts.template?.spec?.volumes, [{ name: 'v', configMap: {} }]);
  t.equal(mounts.template?.spec?.containers?.[0]?.volumeMounts?.length, 2);
  t.same(
    applySubscriptionConfig(spec, { affinity: { podAffinity: {} } }).template?.spec?.affinity,
    { nodeAffinity: { x: 1 } },
    'an empty sub-field clears it',
  );
  t.equal(
    applySubscriptionConfig(spec, { affinity: {} }).template?.spec?.affinity,
    undefined,
    '{} clears all',
  );
  t.end();
});

t.test(
  'csv - status-only moves chain within one pass, each kept in the phase history',
  async (t) => {
    const d = decideNamespace(snapshot([await etcdCsv()])).writes.csvs[0];
    t.match(d?.status, { phase: 'Pending', reason: 'RequirementsNotMet' });
    t.match(d?.status?.conditions, [
      { phase: 'Pending', reason: 'RequirementsUnknown' },
      { phase: 'Pending', reason: 'RequirementsNotMet' },
    ]);
  },
);
