import t from 'tap';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import {
  installFunctionFor,
  installPlanStatus,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import { createInstallPlan, restrictSize, smallBundle } from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

t.test(
  'install - an Automatic plan installs etcd: plan Complete, CSV Succeeded, Deployment Available',
  async (t) => {
    const { client, lines } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'ns1');
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, { name: 'install-abc', namespace: 'ns1', bundles: [bundle] });

    await waitFor(
      'the plan to be Complete',
      async () => (await installPlanStatus(client, 'ns1', 'install-abc'))?.phase === 'Complete',
      20_000,
    ).catch(async (e: unknown) => {
      const st = await installPlanStatus(client, 'ns1', 'install-abc');
      t.comment(JSON.stringify({ ...st, plan: st?.plan?.map((p) => [p.resource.kind, p.status]) }));
      t.comment(
        JSON.stringify(
          lines
            .filter((l) => (l['level'] as number) >= 30 && !String(l['msg']).startsWith('mirror'))
            .slice(0, 40),
        ),
      );
      throw e;
    });
    const status = await installPlanStatus(client, 'ns1', 'install-abc');
    t.ok(
      status?.plan?.every((s) => s.status === 'Created' || s.status === 'Present'),
      'every step Created or Present',
    );
    t.match(status?.conditions, [{ type: 'Installed', status: 'True' }]);

    const csv = await waitForCsvPhase(
      client,
      'ns1',
      'etcdoperator.v0.9.4',
      'Succeeded',
      'InstallSucceeded',
    );
    t.equal(csv.metadata.annotations?.['olm.targetNamespaces'], 'ns1');
    const og = await client.get({
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      namespace: 'ns1',
      name: 'og',
    });
    t.match(og?.['status'], { namespaces: ['ns1'] }, 'OperatorGroup status.namespaces computed');
    const deployment = await client.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'ns1',
      name: 'etcd-operator',
    });
    t.match(deployment?.metadata.labels, {
      'olm.owner': 'etcdoperator.v0.9.4',
      'olm.owner.kind': 'ClusterServiceVersion',
      'olm.managed': 'true',
    });
    t.ok(deployment?.metadata.labels?.['olm.deployment-spec-hash'], 'spec hash label');
    const pod = (
      deployment?.['spec'] as { template: { metadata: { annotations: Record<string, string> } } }
    ).template.metadata.annotations;
    t.match(pod, {
      'olm.targetNamespaces': 'ns1',
      'olm.operatorGroup': 'og',
      'olm.operatorNamespace': 'ns1',
    });
    const conditions = (
      deployment?.['status'] as { conditions: { type: string; status: string }[] }
    ).conditions;
    t.match(conditions, [{ type: 'Available', status: 'True' }]);
    const crd = await client.get({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: 'etcdclusters.etcd.database.coreos.com',
    });
    t.equal(crd?.metadata.labels?.['olm.managed'], 'true');
    const sa = await client.get({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      namespace: 'ns1',
      name: 'etcd-operator',
    });
    // Written in the pass that created the CSV, pointing at the uid its create answered.
    for (const kind of ['ServiceAccount', 'Role', 'RoleBinding']) {
      const step = status?.plan?.find((s) => s.resource.kind === kind);
      const owned = await client.get({
        apiVersion: kind === 'ServiceAccount' ? 'v1' : 'rbac.authorization.k8s.io/v1',
        kind,
        namespace: 'ns1',
        name: step?.resource.name ?? '',
      });
      t.same(
        owned?.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid]),
        [['ClusterServiceVersion', 'etcdoperator.v0.9.4', csv.metadata.uid]],
        `the ${kind} is owned by the CSV's uid`,
      );
    }
    t.equal(sa?.metadata.name, 'etcd-operator');
  },
);

t.test(
  'install - a Manual plan waits in RequiresApproval until kubectl patch approves it',
  { skip: kubectlMissing() ?? false },
  async (t) => {
    const { client, fixture } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'ns2');
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, {
      name: 'install-manual',
      namespace: 'ns2',
      bundles: [bundle],
      approval: 'Manual',
    });
    // A pass over the plan happens (the CSV function sees the namespace) but nothing installs.
    await waitFor(
      'the plan to be seen',
      async () => (await installPlanStatus(client, 'ns2', 'install-manual'))?.phase,
    );
    const csvBefore = await client.get({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'ns2',
      name: 'etcdoperator.v0.9.4',
    });
    t.equal(csvBefore, undefined, 'no CSV before approval');
    t.equal((await installPlanStatus(client, 'ns2', 'install-manual'))?.phase, 'RequiresApproval');

    const patched = await kubectl(fixture, [
      'patch',
      'ip',
      'install-manual',
      '-n',
      'ns2',
      '--type',
      'merge',
      '-p',
      '{"spec":{"approved":true}}',
    ]);
    t.equal(patched.code, 0, patched.stderr);
    await waitFor(
      'the approved plan to be Complete',
      async () => (await installPlanStatus(client, 'ns2', 'install-manual'))?.phase === 'Complete',
      20_000,
    );
    await waitForCsvPhase(client, 'ns2', 'etcdoperator.v0.9.4', 'Succeeded');
  },
);

t.test(
  'install - a CRD update that existing CRs would not pass is refused, naming the CR and version',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'crdup');
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, { name: 'install-1', namespace: 'crdup', bundles: [bundle] });
    await waitFor(
      'the first plan to be Complete',
      async () => (await installPlanStatus(client, 'crdup', 'install-1'))?.phase === 'Complete',
      20_000,
    );
    await client.create({
      apiVersion: 'etcd.database.coreos.com/v1beta2',
      kind: 'EtcdCluster',
      metadata: { name: 'example', namespace: 'crdup' },
      spec: { size: 'three' },
    });
    const stricter = {
      ...bundle,
      others: bundle.others.map((o) =>
        o.metadata.name === 'etcdclusters.etcd.database.coreos.com' ? restrictSize(o) : o,
      ),
    };
    await createInstallPlan(client, {
      name: 'install-2',
      namespace: 'crdup',
      bundles: [stricter],
      generation: 2,
    });
    const status = await waitFor(
      'the second plan to report the invalid CR',
      async () => {
        const s = await installPlanStatus(client, 'crdup', 'install-2');
        return s?.message?.includes('error validating existing CRs') ? s : undefined;
      },
      20_000,
    );
    t.match(
      status.message,
      /^retrying execution due to error: error validating existing CRs against new CRD's schema for "etcdclusters.etcd.database.coreos.com": error validating etcd.database.coreos.com\/v1beta2, Kind=EtcdCluster "crdup\/example": updated validation is too restrictive/,
    );
  },
);

t.test(
  "install - a plan writes a run of steps of one kind at once (the bundle's three CRDs)",
  async (t) => {
    const { client, fixture } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'ns4');
    // Each CRD write is answered 8 s late: written one after another, the third would be sent
    // 16 s after the first.
    const slow = fixture.cluster.faults.inject({
      verbs: ['create', 'update', 'patch'],
      resources: ['customresourcedefinitions'],
      action: { kind: 'delay', ms: 8_000 },
      count: 3,
    });
    t.teardown(() => slow.end());
    await createInstallPlan(client, {
      name: 'install-crds',
      namespace: 'ns4',
      bundles: [await smallBundle('etcd', 'etcdoperator.v0.9.4')],
    });
    await waitFor('the three CRD writes to be in flight together', () => slow.hits === 3, 6_000);
    t.equal(slow.hits, 3);
    await waitForCsvPhase(client, 'ns4', 'etcdoperator.v0.9.4', 'Succeeded', undefined, 30_000);
  },
);
