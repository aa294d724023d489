import t from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import {
  getCsv,
  installFunctionFor,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import { createInstallPlan, smallBundle } from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

const conditionRef = (namespace: string, name: string) => ({
  apiVersion: 'operators.coreos.com/v2',
  kind: 'OperatorCondition',
  namespace,
  name,
});
const rbac = 'rbac.authorization.k8s.io/v1';

interface Condition {
  type: string;
  status: string;
  message?: string;
  observedGeneration?: number;
}
type OperatorCondition = KubeObject & {
  spec?: { deployments?: string[]; serviceAccounts?: string[]; overrides?: Condition[] };
  status?: { conditions?: Condition[] };
};

const upgradeable = (status: 'True' | 'False', message: string) => ({
  type: 'Upgradeable',
  status,
  reason: status === 'True' ? 'AdminOverride' : 'MigrationInProgress',
  message,
  lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
});

/** Whether `user` may `verb` the OperatorCondition `name` (a SubjectAccessReview). */
async function mayOnCondition(
  client: KubeClient,
  namespace: string,
  account: string,
  verb: string,
  name: string,
): Promise<boolean> {
  const review = (await client.create({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec: {
      user: `system:serviceaccount:${namespace}:${account}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
      resourceAttributes: {
        namespace,
        verb,
        group: 'operators.coreos.com',
        resource: 'operatorconditions',
        name,
      },
    },
  })) as KubeObject & { status?: { allowed?: boolean } };
  return review.status?.allowed === true;
}

t.test(
  'operator condition - a CSV gets its OperatorCondition, Role and RoleBinding; spec.conditions reach status',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'oc');
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, { name: 'install-oc', namespace: 'oc', bundles: [bundle] });
    const csv = await waitForCsvPhase(client, 'oc', 'etcdoperator.v0.9.4', 'Succeeded');
    const name = 'etcdoperator.v0.9.4';

    const condition = await waitFor('the OperatorCondition', () =>
      client.get<OperatorCondition>(conditionRef('oc', name)),
    );
    t.same(condition.spec?.deployments, ['etcd-operator']);
    t.same(condition.spec?.serviceAccounts, ['etcd-operator']);
    t.match(condition.metadata.ownerReferences, [
      { kind: 'ClusterServiceVersion', name, uid: csv.metadata.uid, controller: true },
    ]);

    const role = await waitFor('the Role', () =>
      client.get({ apiVersion: rbac, kind: 'Role', namespace: 'oc', name }),
    );
    t.match(role.metadata.ownerReferences, [
      { kind: 'OperatorCondition', uid: condition.metadata.uid, controller: true },
    ]);
    await waitFor('the RoleBinding', () =>
      client.get({ apiVersion: rbac, kind: 'RoleBinding', namespace: 'oc', name }),
    );
    t.ok(
      await waitFor('the operator to be allowed to update its condition', () =>
        mayOnCondition(client, 'oc', 'etcd-operator', 'update', name),
      ),
    );
    t.notOk(
      await mayOnCondition(client, 'oc', 'etcd-operator', 'update', 'someone-else'),
      'only its own condition',
    );
    t.notOk(await mayOnCondition(client, 'oc', 'default', 'update', name), 'only its accounts');

    // The operator reports a condition the way operator-lib does: in spec.conditions.
    await client.patch(conditionRef('oc', name), 'merge', {
      spec: { conditions: [upgradeable('False', 'migrating data')] },
    });
    const mirrored = await waitFor('spec.conditions mirrored into status', async () => {
      const c = await client.get<OperatorCondition>(conditionRef('oc', name));
      const s = c?.status?.conditions?.find((x) => x.type === 'Upgradeable');
      return s?.observedGeneration === c?.metadata.generation ? s : undefined;
    });
    t.match(mirrored, { status: 'False', message: 'migrating data' });

    await client.delete({ apiVersion: rbac, kind: 'Role', namespace: 'oc', name });
    const again = await waitFor('the deleted Role to come back', async () => {
      const r = await client.get({ apiVersion: rbac, kind: 'Role', namespace: 'oc', name });
      return r !== undefined && r.metadata.uid !== role.metadata.uid ? r : undefined;
    });
    t.match(again['rules'], [{ resources: ['operatorconditions'], resourceNames: [name] }]);

    // Someone else's edit of the RoleBinding (its subjects dropped) is undone.
    const bindingRef = { apiVersion: rbac, kind: 'RoleBinding', namespace: 'oc', name };
    const binding = await client.get(bindingRef);
    await client.update({ ...binding!, subjects: [] });
    const rebound = await waitFor('the RoleBinding subjects to be put back', async () => {
      const b = await client.get(bindingRef);
      return ((b?.['subjects'] as unknown[] | undefined) ?? []).length > 0 ? b : undefined;
    });
    t.match(rebound['subjects'], [{ kind: 'ServiceAccount', name: 'etcd-operator' }]);

    // An edit that drops OPERATOR_CONDITION_NAME from the deployment is undone.
    const deploymentRef = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'oc',
      name: 'etcd-operator',
    };
    await client.patch(deploymentRef, 'json', [
      {
        op: 'replace',
        path: '/spec/template/spec/containers/0/env',
        value: [{ name: 'MY_POD_NAME', value: 'x' }],
      },
    ]);
    await waitFor('OPERATOR_CONDITION_NAME to be put back', async () => {
      const d = await client.get(deploymentRef);
      const env = (
        d?.['spec'] as {
          template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } };
        }
      ).template.spec.containers[0]?.env;
      return env?.some((e) => e.name === 'OPERATOR_CONDITION_NAME' && e.value === name);
    });

    // A deleted OperatorCondition is generated again, and its Role follows it.
    await client.delete(conditionRef('oc', name));
    const regenerated = await waitFor('the OperatorCondition to be generated again', async () => {
      const c = await client.get(conditionRef('oc', name));
      return c !== undefined && c.metadata.uid !== condition.metadata.uid ? c : undefined;
    });
    await waitFor('the Role to belong to the new condition', async () => {
      const r = await client.get({ apiVersion: rbac, kind: 'Role', namespace: 'oc', name });
      return r?.metadata.ownerReferences?.some((o) => o.uid === regenerated.metadata.uid);
    });
  },
);

t.test(
  'operator condition - an upgrade waits while the installed operator is not Upgradeable; an override releases it',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'gate');
    const v092 = await smallBundle('etcd', 'etcdoperator.v0.9.2');
    await createInstallPlan(client, { name: 'install-1', namespace: 'gate', bundles: [v092] });
    await waitForCsvPhase(client, 'gate', 'etcdoperator.v0.9.2', 'Succeeded');
    const old = conditionRef('gate', 'etcdoperator.v0.9.2');
    await waitFor('the OperatorCondition of v0.9.2', () => client.get(old));
    await client.patch(old, 'merge', {
      spec: { conditions: [upgradeable('False', 'migrating data')] },
    });
    await waitFor('Upgradeable=False to be observed', async () => {
      const c = await client.get<OperatorCondition>(old);
      const s = c?.status?.conditions?.find((x) => x.type === 'Upgradeable');
      return s?.status === 'False' && s.observedGeneration === c?.metadata.generation;
    });

    const v094 = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, {
      name: 'install-2',
      namespace: 'gate',
      bundles: [v094],
      generation: 2,
    });
    const blocked = await waitForCsvPhase(
      client,
      'gate',
      'etcdoperator.v0.9.4',
      'Pending',
      'OperatorConditionNotUpgradeable',
    );
    t.equal(
      (blocked['status'] as { message?: string }).message,
      'operator is not upgradeable: The operator is not upgradeable: migrating data',
    );
    const deployment = await client.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'gate',
      name: 'etcd-operator',
    });
    t.equal(
      deployment?.metadata.labels?.['olm.owner'],
      'etcdoperator.v0.9.2',
      'the installed operator keeps running',
    );

    await client.patch(old, 'merge', {
      spec: { overrides: [upgradeable('True', 'upgrade anyway')] },
    });
    await waitForCsvPhase(client, 'gate', 'etcdoperator.v0.9.4', 'Succeeded', undefined, 30_000);
    await waitFor(
      'the old CSV and its OperatorCondition to be gone',
      async () =>
        (await getCsv(client, 'gate', 'etcdoperator.v0.9.2')) === undefined &&
        (await client.get(old)) === undefined,
      20_000,
    );
    const history = (await getCsv(client, 'gate', 'etcdoperator.v0.9.4'))?.status?.conditions;
    t.ok(
      history?.some((c) => c.reason === 'OperatorConditionNotUpgradeable'),
      'the wait is in the phase history',
    );
  },
);

interface PodTemplate {
  template: { metadata: { annotations: Record<string, string> } };
}

t.test(
  'operator condition - serving certificates rotate when due: NeedsCertRotation, new Secret, CA bundle and pods',
  async (t) => {
    // Certificates valid a day and 10 s: due for rotation 10 s after they are issued.
    const { client } = await installFunctionFor(t, { certificateLifetimeMs: 86_400_000 + 10_000 });
    await namespaceWithOperatorGroup(client, 'rot', {}); // AllNamespaces
    const bundle = await smallBundle(
      'node-maintenance-operator',
      'node-maintenance-operator.v0.17.0',
    );
    const csvName = 'node-maintenance-operator.v0.17.0';
    const deploymentName = 'node-maintenance-operator-controller-manager';
    const secretRef = {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: 'rot',
      name: `${deploymentName}-service-cert`,
    };
    await createInstallPlan(client, { name: 'install-rot', namespace: 'rot', bundles: [bundle] });
    const installed = await waitForCsvPhase(client, 'rot', csvName, 'Succeeded', undefined, 30_000);
    const first = installed['status'] as { certsLastUpdated?: string; certsRotateAt?: string };
    t.match(first.certsRotateAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'certsRotateAt recorded');
    t.ok(first.certsLastUpdated, 'certsLastUpdated recorded');
    const firstSecret = await client.get(secretRef);
    const firstHash = firstSecret?.metadata.annotations?.['olmcahash'];
    t.ok(firstHash);
    const rotateAt = Date.parse(first.certsRotateAt ?? '');
    const lastUpdated = Date.parse(first.certsLastUpdated ?? '');
    t.ok(
      Math.abs(rotateAt - lastUpdated - 10_000) <= 1_000,
      'certsRotateAt = NotAfter - 24h, 10 s after issue',
    );

    // Rotated and back to Succeeded, with every CA copy in agreement.
    const rotated = await waitFor(
      'the certificates to rotate and the CSV to succeed again',
      async () => {
        const secret = await client.get(secretRef);
        const hash = secret?.metadata.annotations?.['olmcahash'];
        if (hash === undefined || hash === firstHash) return undefined;
        const deployment = await client.get({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace: 'rot',
          name: deploymentName,
        });
        const podHash = (deployment?.['spec'] as PodTemplate).template.metadata.annotations[
          'olmcahash'
        ];
        const configs = await client.list(
          { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration' },
          { labelSelector: `olm.owner=${csvName}` },
        );
        const caBundle = (
          configs.items[0]?.['webhooks'] as { clientConfig: { caBundle: string } }[] | undefined
        )?.[0]?.clientConfig.caBundle;
        const ca = (secret?.['data'] as Record<string, string> | undefined)?.['olmCAKey'];
        if (podHash !== hash || caBundle !== ca) return undefined;
        // Read last: the CSV must have succeeded after (not before) this rotation.
        const csv = await getCsv(client, 'rot', csvName);
        const status = csv?.['status'] as { phase?: string; certsRotateAt?: string } | undefined;
        if (
          csv === undefined ||
          status?.phase !== 'Succeeded' ||
          status.certsRotateAt === first.certsRotateAt
        )
          return undefined;
        return { csv, hash };
      },
      30_000,
      50,
    );
    t.ok(
      rotated.csv.status?.conditions?.some(
        (c) =>
          c.phase === 'Pending' &&
          c.reason === 'NeedsCertRotation' &&
          (c as { message?: string }).message === 'CSV owns resources that require a cert refresh',
      ),
      'the rotation is in the phase history',
    );
    const next = (rotated.csv['status'] as { certsRotateAt?: string }).certsRotateAt;
    t.ok(Date.parse(next ?? '') > rotateAt, 'certsRotateAt moved on');
  },
);
