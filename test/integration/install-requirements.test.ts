// A CSV's status.requirementStatus on the devcluster, as upstream OLM v0.26.0 writes it
// (pkg/controller/operators/olm/requirements.go): a minKubeVersion row against the API server's
// /version, and per ServiceAccount (no uuid) one PolicyRule dependent per rule, checked against
// the RBAC that exists — a CSV whose rules nothing grants waits in RequirementsNotMet.
import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import type { RequirementStatus } from '../../shared/api/clusterserviceversion.js';
import { rbacForCsv } from '../../shared/install-plan/index.js';
import {
  getCsv,
  installFunctionFor,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import { createInstallPlan, installPlanFor, smallBundle } from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

const rowsOf = (csv: KubeObject | undefined): RequirementStatus[] =>
  (csv?.['status'] as { requirementStatus?: RequirementStatus[] } | undefined)?.requirementStatus ??
  [];

t.test(
  'requirements - minKubeVersion and PolicyRule dependents of a cluster-scoped operator',
  async (t) => {
    const { client } = await installFunctionFor(t);
    const csvName = 'node-maintenance-operator.v0.17.0';
    await namespaceWithOperatorGroup(client, 'reqs', {}); // AllNamespaces
    const bundle = await smallBundle('node-maintenance-operator', csvName);
    const spec = bundle.csv['spec'] as { minKubeVersion?: string };
    spec.minKubeVersion = '1.23.0';
    await createInstallPlan(client, { name: 'install', namespace: 'reqs', bundles: [bundle] });
    const csv = await waitForCsvPhase(client, 'reqs', csvName, 'Succeeded', undefined, 30_000);
    const version = (await client.request('GET', '/version', 'get')) as { gitVersion: string };
    const rows = rowsOf(csv);
    t.same(rows[0], {
      group: 'operators.coreos.com',
      version: 'v1alpha1',
      kind: 'ClusterServiceVersion',
      name: csvName,
      status: 'Present',
      message: `CSV minKubeVersion (1.23.0) less than server version (${version.gitVersion})`,
    });
    const account = rows.find((r) => r.kind === 'ServiceAccount');
    t.equal(account?.uuid, undefined, 'no uuid on a ServiceAccount row');
    t.equal(account?.status, 'Present');
    t.ok((account?.dependents?.length ?? 0) > 0, 'one dependent per rule');
    for (const d of account?.dependents ?? []) {
      t.match(d, {
        group: 'rbac.authorization.k8s.io',
        version: 'v1',
        kind: 'PolicyRule',
        status: 'Satisfied',
        message: /^(namespaced|cluster) rule:\{"verbs":/,
      });
    }
    t.ok(
      account?.dependents?.some((d) => d.message?.startsWith('cluster rule:')),
      'cluster permissions checked cluster-wide',
    );
  },
);

t.test(
  'requirements - rules no RBAC grants keep the CSV in RequirementsNotMet until granted',
  async (t) => {
    const { client } = await installFunctionFor(t);
    const csvName = 'etcdoperator.v0.9.4';
    await namespaceWithOperatorGroup(client, 'unbound');
    const bundle = await smallBundle('etcd', csvName);
    const { plan, status } = installPlanFor({
      name: 'install',
      namespace: 'unbound',
      bundles: [bundle],
    });
    // The plan without its RoleBindings: the service account's rules are granted by nothing.
    status.plan = (status.plan ?? []).filter((s) => s.resource.kind !== 'RoleBinding');
    await client.updateStatus({ ...(await client.create(plan)), status });
    const pending = await waitFor(
      'the CSV to report unsatisfied rules',
      async () => {
        const csv = await getCsv(client, 'unbound', csvName);
        const account = rowsOf(csv).find((r) => r.kind === 'ServiceAccount');
        return csv?.status?.reason === 'RequirementsNotMet' &&
          account?.status === 'PresentNotSatisfied'
          ? { csv, account }
          : undefined;
      },
      20_000,
    );
    t.equal(pending.account.message, 'Policy rule not satisfied for service account');
    t.ok(pending.account.dependents?.every((d) => d.status === 'NotSatisfied'));
    t.ok(pending.account.dependents?.[0]?.message?.startsWith('namespaced rule:{"verbs":'));
    const installed = await getCsv(client, 'unbound', csvName);
    for (const o of rbacForCsv(installed as KubeObject, 'unbound')) {
      // The planned manifest names its CSV owner without a uid (filled in when a plan writes it).
      if (o.kind === 'RoleBinding') {
        const { ownerReferences: _owners, ...metadata } = o.metadata;
        await client.create({ ...o, metadata });
      }
    }
    const csv = await waitForCsvPhase(client, 'unbound', csvName, 'Succeeded', undefined, 20_000);
    const account = rowsOf(csv).find((r) => r.kind === 'ServiceAccount');
    t.ok(
      account?.dependents?.every((d) => d.status === 'Satisfied'),
      'granted once bound',
    );
  },
);
