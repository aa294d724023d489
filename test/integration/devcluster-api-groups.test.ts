// The devcluster serves the groups, versions and resources of a default kube-apiserver 1.30, each
// with discovery, CRUD, watch, Table output and kube's defaults, and a fresh cluster holds the
// objects kube bootstraps (a Ready node, the system priority classes).
import t, { type Test } from 'tap';
import { kubectl, kubectlMissing, rawRequest, startCluster } from '../harness/devcluster.js';

const tableAccept = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };

/** Group/version → resources a default kube-apiserver 1.30 serves (as `kubectl api-resources`). */
const served: Record<string, string[]> = {
  v1: [
    'configmaps',
    'endpoints',
    'events',
    'limitranges',
    'namespaces',
    'nodes',
    'persistentvolumeclaims',
    'persistentvolumes',
    'pods',
    'podtemplates',
    'replicationcontrollers',
    'resourcequotas',
    'secrets',
    'serviceaccounts',
    'services',
  ],
  'admissionregistration.k8s.io/v1': [
    'mutatingwebhookconfigurations',
    'validatingadmissionpolicies',
    'validatingadmissionpolicybindings',
    'validatingwebhookconfigurations',
  ],
  'apiextensions.k8s.io/v1': ['customresourcedefinitions'],
  'apiregistration.k8s.io/v1': ['apiservices'],
  'apps/v1': ['controllerrevisions', 'daemonsets', 'deployments', 'replicasets', 'statefulsets'],
  'authentication.k8s.io/v1': ['selfsubjectreviews', 'tokenreviews'],
  'authorization.k8s.io/v1': [
    'localsubjectaccessreviews',
    'selfsubjectaccessreviews',
    'selfsubjectrulesreviews',
    'subjectaccessreviews',
  ],
  'autoscaling/v1': ['horizontalpodautoscalers'],
  'autoscaling/v2': ['horizontalpodautoscalers'],
  'events.k8s.io/v1': ['events'],
  'batch/v1': ['cronjobs', 'jobs'],
  'certificates.k8s.io/v1': ['certificatesigningrequests'],
  'coordination.k8s.io/v1': ['leases'],
  'discovery.k8s.io/v1': ['endpointslices'],
  'flowcontrol.apiserver.k8s.io/v1': ['flowschemas', 'prioritylevelconfigurations'],
  'networking.k8s.io/v1': ['ingressclasses', 'ingresses', 'networkpolicies'],
  'node.k8s.io/v1': ['runtimeclasses'],
  'policy/v1': ['poddisruptionbudgets'],
  'rbac.authorization.k8s.io/v1': ['clusterrolebindings', 'clusterroles', 'rolebindings', 'roles'],
  'scheduling.k8s.io/v1': ['priorityclasses'],
  'storage.k8s.io/v1': [
    'csidrivers',
    'csinodes',
    'csistoragecapacities',
    'storageclasses',
    'volumeattachments',
  ],
};

interface Case {
  path: string;
  body: Record<string, unknown>;
  /** Table column names after Name, as kube's printers give them. */
  columns: string[];
  /** Fields kube's defaulting sets, checked on the created object. */
  defaults?: (object: Record<string, unknown>, t: Test) => void;
}

const template = {
  metadata: { labels: { app: 'a' } },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
};

const cases: Record<string, Case> = {
  DaemonSet: {
    path: '/apis/apps/v1/namespaces/default/daemonsets',
    body: { spec: { selector: { matchLabels: { app: 'a' } }, template } },
    columns: ['Desired', 'Current', 'Ready', 'Up-to-date', 'Available', 'Node Selector', 'Age'],
    defaults: (o, t) =>
      t.match(o, {
        spec: {
          updateStrategy: {
            type: 'RollingUpdate',
            rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
          },
          revisionHistoryLimit: 10,
          template: { spec: { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' } },
        },
      }),
  },
  StatefulSet: {
    path: '/apis/apps/v1/namespaces/default/statefulsets',
    body: { spec: { serviceName: 'a', selector: { matchLabels: { app: 'a' } }, template } },
    columns: ['Ready', 'Age'],
    defaults: (o, t) =>
      t.match(o, {
        spec: {
          replicas: 1,
          podManagementPolicy: 'OrderedReady',
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
          persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
        },
      }),
  },
  ReplicationController: {
    path: '/api/v1/namespaces/default/replicationcontrollers',
    body: { spec: { template } },
    columns: ['Desired', 'Current', 'Ready', 'Age'],
    defaults: (o, t) =>
      t.match(o, {
        metadata: { labels: { app: 'a' } },
        spec: { replicas: 1, selector: { app: 'a' } },
      }),
  },
  PersistentVolume: {
    path: '/api/v1/persistentvolumes',
    body: {
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce', 'ReadWriteMany'],
        hostPath: { path: '/data' },
      },
    },
    columns: [
      'Capacity',
      'Access Modes',
      'Reclaim Policy',
      'Status',
      'Claim',
      'StorageClass',
      'VolumeAttributesClass',
      'Reason',
      'Age',
    ],
    defaults: (o, t) =>
      t.match(o, {
        spec: { persistentVolumeReclaimPolicy: 'Retain', volumeMode: 'Filesystem' },
        status: { phase: 'Pending' },
      }),
  },
  PersistentVolumeClaim: {
    path: '/api/v1/namespaces/default/persistentvolumeclaims',
    body: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    columns: [
      'Status',
      'Volume',
      'Capacity',
      'Access Modes',
      'StorageClass',
      'VolumeAttributesClass',
      'Age',
    ],
    defaults: (o, t) =>
      t.match(o, { spec: { volumeMode: 'Filesystem' }, status: { phase: 'Pending' } }),
  },
  StorageClass: {
    path: '/apis/storage.k8s.io/v1/storageclasses',
    body: { provisioner: 'example.com/disk' },
    columns: ['Provisioner', 'ReclaimPolicy', 'VolumeBindingMode', 'AllowVolumeExpansion', 'Age'],
    defaults: (o, t) => t.match(o, { reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' }),
  },
  HorizontalPodAutoscaler: {
    path: '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers',
    body: {
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'a' },
        maxReplicas: 3,
      },
    },
    columns: ['Reference', 'Targets', 'MinPods', 'MaxPods', 'Replicas', 'Age'],
    defaults: (o, t) =>
      t.match(o, {
        spec: {
          minReplicas: 1,
          metrics: [
            { type: 'Resource', resource: { name: 'cpu', target: { averageUtilization: 80 } } },
          ],
        },
      }),
  },
  CertificateSigningRequest: {
    path: '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    body: { spec: { request: 'AA==', signerName: 'example.com/signer', usages: ['client auth'] } },
    columns: ['Age', 'SignerName', 'Requestor', 'RequestedDuration', 'Condition'],
  },
  EndpointSlice: {
    path: '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
    body: { addressType: 'IPv4', endpoints: [{ addresses: ['10.1.2.3'] }], ports: [{ port: 80 }] },
    columns: ['AddressType', 'Ports', 'Endpoints', 'Age'],
    defaults: (o, t) => t.match(o, { ports: [{ port: 80, protocol: 'TCP' }] }),
  },
  PriorityClass: {
    path: '/apis/scheduling.k8s.io/v1/priorityclasses',
    body: { value: 1000 },
    columns: ['Value', 'Global-Default', 'Age'],
    defaults: (o, t) => t.match(o, { preemptionPolicy: 'PreemptLowerPriority' }),
  },
  RuntimeClass: {
    path: '/apis/node.k8s.io/v1/runtimeclasses',
    body: { handler: 'runc' },
    columns: ['Handler', 'Age'],
  },
  ValidatingAdmissionPolicy: {
    path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
    body: { spec: { validations: [{ expression: 'true' }] } },
    columns: ['Validations', 'ParamKind', 'Age'],
  },
};

void t.test(
  'devcluster api groups - every group/version of kube-apiserver 1.30 in discovery',
  async (t) => {
    const fixture = await startCluster();
    t.teardown(() => fixture.close());
    for (const [groupVersion, resources] of Object.entries(served)) {
      const path = groupVersion === 'v1' ? '/api/v1' : `/apis/${groupVersion}`;
      const answer = await rawRequest(fixture, 'GET', path);
      t.equal(answer.status, 200, `${path} is served`);
      if (answer.status !== 200) continue;
      const names = (JSON.parse(answer.body) as { resources: { name: string }[] }).resources
        .map((r) => r.name)
        .filter((name) => !name.includes('/'));
      for (const resource of resources)
        t.ok(names.includes(resource), `${groupVersion} ${resource}`);
    }
  },
);

void t.test(
  'devcluster api groups - create, get, Table, watch, defaults and delete of each new kind',
  async (t) => {
    const fixture = await startCluster();
    t.teardown(() => fixture.close());
    const startedAt = new Map<string, string>();
    for (const [kind, c] of Object.entries(cases)) {
      const apiVersion = c.path.startsWith('/api/v1')
        ? 'v1'
        : c.path.split('/').slice(2, 4).join('/');
      const name = `${kind.toLowerCase()}-1`;
      const list = await rawRequest(fixture, 'GET', c.path);
      t.equal(list.status, 200, `${kind}: list`);
      startedAt.set(
        kind,
        (JSON.parse(list.body) as { metadata: { resourceVersion: string } }).metadata
          .resourceVersion,
      );
      const body = JSON.stringify({ apiVersion, kind, metadata: { name }, ...c.body });
      const created = await rawRequest(fixture, 'POST', c.path, body);
      t.equal(created.status, 201, `${kind}: create (${created.body.slice(0, 300)})`);
      c.defaults?.(JSON.parse(created.body) as Record<string, unknown>, t);
      t.equal((await rawRequest(fixture, 'GET', `${c.path}/${name}`)).status, 200, `${kind}: get`);
      const table = await rawRequest(fixture, 'GET', c.path, undefined, tableAccept);
      const parsed = JSON.parse(table.body) as {
        kind: string;
        columnDefinitions: { name: string; priority?: number }[];
        rows: { cells: unknown[] }[];
      };
      t.equal(parsed.kind, 'Table', `${kind}: Table`);
      t.same(
        parsed.columnDefinitions.filter((d) => (d.priority ?? 0) === 0).map((d) => d.name),
        ['Name', ...c.columns],
        `${kind}: columns as kubectl get prints them`,
      );
      t.equal(parsed.rows[0]?.cells[0], name, `${kind}: the row names the object`);
    }
    // Watches from before each create replay it (all at once: each ends after its timeout).
    await Promise.all(
      Object.entries(cases).map(async ([kind, c]) => {
        const watched = await rawRequest(
          fixture,
          'GET',
          `${c.path}?watch=true&resourceVersion=${startedAt.get(kind)}&timeoutSeconds=1`,
        );
        const first = JSON.parse(watched.body.split('\n')[0] ?? '{}') as unknown;
        t.match(
          first,
          { type: 'ADDED', object: { kind, metadata: { name: `${kind.toLowerCase()}-1` } } },
          `${kind}: watch`,
        );
      }),
    );
    for (const [kind, c] of Object.entries(cases)) {
      const name = `${kind.toLowerCase()}-1`;
      t.equal(
        (await rawRequest(fixture, 'DELETE', `${c.path}/${name}`)).status,
        200,
        `${kind}: delete`,
      );
      t.equal((await rawRequest(fixture, 'GET', `${c.path}/${name}`)).status, 404, `${kind}: gone`);
    }
  },
);

void t.test(
  'devcluster api groups - a fresh cluster has a Ready node and the system priority classes',
  async (t) => {
    const fixture = await startCluster({ kubernetesVersion: 'v1.30.6' });
    t.teardown(() => fixture.close());
    const classes = JSON.parse(
      (await rawRequest(fixture, 'GET', '/apis/scheduling.k8s.io/v1/priorityclasses')).body,
    ) as { items: { metadata: { name: string }; value: number }[] };
    t.same(classes.items.map((c) => [c.metadata.name, c.value]).sort(), [
      ['system-cluster-critical', 2000000000],
      ['system-node-critical', 2000001000],
    ]);
    const missing = kubectlMissing();
    if (missing !== undefined) {
      t.fail(missing);
      return;
    }
    const nodes = await kubectl(fixture, ['get', 'nodes', '--no-headers']);
    t.equal(nodes.code, 0, nodes.stderr);
    t.match(nodes.stdout.trim().split(/\s+/), [
      'devcluster',
      'Ready',
      'control-plane',
      /\S+/,
      'v1.30.6',
    ]);
  },
);
