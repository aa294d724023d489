import t from 'tap';
import { csvNamespaceSnapshot } from '../harness/csv-snapshot.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { decideCsv } from '../../functions/install/csv/decide.js';
import { csvCleanupFinalizer } from '../../functions/install/csv/gates.js';
import { existingKey } from '../../functions/install/csv/webhooks.js';
import { deploymentFor } from '../../functions/install/csv/deployments.js';
import type { CsvNamespaceSnapshot, CsvObject } from '../harness/install-fixtures.js';
import { smallBundle } from '../harness/install-plan.js';

const now = new Date('2026-01-01T00:00:00Z');
const og: KubeObject = {
  apiVersion: 'operators.coreos.com/v1',
  kind: 'OperatorGroup',
  metadata: { name: 'og', namespace: 'ns1' },
  spec: { targetNamespaces: ['ns1'] },
  status: { namespaces: ['ns1'] },
};
const apiName = 'v1alpha1.example.com';
const service = 'etcd-operator-service';

async function apiCsv(name: string, status: CsvObject['status']): Promise<CsvObject> {
  const { csv } = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  return {
    ...(csv as CsvObject),
    metadata: {
      ...csv.metadata,
      name,
      namespace: 'ns1',
      uid: `${name}-uid`,
      finalizers: [csvCleanupFinalizer],
      annotations: {
        ...csv.metadata.annotations,
        'olm.operatorGroup': 'og',
        'olm.operatorNamespace': 'ns1',
        'olm.targetNamespaces': 'ns1',
      },
    },
    spec: {
      ...(csv.spec as object),
      apiservicedefinitions: {
        owned: [
          {
            name: 'widgets',
            group: 'example.com',
            version: 'v1alpha1',
            kind: 'Widget',
            deploymentName: 'etcd-operator',
            containerPort: 5443,
          },
        ],
      },
    },
    status,
  };
}

const crds = (): Map<string, KubeObject> =>
  new Map(
    ['etcdclusters', 'etcdbackups', 'etcdrestores'].map((n) => {
      const name = `${n}.etcd.database.coreos.com`;
      return [
        name,
        {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name },
          spec: { versions: [{ name: 'v1beta2', served: true }] },
          status: {
            conditions: [
              { type: 'Established', status: 'True' },
              { type: 'NamesAccepted', status: 'True' },
            ],
          },
        },
      ];
    }),
  );
const sa: KubeObject = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name: 'etcd-operator', namespace: 'ns1' },
};

const apiService = (labels?: Record<string, string>, available = true): KubeObject => ({
  apiVersion: 'apiregistration.k8s.io/v1',
  kind: 'APIService',
  metadata: { name: apiName, ...(labels === undefined ? {} : { labels }) },
  spec: { service: { name: service, namespace: 'ns1' } },
  status: { conditions: [{ type: 'Available', status: available ? 'True' : 'False' }] },
});
const ownedBy = (name: string) => ({
  'olm.owner': name,
  'olm.owner.kind': 'ClusterServiceVersion',
  'olm.owner.namespace': 'ns1',
});

function snapshot(
  csvs: CsvObject[],
  objects: KubeObject[] = [],
  deployments: KubeObject[] = [],
): CsvNamespaceSnapshot {
  const existing = new Map(
    objects.map((o) => [existingKey(o.kind, o.metadata.namespace, o.metadata.name ?? ''), o]),
  );
  return csvNamespaceSnapshot(now, csvs, [og], {
    crds: crds(),
    serviceAccounts: [sa],
    deployments,
    existing,
  });
}

t.test(
  'csv apiservices - an existing APIService the CSV may not adopt fails Pending with OwnerConflict',
  async (t) => {
    const pending = await apiCsv('op.v2', { phase: 'Pending', reason: 'RequirementsUnknown' });
    for (const [what, labels] of [
      ['no owner labels', undefined],
      ['another CSV', ownedBy('other.v1')],
      ['another namespace', { ...ownedBy('op.v2'), 'olm.owner.namespace': 'ns2' }],
    ] as const) {
      t.match(
        decideCsv(pending, snapshot([pending], [apiService(labels)])).status,
        { phase: 'Failed', reason: 'OwnerConflict', message: 'unable to adopt APIService' },
        what,
      );
    }
    t.match(
      decideCsv(pending, snapshot([pending], [apiService(ownedBy('op.v2'))])).status,
      { phase: 'InstallReady' },
      'its own',
    );
    t.match(decideCsv(pending, snapshot([pending])).status, { phase: 'InstallReady' }, 'none yet');
    const replacing = await apiCsv('other.v1', { phase: 'Replacing', reason: 'BeingReplaced' });
    const next = { ...pending, spec: { ...pending.spec, replaces: 'other.v1' } };
    t.match(
      decideCsv(next, snapshot([replacing, next], [apiService(ownedBy('other.v1'))])).status,
      { phase: 'InstallReady' },
      "the replaced CSV's is adopted",
    );
  },
);

t.test(
  'csv apiservices - Installing waits while an owned APIService is missing or not Available',
  async (t) => {
    const installing = await apiCsv('op.v2', { phase: 'Installing', reason: 'InstallSucceeded' });
    const [entry] = (
      installing.spec['install'] as {
        spec: { deployments: { name: string; spec: Record<string, unknown> }[] };
      }
    ).spec.deployments;
    // Its deployment is as intended but not available yet: upstream names the APIService first.
    const intended = deploymentFor({ csv: installing, entry: entry! });
    const starting: KubeObject = {
      ...intended,
      metadata: { ...intended.metadata, generation: 1 },
      status: { observedGeneration: 1, updatedReplicas: 1, conditions: [] },
    };
    for (const [what, objects] of [
      ['missing', []],
      ['not Available', [apiService(ownedBy('op.v2'), false)]],
    ] as const) {
      const s = snapshot([installing], [...objects], [starting]);
      t.match(
        decideCsv(installing, s).status,
        { phase: 'Installing', reason: 'InstallWaiting', message: 'apiServices not installed' },
        what,
      );
    }
    const s = snapshot([installing], [apiService(ownedBy('op.v2'))], [starting]);
    t.match(
      decideCsv(installing, s).status,
      { phase: 'Installing', reason: 'InstallWaiting', message: /^installing: / },
      'Available: the deployment is waited for',
    );
  },
);

const servingObjects = (): KubeObject[] => [
  apiService(ownedBy('op.v2')),
  { apiVersion: 'v1', kind: 'Service', metadata: { name: service, namespace: 'ns1' } },
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${service}-cert`, namespace: 'ns1' } },
];

t.test(
  'csv apiservices - Succeeded with an APIService resource gone fails APIServiceResourceIssue',
  async (t) => {
    const succeeded = await apiCsv('op.v2', { phase: 'Succeeded', reason: 'InstallSucceeded' });
    t.match(decideCsv(succeeded, snapshot([succeeded])).status, {
      phase: 'Failed',
      reason: 'APIServiceResourceIssue',
      message: 'apiservices.apiregistration.k8s.io "v1alpha1.example.com" not found',
    });
    t.match(decideCsv(succeeded, snapshot([succeeded], servingObjects())).status, {
      phase: 'Failed',
      reason: 'APIServiceResourceIssue',
      message: `[roles.rbac.authorization.k8s.io "${service}-cert" not found, rolebindings.rbac.authorization.k8s.io "${service}-cert" not found, clusterrolebindings.rbac.authorization.k8s.io "${service}-system:auth-delegator" not found, rolebindings.rbac.authorization.k8s.io "${service}-auth-reader" not found]`,
    });
    const [stray, ...rest] = servingObjects();
    const pointedElsewhere = {
      ...stray!,
      spec: { service: { name: 'elsewhere', namespace: 'ns1' } },
    };
    t.match(decideCsv(succeeded, snapshot([succeeded], [pointedElsewhere, ...rest])).status, {
      reason: 'APIServiceResourceIssue',
      message: 'found APIService and service reference mismatch',
    });
  },
);

t.test(
  'csv apiservices - Failed reinstalls missing APIService resources, not an APIService it cannot adopt',
  async (t) => {
    const failed = await apiCsv('op.v2', {
      phase: 'Failed',
      reason: 'APIServiceResourceIssue',
      message: 'x',
    });
    t.match(decideCsv(failed, snapshot([failed])).status, {
      phase: 'Pending',
      reason: 'APIServiceResourcesNeedReinstall',
      message: 'apiservices.apiregistration.k8s.io "v1alpha1.example.com" not found',
    });
    const foreign = apiService(ownedBy('other.v1'));
    t.same(decideCsv(failed, snapshot([failed], [foreign])), { csv: failed, writes: [] });
  },
);
