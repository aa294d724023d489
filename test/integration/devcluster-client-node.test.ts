// @kubernetes/client-node against the devcluster: CRUD per kind, informers through watch
// failures, conflicts, garbage collection, RBAC denials and simulated deployments.
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import t from 'tap';
import { failAnnotation } from '../../devcluster/index.js';
import { startCluster, type ClusterFixture, widgetsCrd } from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

let fixture: ClusterFixture;
let objects: KubernetesObjectApi;
let core: CoreV1Api;
let apps: AppsV1Api;

t.before(async () => {
  fixture = await startCluster();
  objects = KubernetesObjectApi.makeApiClient(fixture.kubeConfig);
  core = fixture.kubeConfig.makeApiClient(CoreV1Api);
  apps = fixture.kubeConfig.makeApiClient(AppsV1Api);
  const crd = widgetsCrd() as KubernetesObject;
  await objects.create(crd);
});
t.teardown(async () => {
  await fixture.close();
});

/** Status code of a failed client-node call. */
async function failure(
  promise: Promise<unknown>,
): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiException) {
      const body = error.body as unknown;
      const status = (typeof body === 'string' ? JSON.parse(body) : body) as Record<
        string,
        unknown
      >;
      return { code: error.code, status };
    }
    throw error;
  }
  throw new Error('the call succeeded');
}

/** Options that send a PATCH as a JSON merge patch (client-node defaults to JSON patch). */
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const podTemplate = {
  metadata: { labels: { app: 'demo' } },
  spec: { containers: [{ name: 'main', image: 'example/demo:1' }] },
};

const manifests: KubernetesObject[] = [
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'crud-cm', namespace: 'default' },
    data: { a: '1' },
  } as KubernetesObject,
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'crud-secret', namespace: 'default' },
    stringData: { a: '1' },
  } as KubernetesObject,
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'crud-sa', namespace: 'default' } },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'crud-svc', namespace: 'default' },
    spec: { ports: [{ port: 80 }], selector: { app: 'demo' } },
  } as KubernetesObject,
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'crud-pod', namespace: 'default' },
    spec: podTemplate.spec,
  } as KubernetesObject,
  {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'crud-event', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'crud-pod', namespace: 'default' },
    reason: 'Test',
    message: 'hello',
  } as KubernetesObject,
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crud-ns' } },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'crud-deploy', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'demo' } }, template: podTemplate },
  } as KubernetesObject,
  {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'crud-rs', namespace: 'default' },
    spec: { replicas: 0, selector: { matchLabels: { app: 'demo' } }, template: podTemplate },
  } as KubernetesObject,
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'crud-role', namespace: 'default' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  } as KubernetesObject,
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'crud-rb', namespace: 'default' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'crud-role' },
    subjects: [{ kind: 'ServiceAccount', name: 'crud-sa', namespace: 'default' }],
  } as KubernetesObject,
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'crud-cr' },
    rules: [],
  } as KubernetesObject,
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'crud-crb' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'crud-cr' },
    subjects: [],
  } as KubernetesObject,
  {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'crud-lease', namespace: 'default' },
    spec: { holderIdentity: 'me', leaseDurationSeconds: 15 },
  } as KubernetesObject,
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'crud-vwc' },
    webhooks: [],
  } as KubernetesObject,
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'crud-mwc' },
    webhooks: [],
  } as KubernetesObject,
  {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: 'v1.crud.example.com' },
    spec: {
      group: 'crud.example.com',
      version: 'v1',
      groupPriorityMinimum: 100,
      versionPriority: 100,
    },
  } as KubernetesObject,
  {
    apiVersion: 'example.olmq.io/v1',
    kind: 'Widget',
    metadata: { name: 'crud-widget', namespace: 'default' },
    spec: { size: 'small' },
  } as KubernetesObject,
];

for (const manifest of manifests) {
  void t.test(`client-node - create, read, replace and delete a ${manifest.kind}`, async (t) => {
    const created = await objects.create(structuredClone(manifest));
    t.ok(created.metadata?.uid, 'uid assigned');
    t.ok(created.metadata?.resourceVersion, 'resourceVersion assigned');
    const read = await objects.read({
      apiVersion: manifest.apiVersion ?? '',
      kind: manifest.kind ?? '',
      metadata: {
        name: manifest.metadata?.name ?? '',
        namespace: manifest.metadata?.namespace ?? '',
      },
    });
    t.equal(read.metadata?.uid, created.metadata?.uid);
    read.metadata = { ...read.metadata, labels: { touched: 'yes' } };
    const replaced = await objects.replace(read);
    t.equal(replaced.metadata?.labels?.['touched'], 'yes');
    t.not(replaced.metadata?.resourceVersion, created.metadata?.resourceVersion);
    await objects.delete(replaced);
    await waitFor(`${manifest.kind} to be gone`, async () => {
      try {
        await objects.read({
          apiVersion: replaced.apiVersion ?? '',
          kind: replaced.kind ?? '',
          metadata: {
            name: replaced.metadata?.name ?? '',
            namespace: replaced.metadata?.namespace ?? '',
          },
        });
        return undefined;
      } catch (error) {
        return error instanceof ApiException && error.code === 404 ? true : undefined;
      }
    });
  });
}

void t.test(
  'client-node - informer delivers adds, updates and deletes and survives dropped watches and a 410 re-list',
  async (t) => {
    const namespace = 'default';
    const informer = makeInformer<V1ConfigMap>(
      fixture.kubeConfig,
      `/api/v1/namespaces/${namespace}/configmaps`,
      () => core.listNamespacedConfigMap({ namespace, labelSelector: 'informed=yes' }),
      'informed=yes',
    );
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add:${o.metadata?.name ?? ''}`));
    informer.on('update', (o) => seen.push(`update:${o.metadata?.name ?? ''}`));
    informer.on('delete', (o) => seen.push(`delete:${o.metadata?.name ?? ''}`));
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    t.teardown(() => informer.stop());
    const cm = (name: string): V1ConfigMap => ({
      metadata: { name, labels: { informed: 'yes' } },
      data: { v: '1' },
    });
    await core.createNamespacedConfigMap({ namespace, body: cm('inf-1') });
    await waitFor('add of inf-1', () => (seen.includes('add:inf-1') ? true : undefined));
    await core.patchNamespacedConfigMap(
      { namespace, name: 'inf-1', body: { data: { v: '2' } } },
      mergePatch,
    );
    await waitFor('update of inf-1', () => (seen.includes('update:inf-1') ? true : undefined));

    fixture.cluster.faults.dropWatches();
    await core.createNamespacedConfigMap({ namespace, body: cm('inf-2') });
    await waitFor('add of inf-2 after the watch dropped', () =>
      seen.includes('add:inf-2') ? true : undefined,
    );

    fixture.cluster.faults.expireWatches();
    fixture.cluster.faults.dropWatches();
    await core.deleteNamespacedConfigMap({ namespace, name: 'inf-1' });
    await core.createNamespacedConfigMap({ namespace, body: cm('inf-3') });
    await waitFor('delete of inf-1 and add of inf-3 after a 410 re-list', () =>
      seen.includes('delete:inf-1') && seen.includes('add:inf-3') ? true : undefined,
    );
    t.same(
      informer
        .list(namespace)
        .map((o) => o.metadata?.name)
        .sort(),
      ['inf-2', 'inf-3'],
    );
    t.same(errors, [], 'no errors surfaced');
  },
);

void t.test('client-node - a stale resourceVersion is a 409 Conflict', async (t) => {
  const namespace = 'default';
  const created = await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'stale' }, data: { a: '1' } },
  });
  await core.replaceNamespacedConfigMap({
    namespace,
    name: 'stale',
    body: { ...created, data: { a: '2' } },
  });
  const { code, status } = await failure(
    core.replaceNamespacedConfigMap({
      namespace,
      name: 'stale',
      body: { ...created, data: { a: '3' } },
    }),
  );
  t.equal(code, 409);
  t.equal(status['reason'], 'Conflict');
  t.match(
    String(status['message']),
    'Operation cannot be fulfilled on configmaps "stale": the object has been modified',
  );
});

void t.test(
  'client-node - forced conflicts answer 409 for the requested number of writes',
  async (t) => {
    const namespace = 'default';
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'forced' } } });
    fixture.cluster.faults.conflictNextWrites(
      { group: '', resource: 'configmaps', namespace, name: 'forced' },
      1,
    );
    const patch = () =>
      core.patchNamespacedConfigMap(
        { namespace, name: 'forced', body: { data: { a: '1' } } },
        mergePatch,
      );
    t.equal((await failure(patch())).code, 409);
    const ok = await patch();
    t.equal(ok.data?.['a'], '1');
  },
);

void t.test(
  'client-node - deleting an owner garbage-collects dependents in the background',
  async (t) => {
    const namespace = 'default';
    const owner = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'gc-owner' } },
    });
    const ownerReferences = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner', uid: owner.metadata?.uid ?? '' },
    ];
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'gc-dependent', ownerReferences } },
    });
    await core.deleteNamespacedConfigMap({ namespace, name: 'gc-owner' });
    await waitFor('gc-dependent to be collected', async () => {
      const code = await failure(
        core.readNamespacedConfigMap({ namespace, name: 'gc-dependent' }),
      ).catch(() => undefined);
      return code?.code === 404 ? true : undefined;
    });
    t.pass('dependent collected');
  },
);

void t.test(
  'client-node - foreground deletion keeps the owner until blocking dependents are gone',
  async (t) => {
    const namespace = 'default';
    const owner = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'fg-owner' } },
    });
    const ownerReferences = [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'fg-owner',
        uid: owner.metadata?.uid ?? '',
        blockOwnerDeletion: true,
      },
    ];
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: { name: 'fg-dependent', ownerReferences, finalizers: ['test.olmq.io/hold'] },
      },
    });
    await core.deleteNamespacedConfigMap({
      namespace,
      name: 'fg-owner',
      propagationPolicy: 'Foreground',
    });
    const held = await waitFor('fg-dependent to be marked for deletion', async () => {
      const d = await core.readNamespacedConfigMap({ namespace, name: 'fg-dependent' });
      return d.metadata?.deletionTimestamp !== undefined ? d : undefined;
    });
    t.ok(held);
    const ownerNow = await core.readNamespacedConfigMap({ namespace, name: 'fg-owner' });
    t.ok(
      ownerNow.metadata?.finalizers?.includes('foregroundDeletion'),
      'owner held by foregroundDeletion',
    );
    const dependent = await core.readNamespacedConfigMap({ namespace, name: 'fg-dependent' });
    dependent.metadata = { ...dependent.metadata, finalizers: [] };
    await core.replaceNamespacedConfigMap({ namespace, name: 'fg-dependent', body: dependent });
    await waitFor('fg-owner to be gone', async () => {
      const code = await failure(
        core.readNamespacedConfigMap({ namespace, name: 'fg-owner' }),
      ).catch(() => undefined);
      return code?.code === 404 ? true : undefined;
    });
    t.pass('owner deleted after its dependent');
  },
);

void t.test(
  'client-node - orphan deletion keeps dependents and strips the owner reference',
  async (t) => {
    const namespace = 'default';
    const owner = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'orphan-owner' } },
    });
    const ownerReferences = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'orphan-owner', uid: owner.metadata?.uid ?? '' },
    ];
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'orphan-dependent', ownerReferences } },
    });
    await core.deleteNamespacedConfigMap({
      namespace,
      name: 'orphan-owner',
      propagationPolicy: 'Orphan',
    });
    await waitFor('orphan-owner to be gone', async () => {
      const code = await failure(
        core.readNamespacedConfigMap({ namespace, name: 'orphan-owner' }),
      ).catch(() => undefined);
      return code?.code === 404 ? true : undefined;
    });
    const dependent = await core.readNamespacedConfigMap({ namespace, name: 'orphan-dependent' });
    t.same(dependent.metadata?.ownerReferences ?? [], []);
  },
);

void t.test(
  'client-node - a ServiceAccount token is denied by RBAC with kube wording',
  async (t) => {
    await core.createNamespace({ body: { metadata: { name: 'rbac-test' } } });
    await core.createNamespacedServiceAccount({
      namespace: 'rbac-test',
      body: { metadata: { name: 'limited' } },
    });
    const token = await core.createNamespacedServiceAccountToken({
      namespace: 'rbac-test',
      name: 'limited',
      body: { spec: { audiences: [] } },
    });
    const kc = new KubeConfig();
    const cluster = fixture.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('no cluster in kubeconfig');
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'limited', token: token.status?.token ?? '' }],
      contexts: [{ name: 'limited', cluster: cluster.name, user: 'limited' }],
      currentContext: 'limited',
    });
    const limited = kc.makeApiClient(CoreV1Api);
    const denied = await failure(limited.listNamespacedPod({ namespace: 'rbac-test' }));
    t.equal(denied.code, 403);
    t.equal(denied.status['reason'], 'Forbidden');
    t.equal(
      denied.status['message'],
      'pods is forbidden: User "system:serviceaccount:rbac-test:limited" cannot list resource "pods" in API group "" in the namespace "rbac-test"',
    );
    await objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'limited-view', namespace: 'rbac-test' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'limited', namespace: 'rbac-test' }],
    } as KubernetesObject);
    const pods = await limited.listNamespacedPod({ namespace: 'rbac-test' });
    t.same(pods.items, []);
  },
);

void t.test(
  'client-node - a deployment becomes Available, and the fail annotation makes it unavailable until removed',
  async (t) => {
    const namespace = 'default';
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'avail' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'avail' } },
          template: { metadata: { labels: { app: 'avail' } }, spec: podTemplate.spec },
        },
      },
    });
    const available = (status: string) => async () => {
      const d = await apps.readNamespacedDeployment({ namespace, name: 'avail' });
      return d.status?.conditions?.find((c) => c.type === 'Available')?.status === status
        ? d
        : undefined;
    };
    const ready = await waitFor('avail to be Available', available('True'));
    t.equal(ready.status?.availableReplicas, 2);
    t.equal(ready.status?.readyReplicas, 2);
    await apps.patchNamespacedDeployment(
      {
        namespace,
        name: 'avail',
        body: { metadata: { annotations: { [failAnnotation]: 'unready' } } },
      },
      mergePatch,
    );
    const failing = await waitFor('avail to be unavailable', available('False'));
    t.equal(failing.status?.availableReplicas, undefined);
    await apps.patchNamespacedDeployment(
      { namespace, name: 'avail', body: { metadata: { annotations: { [failAnnotation]: null } } } },
      mergePatch,
    );
    await waitFor('avail to recover', available('True'));
  },
);

void t.test('client-node - creating in a terminating namespace is refused', async (t) => {
  await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
  await core.createNamespacedConfigMap({
    namespace: 'doomed',
    body: { metadata: { name: 'held', finalizers: ['test.olmq.io/hold'] } },
  });
  await core.deleteNamespace({ name: 'doomed' });
  await waitFor('doomed to be Terminating', async () =>
    (await core.readNamespace({ name: 'doomed' })).status?.phase === 'Terminating'
      ? true
      : undefined,
  );
  const refused = await failure(
    core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }),
  );
  t.equal(refused.code, 403);
  t.match(
    String(refused.status['message']),
    'unable to create new content in namespace doomed because it is being terminated',
  );
  const held = await core.readNamespacedConfigMap({ namespace: 'doomed', name: 'held' });
  held.metadata = { ...held.metadata, finalizers: [] };
  await core.replaceNamespacedConfigMap({ namespace: 'doomed', name: 'held', body: held });
  await waitFor('doomed to be gone', async () => {
    const result = await failure(core.readNamespace({ name: 'doomed' })).catch(() => undefined);
    return result?.code === 404 ? true : undefined;
  });
});

void t.test(
  'client-node - RBAC escalation: a service account can grant only permissions it holds',
  async (t) => {
    const ns = 'escalation';
    await core.createNamespace({ body: { metadata: { name: ns } } });
    await core.createNamespacedServiceAccount({
      namespace: ns,
      body: { metadata: { name: 'installer' } },
    });
    await objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'installer', namespace: ns },
      rules: [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles', 'rolebindings'],
          verbs: ['create', 'get'],
        },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
      ],
    } as KubernetesObject);
    await objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'installer', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'installer' },
      subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: ns }],
    } as KubernetesObject);
    const token = await core.createNamespacedServiceAccountToken({
      namespace: ns,
      name: 'installer',
      body: { spec: { audiences: [] } },
    });
    const cluster = fixture.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('no cluster in kubeconfig');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'installer', token: token.status?.token ?? '' }],
      contexts: [{ name: 'installer', cluster: cluster.name, user: 'installer' }],
      currentContext: 'installer',
    });
    const installer = KubernetesObjectApi.makeApiClient(kc);
    const role = (name: string, resources: string[]) =>
      ({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name, namespace: ns },
        rules: [{ apiGroups: [''], resources, verbs: ['get'] }],
      }) as KubernetesObject;
    const held = await installer.create(role('held', ['configmaps']));
    t.equal(held.metadata?.name, 'held');
    const escalated = await failure(installer.create(role('escalated', ['secrets'])));
    t.equal(escalated.code, 403);
    t.match(
      String(escalated.status['message']),
      'is attempting to grant RBAC permissions not currently held',
    );
    const binding = await failure(
      installer.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'too-much', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
        subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: ns }],
      } as KubernetesObject),
    );
    t.equal(binding.code, 403);
  },
);

void t.test(
  'client-node - a legacy service-account-token secret is filled with a working token',
  async (t) => {
    const ns = 'legacy-token';
    await core.createNamespace({ body: { metadata: { name: ns } } });
    await core.createNamespacedServiceAccount({
      namespace: ns,
      body: { metadata: { name: 'old-style' } },
    });
    await core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: {
          name: 'old-style-token',
          annotations: { 'kubernetes.io/service-account.name': 'old-style' },
        },
        type: 'kubernetes.io/service-account-token',
      },
    });
    const secret = await waitFor('the token to be filled in', async () => {
      const s = await core.readNamespacedSecret({ namespace: ns, name: 'old-style-token' });
      return s.data?.['token'] !== undefined ? s : undefined;
    });
    t.ok(secret.data?.['ca.crt']);
    const cluster = fixture.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('no cluster in kubeconfig');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [cluster],
      users: [
        {
          name: 'old-style',
          token: Buffer.from(secret.data?.['token'] ?? '', 'base64').toString(),
        },
      ],
      contexts: [{ name: 'old-style', cluster: cluster.name, user: 'old-style' }],
      currentContext: 'old-style',
    });
    const denied = await failure(kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns }));
    t.equal(denied.code, 403, 'authenticated (403, not 401) as the service account');
    t.match(
      String(denied.status['message']),
      'User "system:serviceaccount:legacy-token:old-style" cannot list resource "pods"',
    );
  },
);
