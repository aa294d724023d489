import t from 'tap';
import {
  installFunctionFor,
  installPlanStatus,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import { createInstallPlan, smallBundle } from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

t.test(
  'install - a scoped install lacking permissions is Forbidden until the service account is granted them',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'scoped' } });
    await client.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'installer', namespace: 'scoped' },
    });
    await client.create({
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'og', namespace: 'scoped' },
      spec: { targetNamespaces: ['scoped'], serviceAccountName: 'installer' },
    });
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, {
      name: 'install-scoped',
      namespace: 'scoped',
      bundles: [bundle],
    });

    const forbidden = await waitFor(
      'the plan to report the Forbidden error',
      async () => {
        const status = await installPlanStatus(client, 'scoped', 'install-scoped');
        return status?.message?.startsWith('retrying execution due to error:') ? status : undefined;
      },
      20_000,
    );
    t.equal(forbidden.phase, 'Installing', 'a Forbidden plan keeps Installing');
    t.match(
      forbidden.message,
      /User "system:serviceaccount:scoped:installer" cannot create resource "clusterserviceversions"/,
    );
    const ip = await client.get({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'InstallPlan',
      namespace: 'scoped',
      name: 'install-scoped',
    });
    t.match(ip?.['status'], {
      attenuatedServiceAccountRef: { name: 'installer', namespace: 'scoped' },
    });

    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'installer', namespace: 'scoped' },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'installer', namespace: 'scoped' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'installer' },
      subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: 'scoped' }],
    });
    await waitFor(
      'the granted plan to be Complete',
      async () =>
        (await installPlanStatus(client, 'scoped', 'install-scoped'))?.phase === 'Complete',
      30_000,
    );
    await waitForCsvPhase(client, 'scoped', 'etcdoperator.v0.9.4', 'Succeeded', undefined, 30_000);
    const deployment = await client.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'scoped',
      name: 'etcd-operator',
    });
    t.ok(deployment, 'the deployment was written as the service account');
  },
);

t.test(
  'install - a scoped CSV forbidden to create its Deployment fails without retry, then recovers when granted',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'scoped2', {
      targetNamespaces: ['scoped2'],
      serviceAccountName: 'installer',
    });
    await client.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'installer', namespace: 'scoped2' },
    });
    const grant = async (name: string, apiGroups: string[]): Promise<void> => {
      await client.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name, namespace: 'scoped2' },
        rules: [{ apiGroups, resources: ['*'], verbs: ['*'] }],
      });
      await client.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name, namespace: 'scoped2' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: 'scoped2' }],
      });
    };
    await grant('everything-but-apps', ['', 'rbac.authorization.k8s.io', 'operators.coreos.com']);
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, {
      name: 'install-s2',
      namespace: 'scoped2',
      bundles: [bundle],
    });
    const failed = await waitForCsvPhase(
      client,
      'scoped2',
      'etcdoperator.v0.9.4',
      'Failed',
      'InstallComponentFailedNoRetry',
    );
    t.match(
      (failed['status'] as { message: string }).message,
      /^install strategy failed: .*User "system:serviceaccount:scoped2:installer" cannot create resource "deployments" in API group "apps"/,
    );
    await grant('apps', ['apps']);
    await waitForCsvPhase(client, 'scoped2', 'etcdoperator.v0.9.4', 'Succeeded', undefined, 30_000);
    const csv = await client.get({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'scoped2',
      name: 'etcdoperator.v0.9.4',
    });
    const history = (csv?.['status'] as { conditions: { reason?: string }[] }).conditions;
    t.ok(
      history.some((c) => c.reason === 'DetectedClusterChange'),
      'the CSV went through DetectedClusterChange',
    );
  },
);

t.test(
  'install - a NoRetry scoped CSV recovers when a ClusterRoleBinding grants the missing permission',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'scoped3', {
      targetNamespaces: ['scoped3'],
      serviceAccountName: 'installer',
    });
    await client.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'installer', namespace: 'scoped3' },
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'most', namespace: 'scoped3' },
      rules: [
        {
          apiGroups: ['', 'rbac.authorization.k8s.io', 'operators.coreos.com'],
          resources: ['*'],
          verbs: ['*'],
        },
      ],
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'most', namespace: 'scoped3' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'most' },
      subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: 'scoped3' }],
    });
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, {
      name: 'install-s3',
      namespace: 'scoped3',
      bundles: [bundle],
    });
    await waitForCsvPhase(
      client,
      'scoped3',
      'etcdoperator.v0.9.4',
      'Failed',
      'InstallComponentFailedNoRetry',
    );
    // Cluster-wide grants are cluster-scoped RBAC events: they retry the namespace too.
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'scoped3-deployments' },
      rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }],
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'scoped3-deployments' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'scoped3-deployments',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: 'scoped3' }],
    });
    const csv = await waitForCsvPhase(
      client,
      'scoped3',
      'etcdoperator.v0.9.4',
      'Succeeded',
      undefined,
      30_000,
    );
    const history = (csv['status'] as { conditions: { reason?: string }[] }).conditions;
    t.ok(
      history.some((c) => c.reason === 'DetectedClusterChange'),
      'retried through DetectedClusterChange',
    );
  },
);
