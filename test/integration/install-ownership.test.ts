// Who may own what (upstream's olm operator, v0.26.0): a CSV owning a CRD another CSV of the
// namespace owns, or an APIService it may not adopt, fails with OwnerConflict; an owned
// APIService must be Available before the CSV Succeeds; conversion webhooks are written into
// their CRDs only for AllNamespaces-only CSVs, and taken out again when the CSV goes.
import t from 'tap';
import type { KubeClient } from '../../shared/kube/client.js';
import {
  getCsv,
  installFunctionFor,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import { createInstallPlan, smallBundle, type TestBundle } from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

const csvRef = (namespace: string, name: string) => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  namespace,
  name,
});

/** `bundle` under another CSV name, replacing nothing. */
function renamed(bundle: TestBundle, name: string): TestBundle {
  const copy = structuredClone(bundle);
  copy.csv.metadata.name = name;
  delete (copy.csv['spec'] as Record<string, unknown>)['replaces'];
  return copy;
}

t.test(
  'install ownership - a CSV owning CRDs another CSV of the namespace owns fails with OwnerConflict until that CSV goes',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'own');
    const v092 = await smallBundle('etcd', 'etcdoperator.v0.9.2');
    await createInstallPlan(client, { name: 'install-1', namespace: 'own', bundles: [v092] });
    await waitForCsvPhase(client, 'own', 'etcdoperator.v0.9.2', 'Succeeded');

    const fork = renamed(await smallBundle('etcd', 'etcdoperator.v0.9.4'), 'etcd-fork.v1.0.0');
    await createInstallPlan(client, {
      name: 'install-2',
      namespace: 'own',
      bundles: [fork],
      generation: 2,
    });
    const failed = await waitForCsvPhase(client, 'own', 'etcd-fork.v1.0.0', 'Failed');
    t.match(failed['status'], {
      reason: 'OwnerConflict',
      message: 'conflicting CRD owner in namespace',
    });
    const first = await client.get(csvRef('own', 'etcdoperator.v0.9.2'));
    t.match(first?.['status'], { phase: 'Succeeded' }, 'the first owner is untouched');

    await client.delete(csvRef('own', 'etcdoperator.v0.9.2'));
    await waitFor(
      'the first CSV to be gone',
      async () => (await getCsv(client, 'own', 'etcdoperator.v0.9.2')) === undefined,
      20_000,
    );
    await waitForCsvPhase(client, 'own', 'etcd-fork.v1.0.0', 'Succeeded', undefined, 30_000);
  },
);

const nmo = 'node-maintenance-operator.v0.17.0';
const nmoCrd = 'nodemaintenances.nodemaintenance.medik8s.io';
const crdRef = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  name: nmoCrd,
};

/** The node-maintenance operator with a conversion webhook for its CRD. */
async function withConversion(): Promise<TestBundle> {
  const bundle = await smallBundle('node-maintenance-operator', nmo);
  const spec = bundle.csv['spec'] as { webhookdefinitions: unknown[] };
  spec.webhookdefinitions.push({
    type: 'ConversionWebhook',
    generateName: 'cnodemaintenance.kb.io',
    deploymentName: 'node-maintenance-operator-controller-manager',
    containerPort: 443,
    targetPort: 9443,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    webhookPath: '/convert',
    conversionCRDs: [nmoCrd],
  });
  return bundle;
}

const conversionOf = async (client: KubeClient): Promise<unknown> =>
  ((await client.get(crdRef))?.['spec'] as { conversion?: unknown } | undefined)?.conversion;

t.test(
  'install ownership - a conversion webhook goes into its CRD and back to None when the CSV is deleted',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'conv', {}); // AllNamespaces
    await createInstallPlan(client, {
      name: 'install-conv',
      namespace: 'conv',
      bundles: [await withConversion()],
    });
    await waitForCsvPhase(client, 'conv', nmo, 'Succeeded', undefined, 30_000);
    t.match(await conversionOf(client), {
      strategy: 'Webhook',
      webhook: {
        clientConfig: {
          service: {
            namespace: 'conv',
            name: 'node-maintenance-operator-controller-manager-service',
            path: '/convert',
            port: 443,
          },
        },
      },
    });
    await client.delete(csvRef('conv', nmo));
    await waitFor(
      'the CRD conversion back to None',
      async () => {
        const conversion = (await conversionOf(client)) as { strategy?: string } | undefined;
        return conversion?.strategy === 'None' && !('webhook' in conversion);
      },
      20_000,
    );
    t.ok(await client.get(crdRef), 'the CRD stays');
  },
);

t.test(
  'install ownership - a conversion webhook in a CSV supporting more than AllNamespaces fails the install',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'conv2', {}); // AllNamespaces
    const bundle = await withConversion();
    (bundle.csv['spec'] as { installModes: unknown[] }).installModes = [
      { type: 'OwnNamespace', supported: true },
      { type: 'SingleNamespace', supported: false },
      { type: 'MultiNamespace', supported: false },
      { type: 'AllNamespaces', supported: true },
    ];
    await createInstallPlan(client, {
      name: 'install-conv',
      namespace: 'conv2',
      bundles: [bundle],
    });
    const failed = await waitForCsvPhase(client, 'conv2', nmo, 'Failed', undefined, 30_000);
    t.match(failed['status'], {
      reason: 'InstallComponentFailed',
      message:
        'install strategy failed: unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces',
    });
    t.notOk(
      ((await conversionOf(client)) as { strategy?: string } | undefined)?.strategy === 'Webhook',
      'the CRD does not convert through the webhook',
    );
  },
);

const apiName = 'v1alpha1.widgets.example.com';
const apiRef = { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', name: apiName };

/** etcd v0.9.4 owning an aggregated API served by its deployment. */
async function withApiService(): Promise<TestBundle> {
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  (bundle.csv['spec'] as Record<string, unknown>)['apiservicedefinitions'] = {
    owned: [
      {
        name: 'widgets',
        group: 'widgets.example.com',
        version: 'v1alpha1',
        kind: 'Widget',
        displayName: 'Widget',
        deploymentName: 'etcd-operator',
        containerPort: 5443,
      },
    ],
  };
  return bundle;
}

t.test(
  'install ownership - an existing APIService the CSV may not adopt fails it with OwnerConflict',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await client.create({
      ...apiRef,
      metadata: { name: apiName },
      spec: {
        group: 'widgets.example.com',
        version: 'v1alpha1',
        groupPriorityMinimum: 100,
        versionPriority: 10,
        service: { name: 'someone-else', namespace: 'default', port: 443 },
      },
    });
    await namespaceWithOperatorGroup(client, 'apis');
    await createInstallPlan(client, {
      name: 'install-api',
      namespace: 'apis',
      bundles: [await withApiService()],
    });
    const failed = await waitForCsvPhase(client, 'apis', 'etcdoperator.v0.9.4', 'Failed');
    t.match(failed['status'], { reason: 'OwnerConflict', message: 'unable to adopt APIService' });
    t.match(
      (await client.get(apiRef))?.['spec'],
      { service: { name: 'someone-else', namespace: 'default' } },
      'the APIService is left as it was',
    );
  },
);

t.test(
  'install ownership - a CSV waits in Installing while its APIService is not Available',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'apis2');
    await createInstallPlan(client, {
      name: 'install-api',
      namespace: 'apis2',
      bundles: [await withApiService()],
    });
    await waitFor('the APIService to be written', () => client.get(apiRef), 30_000);
    const waiting = await waitFor(
      'the CSV to wait for its APIService',
      async () => {
        const csv = await getCsv(client, 'apis2', 'etcdoperator.v0.9.4');
        const deployment = await client.get({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace: 'apis2',
          name: 'etcd-operator',
        });
        const ready = (deployment?.['status'] as { readyReplicas?: number } | undefined)
          ?.readyReplicas;
        return csv?.status?.message === 'apiServices not installed' && ready === 1
          ? csv
          : undefined;
      },
      30_000,
    );
    t.match(waiting.status, { phase: 'Installing', reason: 'InstallWaiting' });
    t.notOk(
      (await getCsv(client, 'apis2', 'etcdoperator.v0.9.4'))?.status?.conditions?.some(
        (c) => c.phase === 'Succeeded',
      ),
      'never Succeeded',
    );
  },
);
