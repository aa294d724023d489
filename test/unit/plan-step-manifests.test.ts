// Step manifests as upstream v0.26.0's catalog operator writes them into status.plan: the CSV
// with spec.cleanup, status.cleanup and named API resource references; the generated RBAC
// without apiVersion/kind, the namespaced objects owned by their CSV; the properties annotation
// with olm.gvk before olm.package.
import t from 'tap';
import { allBundleProperties, type CatalogBundle } from '../../shared/catalog/index.js';
import { planSteps } from '../../shared/install-plan/index.js';
import type { RecordedBundle } from '../../shared/resolver/record.js';

const recorded: RecordedBundle = {
  package: 'etcd',
  name: 'etcdoperator.v0.9.4',
  version: '0.9.4',
  catalog: { name: 'community', namespace: 'olm' },
  catalogDigest: 'sha256:x',
  channel: 'alpha',
  subscription: 'etcd',
  action: 'install',
  replaces: null,
  properties: [],
  requires: [],
};

const rules = [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }];
const csv = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'etcdoperator.v0.9.4', namespace: 'placeholder' },
  spec: {
    customresourcedefinitions: {
      owned: [
        {
          name: 'etcdclusters.etcd.database.coreos.com',
          kind: 'EtcdCluster',
          version: 'v1beta2',
          resources: [{ kind: 'Pod', version: 'v1' }],
        },
      ],
    },
    install: {
      strategy: 'deployment',
      spec: {
        deployments: [],
        permissions: [{ serviceAccountName: 'etcd-operator', rules }],
        clusterPermissions: [{ serviceAccountName: 'etcd-operator', rules }],
      },
    },
  },
};

type Manifest = Record<string, unknown> & {
  metadata: { namespace?: string; ownerReferences?: Record<string, unknown>[] };
};

const steps = planSteps('team-a', [{ bundle: recorded, manifests: { csv, others: [] } }]);
const manifestOf = (kind: string): Manifest => {
  const step = steps.find((s) => s.resource.kind === kind);
  return JSON.parse(step?.resource.manifest ?? '{}') as Manifest;
};

void t.test('CSV step manifest - cleanup and resource names as upstream serialises them', (t) => {
  const m = manifestOf('ClusterServiceVersion') as Manifest & {
    spec: {
      cleanup?: unknown;
      customresourcedefinitions: { owned: { resources: unknown[] }[] };
    };
    status?: unknown;
  };
  t.same(m.spec.cleanup, { enabled: false }, 'spec.cleanup defaults to disabled');
  t.same(m.status, { cleanup: {} }, 'status.cleanup empty');
  t.same(
    m.spec.customresourcedefinitions.owned[0]?.resources,
    [{ kind: 'Pod', version: 'v1', name: '' }],
    'a resource reference without a name gets an empty one',
  );
  t.end();
});

void t.test('RBAC step manifests - untyped, the namespaced ones owned by the CSV', (t) => {
  const owner = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    name: 'etcdoperator.v0.9.4',
    uid: '',
    controller: false,
    blockOwnerDeletion: false,
  };
  for (const kind of [
    'ServiceAccount',
    'Role',
    'RoleBinding',
    'ClusterRole',
    'ClusterRoleBinding',
  ]) {
    const m = manifestOf(kind);
    t.notOk('apiVersion' in m, `${kind}: no apiVersion`);
    t.notOk('kind' in m, `${kind}: no kind`);
  }
  for (const kind of ['ServiceAccount', 'Role', 'RoleBinding']) {
    t.same(manifestOf(kind).metadata.ownerReferences, [owner], `${kind}: owned by the CSV`);
  }
  t.notOk(manifestOf('ClusterRole').metadata.ownerReferences, 'ClusterRole: no owner reference');
  t.notOk(manifestOf('ClusterRole').metadata.namespace, 'ClusterRole: no namespace');
  t.equal(
    manifestOf('ClusterRoleBinding').metadata.namespace,
    'team-a',
    "ClusterRoleBinding: the plan's namespace, as upstream",
  );
  const step = steps.find((s) => s.resource.kind === 'ClusterRoleBinding');
  t.equal(step?.resource.group, 'rbac.authorization.k8s.io', 'the step still names the group');
  t.equal(step?.resource.version, 'v1', 'and the version');
  t.end();
});

void t.test(
  'properties annotation - olm.gvk before olm.package, as the catalog lists them',
  (t) => {
    const bundle: CatalogBundle = {
      name: 'etcdoperator.v0.9.4',
      package: 'etcd',
      version: '0.9.4',
      semver: '0.9.4',
      image: '',
      channels: ['alpha'],
      replaces: null,
      skips: [],
      skipRange: null,
      properties: [],
      providedApis: [
        {
          group: 'etcd.database.coreos.com',
          version: 'v1beta2',
          kind: 'EtcdBackup',
          plural: 'etcdbackups',
        },
        {
          group: 'etcd.database.coreos.com',
          version: 'v1beta2',
          kind: 'EtcdCluster',
          plural: 'etcdclusters',
        },
      ],
      requiredApis: [],
      dependencies: [],
      installModes: null,
      displayName: null,
      provider: null,
      deprecation: null,
    };
    t.same(
      allBundleProperties(bundle).map((p) => p.type),
      ['olm.gvk', 'olm.gvk', 'olm.package'],
    );
    t.end();
  },
);
