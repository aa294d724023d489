import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  getCsv,
  installFunctionFor,
  installPlanStatus,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import {
  createInstallPlan,
  smallBundle,
  withOlmGroupWebhook,
  type TestBundle,
} from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

const failAnnotation = 'devcluster.olmq.io/fail';

const deploymentRef = (namespace: string, name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  namespace,
  name,
});

interface PodTemplate {
  template: {
    spec: { containers: { env?: { name: string; value?: string }[] }[]; tolerations?: unknown[] };
  };
}

function csvSpec(bundle: TestBundle): Record<string, unknown> {
  return bundle.csv['spec'] as Record<string, unknown>;
}

async function planComplete(
  client: Parameters<typeof installPlanStatus>[0],
  namespace: string,
  name: string,
): Promise<void> {
  await waitFor(
    `plan ${namespace}/${name} to be Complete`,
    async () => (await installPlanStatus(client, namespace, name))?.phase === 'Complete',
    20_000,
  );
}

t.test(
  'install - upgrade along the replaces chain: the new CSV takes over, the old one is gone',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'up');
    const v092 = await smallBundle('etcd', 'etcdoperator.v0.9.2');
    await createInstallPlan(client, { name: 'install-1', namespace: 'up', bundles: [v092] });
    await waitForCsvPhase(client, 'up', 'etcdoperator.v0.9.2', 'Succeeded');

    const v094 = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    t.equal(
      csvSpec(v094)['replaces'],
      'etcdoperator.v0.9.2',
      'the catalog chains v0.9.4 to v0.9.2',
    );
    await createInstallPlan(client, {
      name: 'install-2',
      namespace: 'up',
      bundles: [v094],
      generation: 2,
    });
    await planComplete(client, 'up', 'install-2');
    await waitForCsvPhase(client, 'up', 'etcdoperator.v0.9.4', 'Succeeded');
    await waitFor(
      'the old CSV to be deleted',
      async () => (await getCsv(client, 'up', 'etcdoperator.v0.9.2')) === undefined,
      20_000,
    );
    const deployment = await client.get(deploymentRef('up', 'etcd-operator'));
    t.equal(
      deployment?.metadata.labels?.['olm.owner'],
      'etcdoperator.v0.9.4',
      'the deployment moved to the new CSV',
    );
    t.match(deployment?.metadata.ownerReferences, [{ name: 'etcdoperator.v0.9.4' }]);
    // Upstream's Event for the replaced CSV, recorded as operator-lifecycle-manager.
    const events = await client.list({ apiVersion: 'v1', kind: 'Event', namespace: 'up' });
    const replaced = events.items.filter(
      (e) =>
        (e as { reason?: string }).reason === 'Replaced' &&
        (e as { involvedObject?: { name?: string } }).involvedObject?.name ===
          'etcdoperator.v0.9.2',
    );
    t.match(replaced, [
      {
        type: 'Normal',
        message:
          'has been replaced by a newer ClusterServiceVersion that has successfully installed.',
        involvedObject: { kind: 'ClusterServiceVersion', namespace: 'up' },
        source: { component: 'operator-lifecycle-manager' },
        reportingComponent: 'operator-lifecycle-manager',
      },
    ]);
    t.equal(replaced.length, 1, 'one Replaced Event');
  },
);

t.test('install - Subscription config env and proxy variables reach the Deployment', async (t) => {
  const { client } = await installFunctionFor(t);
  await namespaceWithOperatorGroup(client, 'cfg');
  const sub = await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: 'etcd', namespace: 'cfg' },
    spec: {
      name: 'etcd',
      source: 'community',
      sourceNamespace: 'olm',
      channel: 'singlenamespace-alpha',
      config: {
        env: [
          { name: 'HTTP_PROXY', value: 'http://proxy.example:3128' },
          { name: 'NO_PROXY', value: '.cluster.local' },
          { name: 'LOG_LEVEL', value: 'debug' },
        ],
        tolerations: [
          { key: 'dedicated', operator: 'Equal', value: 'operators', effect: 'NoSchedule' },
        ],
      },
    },
  });
  await client.updateStatus({
    ...sub,
    status: { installedCSV: 'etcdoperator.v0.9.4', currentCSV: 'etcdoperator.v0.9.4' },
  });
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  await createInstallPlan(client, { name: 'install-cfg', namespace: 'cfg', bundles: [bundle] });
  await waitForCsvPhase(client, 'cfg', 'etcdoperator.v0.9.4', 'Succeeded');
  const deployment = await client.get(deploymentRef('cfg', 'etcd-operator'));
  const spec = deployment?.['spec'] as PodTemplate;
  const env = spec.template.spec.containers[0]?.env ?? [];
  const value = (name: string): string | undefined => env.find((e) => e.name === name)?.value;
  t.equal(value('HTTP_PROXY'), 'http://proxy.example:3128');
  t.equal(value('NO_PROXY'), '.cluster.local');
  t.equal(value('LOG_LEVEL'), 'debug');
  t.equal(value('OPERATOR_CONDITION_NAME'), 'etcdoperator.v0.9.4');
  t.match(spec.template.spec.tolerations, [{ key: 'dedicated' }]);
});

t.test(
  'install - an unavailable Deployment turns the CSV Failed/ComponentUnhealthy; it recovers',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'sick');
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, { name: 'install-sick', namespace: 'sick', bundles: [bundle] });
    await waitForCsvPhase(client, 'sick', 'etcdoperator.v0.9.4', 'Succeeded');

    await client.patch(deploymentRef('sick', 'etcd-operator'), 'merge', {
      metadata: { annotations: { [failAnnotation]: 'unready' } },
    });
    const failed = await waitFor(
      'the CSV to record Failed/ComponentUnhealthy',
      async () => {
        const csv = await getCsv(client, 'sick', 'etcdoperator.v0.9.4');
        return csv?.status?.conditions?.find(
          (c) => c.phase === 'Failed' && c.reason === 'ComponentUnhealthy',
        );
      },
      20_000,
    );
    t.match(failed, { message: /waiting for deployment etcd-operator to become ready/ });
    t.not((await getCsv(client, 'sick', 'etcdoperator.v0.9.4'))?.status?.phase, 'Succeeded');

    await client.patch(deploymentRef('sick', 'etcd-operator'), 'json', [
      { op: 'remove', path: `/metadata/annotations/${failAnnotation.replace('/', '~1')}` },
    ]);
    await waitForCsvPhase(client, 'sick', 'etcdoperator.v0.9.4', 'Succeeded');
  },
);

t.test('install - deleting the CSV removes its deployment and RBAC, keeps the CRDs', async (t) => {
  const { client } = await installFunctionFor(t);
  await namespaceWithOperatorGroup(client, 'gone', {}); // AllNamespaces
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4-clusterwide');
  await createInstallPlan(client, { name: 'install-p', namespace: 'gone', bundles: [bundle] });
  await planComplete(client, 'gone', 'install-p');
  await waitForCsvPhase(client, 'gone', 'etcdoperator.v0.9.4-clusterwide', 'Succeeded');
  const owner = 'olm.owner=etcdoperator.v0.9.4-clusterwide';
  const clusterRoles = await client.list(
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' },
    { labelSelector: owner },
  );
  t.ok(clusterRoles.items.length > 0, 'the plan created owned ClusterRoles');

  await client.delete({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    namespace: 'gone',
    name: 'etcdoperator.v0.9.4-clusterwide',
  });
  await waitFor(
    'the CSV to be gone',
    async () => (await getCsv(client, 'gone', 'etcdoperator.v0.9.4-clusterwide')) === undefined,
    20_000,
  );
  await waitFor(
    'the deployment to be collected',
    async () => (await client.get(deploymentRef('gone', 'etcd-operator'))) === undefined,
    20_000,
  );
  for (const kind of ['ClusterRole', 'ClusterRoleBinding']) {
    const left = await client.list(
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind },
      { labelSelector: owner },
    );
    t.equal(left.items.length, 0, `no ${kind} left`);
  }
  await waitFor('the ServiceAccount to be collected', async () => {
    const sa = await client.get({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      namespace: 'gone',
      name: 'etcd-operator',
    });
    return sa === undefined;
  });
  const crd = await client.get({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    name: 'etcdclusters.etcd.database.coreos.com',
  });
  t.ok(crd, 'the CRD stays');
});

/** A CSV created directly (no plan), from a real bundle with `edit` applied. */
async function createCsv(
  client: Parameters<typeof installPlanStatus>[0],
  namespace: string,
  bundle: TestBundle,
  edit: (spec: Record<string, unknown>) => void,
): Promise<KubeObject> {
  const csv = structuredClone(bundle.csv);
  csv.metadata.namespace = namespace;
  edit(csv['spec'] as Record<string, unknown>);
  return client.create(csv);
}

t.test('install - bad inputs end in upstream failure reasons', async (t) => {
  const { client } = await installFunctionFor(t);
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');

  await t.test('an unknown install strategy: InvalidInstallStrategy', async (t) => {
    await namespaceWithOperatorGroup(client, 'bad-strategy');
    await client.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'etcd-operator', namespace: 'bad-strategy' },
    });
    await createCsv(client, 'bad-strategy', bundle, (spec) => {
      (spec['install'] as Record<string, unknown>)['strategy'] = 'helm';
    });
    const csv = (await waitForCsvPhase(
      client,
      'bad-strategy',
      'etcdoperator.v0.9.4',
      'Failed',
      'InvalidInstallStrategy',
    )) as Awaited<ReturnType<typeof getCsv>>;
    t.equal(
      csv?.status?.message,
      'install strategy invalid: unsupported InstallStrategy type: helm',
    );
  });

  await t.test('a required CRD that does not exist: Pending/RequirementsNotMet', async (t) => {
    await namespaceWithOperatorGroup(client, 'no-crd');
    await createCsv(client, 'no-crd', bundle, (spec) => {
      spec['customresourcedefinitions'] = {
        required: [{ name: 'widgets.example.com', version: 'v1', kind: 'Widget' }],
      };
    });
    const csv = await waitForCsvPhase(
      client,
      'no-crd',
      'etcdoperator.v0.9.4',
      'Pending',
      'RequirementsNotMet',
    );
    const rows = (csv['status'] as { requirementStatus: unknown[] }).requirementStatus;
    t.match(rows, [
      {
        kind: 'CustomResourceDefinition',
        name: 'widgets.example.com',
        status: 'NotPresent',
        message: 'CRD is not present',
      },
      {
        kind: 'ServiceAccount',
        name: 'etcd-operator',
        status: 'NotPresent',
        message: 'Service account does not exist',
      },
    ]);
  });

  await t.test('a webhook rule on operators.coreos.com: InvalidWebhookDescription', async (t) => {
    await namespaceWithOperatorGroup(client, 'bad-hook');
    const hooked = withOlmGroupWebhook(bundle);
    await createInstallPlan(client, {
      name: 'install-hook',
      namespace: 'bad-hook',
      bundles: [hooked],
    });
    const csv = await waitForCsvPhase(
      client,
      'bad-hook',
      'etcdoperator.v0.9.4',
      'Failed',
      'InvalidWebhookDescription',
    );
    t.equal(
      (csv['status'] as { message: string }).message,
      'webhook rules cannot include the OLM group',
    );
  });

  await t.test(
    'a webhook naming a deployment the strategy lacks: InstallComponentFailed',
    async (t) => {
      await namespaceWithOperatorGroup(client, 'bad-name');
      const hooked = structuredClone(bundle);
      csvSpec(hooked)['webhookdefinitions'] = [
        {
          generateName: 'vetcd.example.com',
          type: 'ValidatingAdmissionWebhook',
          deploymentName: 'etcd-operator-typo',
          containerPort: 443,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          rules: [
            {
              apiGroups: ['etcd.database.coreos.com'],
              apiVersions: ['*'],
              operations: ['CREATE'],
              resources: ['etcdclusters'],
            },
          ],
        },
      ];
      await createInstallPlan(client, {
        name: 'install-name',
        namespace: 'bad-name',
        bundles: [hooked],
      });
      const csv = await waitForCsvPhase(
        client,
        'bad-name',
        'etcdoperator.v0.9.4',
        'Failed',
        'InstallComponentFailed',
      );
      t.match(
        (csv['status'] as { message: string }).message,
        /^install strategy failed: webhook vetcd.example.com names deployment "etcd-operator-typo"/,
      );
    },
  );

  await t.test('no OperatorGroup: NoOperatorGroup', async (t) => {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'no-og' } });
    await createCsv(client, 'no-og', bundle, () => undefined);
    const csv = await waitForCsvPhase(
      client,
      'no-og',
      'etcdoperator.v0.9.4',
      'Failed',
      'NoOperatorGroup',
    );
    t.equal(
      (csv['status'] as { message: string }).message,
      'csv in namespace with no operatorgroups',
    );
  });

  await t.test('an install mode the CSV lacks: UnsupportedOperatorGroup', async (t) => {
    await namespaceWithOperatorGroup(client, 'all-ns', {});
    await createCsv(client, 'all-ns', bundle, () => undefined);
    const csv = await waitForCsvPhase(
      client,
      'all-ns',
      'etcdoperator.v0.9.4',
      'Failed',
      'UnsupportedOperatorGroup',
    );
    t.equal(
      (csv['status'] as { message: string }).message,
      'AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces',
    );
  });
});
