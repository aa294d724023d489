// The Operator API on the devcluster, through every olmq function: a Subscription's package and
// namespace become an Operator `<package>.<namespace>` listing its components with their
// conditions; the components carry the label `operators.coreos.com/<package>.<namespace>`;
// an Operator deleted while components remain comes back; one whose Subscription failed to
// resolve still lists it.
import t from 'tap';
import type { Operator, RichReference } from '../../shared/api/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import { namespaceWithOperatorGroup } from '../harness/install.js';
import { pipelineFor } from '../harness/pipeline.js';
import { etcdHead, etcdSucceeded } from '../harness/subscription.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

const operatorRef = (name: string) => ({
  apiVersion: 'operators.coreos.com/v1',
  kind: 'Operator',
  name,
});

async function subscribe(
  client: KubeClient,
  namespace: string,
  pkg: string,
  channel?: string,
  installPlanApproval?: 'Manual',
) {
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: pkg, namespace },
    spec: {
      source: 'community',
      sourceNamespace: 'olm',
      name: pkg,
      ...(channel === undefined ? {} : { channel }),
      ...(installPlanApproval === undefined ? {} : { installPlanApproval }),
    },
  });
}

const refKey = (r: RichReference): string => `${r.kind} ${r.namespace ?? ''}/${r.name ?? ''}`;

async function refs(client: KubeClient, name: string): Promise<RichReference[] | undefined> {
  const op = await client.get<KubeObject & Operator>(operatorRef(name));
  return op?.status?.components?.refs;
}

t.test(
  'operator api - an installed operator lists its components, labelled, with their conditions',
  async (t) => {
    const { client, fixture } = await pipelineFor(t);
    await namespaceWithOperatorGroup(client, 'team-a');
    await subscribe(client, 'team-a', 'etcd', 'singlenamespace-alpha');
    const label = 'operators.coreos.com/etcd.team-a';
    const wanted = [
      'ClusterServiceVersion team-a/etcdoperator.v0.9.4',
      'CustomResourceDefinition /etcdclusters.etcd.database.coreos.com',
      'Deployment team-a/etcd-operator',
      'OperatorCondition team-a/etcdoperator.v0.9.4',
      'ServiceAccount team-a/etcd-operator',
      'Subscription team-a/etcd',
    ];
    const found = await waitFor(
      'Operator etcd.team-a to list the CSV Succeeded and its components',
      async () => {
        const r = await refs(client, 'etcd.team-a');
        const keys = new Set((r ?? []).map(refKey));
        const csv = r?.find((x) => x.kind === 'ClusterServiceVersion');
        return wanted.every((w) => keys.has(w)) &&
          csv?.conditions?.[0]?.type === 'Succeeded' &&
          r?.some((x) => x.kind === 'Role') &&
          r.some((x) => x.kind === 'RoleBinding') &&
          r.some((x) => x.kind === 'InstallPlan')
          ? r
          : undefined;
      },
      60_000,
    );
    const op = await client.get<KubeObject & Operator>(operatorRef('etcd.team-a'));
    t.same(op?.status?.components?.labelSelector, {
      matchExpressions: [{ key: label, operator: 'Exists' }],
    });
    const csv = found.find((x) => x.kind === 'ClusterServiceVersion');
    t.match(csv, {
      apiVersion: 'operators.coreos.com/v1alpha1',
      conditions: [{ type: 'Succeeded', status: 'True', reason: 'InstallSucceeded' }],
    });
    t.match(found.find((x) => x.kind === 'Deployment')?.conditions, [{ type: 'Available' }]);
    t.equal(
      found.find((x) => x.kind === 'OperatorCondition')?.apiVersion,
      'operators.coreos.com/v2',
    );
    const kinds = found.map((x) => x.kind);
    t.same(kinds, [...kinds].sort(), 'refs in kind order');
    // The label is on the objects themselves.
    for (const [apiVersion, kind, namespace, name] of [
      ['operators.coreos.com/v1alpha1', 'Subscription', 'team-a', 'etcd'],
      ['operators.coreos.com/v1alpha1', 'ClusterServiceVersion', 'team-a', 'etcdoperator.v0.9.4'],
      ['apps/v1', 'Deployment', 'team-a', 'etcd-operator'],
      ['v1', 'ServiceAccount', 'team-a', 'etcd-operator'],
      [
        'apiextensions.k8s.io/v1',
        'CustomResourceDefinition',
        undefined,
        'etcdbackups.etcd.database.coreos.com',
      ],
    ] as const) {
      const o = await client.get({ apiVersion, kind, namespace, name });
      t.equal(o?.metadata.labels?.[label], '', `${kind} ${name} labelled`);
    }
    const csvObject = await client.get({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'team-a',
      name: 'etcdoperator.v0.9.4',
    });
    t.equal(csvObject?.metadata.labels?.['olm.managed'], 'true', 'the CSV is olm.managed');
    // kubectl lists it.
    const listed = await kubectl(fixture, ['get', 'operators', '-o', 'name']);
    t.match(listed.stdout, /operator\.operators\.coreos\.com\/etcd\.team-a/);

    // Uninstalled (Subscription and CSV deleted), the CRDs remain its components; deleted, the
    // Operator comes back because they do.
    await kubectl(fixture, ['delete', 'subscription', 'etcd', '-n', 'team-a']);
    await kubectl(fixture, ['delete', 'csv', 'etcdoperator.v0.9.4', '-n', 'team-a']);
    await waitFor(
      'the Operator to drop the uninstalled components',
      async () => {
        const r = await refs(client, 'etcd.team-a');
        return (
          r !== undefined &&
          !r.some((x) => x.kind === 'Subscription' || x.kind === 'ClusterServiceVersion') &&
          r.some((x) => x.kind === 'CustomResourceDefinition')
        );
      },
      30_000,
    );
    const before = await client.get(operatorRef('etcd.team-a'));
    await client.delete(operatorRef('etcd.team-a'));
    await waitFor(
      'the Operator to be recreated while its CRDs remain',
      async () => {
        const again = await client.get<KubeObject & Operator>(operatorRef('etcd.team-a'));
        return (
          again !== undefined &&
          again.metadata.uid !== before?.metadata.uid &&
          (again.status?.components?.refs ?? []).some((x) => x.kind === 'CustomResourceDefinition')
        );
      },
      30_000,
    );
  },
);

t.test(
  'operator api - a Subscription that fails to resolve is still its Operator component',
  async (t) => {
    const { client } = await pipelineFor(t);
    await namespaceWithOperatorGroup(client, 'team-c');
    await subscribe(client, 'team-c', 'no-such-package');
    const r = await waitFor(
      'Operator no-such-package.team-c to list the failed Subscription',
      async () => {
        const found = await refs(client, 'no-such-package.team-c');
        const sub = found?.find((x) => x.kind === 'Subscription');
        return sub?.conditions?.some((c) => c.type === 'ResolutionFailed') === true
          ? found
          : undefined;
      },
      30_000,
    );
    t.same(
      r.map(refKey),
      ['Subscription team-c/no-such-package'],
      'the Subscription is its only component',
    );
    await client.delete({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      namespace: 'team-c',
      name: 'no-such-package',
    });
    await waitFor(
      'the Operator to list no component once the Subscription is gone',
      async () => {
        const op = await client.get<KubeObject & Operator>(operatorRef('no-such-package.team-c'));
        return op !== undefined && op.status?.components?.refs === undefined;
      },
      30_000,
    );
  },
);

t.test(
  'operator api - a CRD shared by two installs lists under both; kubectl label adds and removes a component',
  async (t) => {
    const { client, fixture } = await pipelineFor(t);
    for (const ns of ['team-d', 'team-e']) {
      await namespaceWithOperatorGroup(client, ns);
      await subscribe(client, ns, 'etcd', 'singlenamespace-alpha');
    }
    const crd = 'CustomResourceDefinition /etcdclusters.etcd.database.coreos.com';
    for (const ns of ['team-d', 'team-e'])
      await waitFor(
        `Operator etcd.${ns} to list the shared CRD and its CSV Succeeded`,
        async () => {
          const r = await refs(client, `etcd.${ns}`);
          const csv = r?.find((x) => x.kind === 'ClusterServiceVersion');
          return r?.map(refKey).includes(crd) === true && csv?.conditions?.[0]?.type === 'Succeeded'
            ? true
            : undefined;
        },
        60_000,
      );
    const shared = await client.get({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: 'etcdclusters.etcd.database.coreos.com',
    });
    t.equal(
      shared?.metadata.labels?.['operators.coreos.com/etcd.team-d'],
      '',
      'labelled for team-d',
    );
    t.equal(
      shared?.metadata.labels?.['operators.coreos.com/etcd.team-e'],
      '',
      'labelled for team-e',
    );

    // A user makes an OLM-managed ConfigMap a component with kubectl label, then takes it back;
    // one that is not OLM-managed is not a component (upstream's cache does not see it).
    const label = 'operators.coreos.com/etcd.team-d=';
    await kubectl(fixture, ['create', 'configmap', 'extra', '-n', 'team-d']);
    await kubectl(fixture, ['create', 'configmap', 'unmanaged', '-n', 'team-d']);
    await kubectl(fixture, [
      'label',
      'configmap',
      'extra',
      '-n',
      'team-d',
      'olm.managed=true',
      label,
    ]);
    await kubectl(fixture, ['label', 'configmap', 'unmanaged', '-n', 'team-d', label]);
    const withExtra = await waitFor(
      'the labelled ConfigMap to be listed',
      async () => {
        const r = (await refs(client, 'etcd.team-d'))?.map(refKey);
        return r?.includes('ConfigMap team-d/extra') === true ? r : undefined;
      },
      30_000,
    );
    t.notOk(withExtra.includes('ConfigMap team-d/unmanaged'), 'not OLM-managed: not listed');
    await kubectl(fixture, [
      'label',
      'configmap',
      'extra',
      '-n',
      'team-d',
      'operators.coreos.com/etcd.team-d-',
    ]);
    const without = await waitFor(
      'the unlabelled ConfigMap to be dropped',
      async () => {
        const r = (await refs(client, 'etcd.team-d'))?.map(refKey);
        return r !== undefined && !r.includes('ConfigMap team-d/extra') ? r : undefined;
      },
      30_000,
    );
    t.ok(without.includes(crd), 'the shared CRD stays listed');
    t.notOk(
      (await refs(client, 'etcd.team-e'))?.map(refKey).includes('ConfigMap team-d/extra'),
      'never listed under the other install',
    );
  },
);

t.test(
  "operator api - an install's objects are created with their component label: adoption labels only the Subscription",
  async (t) => {
    const { client } = await pipelineFor(t);
    await namespaceWithOperatorGroup(client, 'team-c');
    await subscribe(client, 'team-c', 'etcd', 'singlenamespace-alpha', 'Manual');
    // Barrier: the operator function shows the Subscription linked to its plan, so the mirror
    // holds that link before the approval below wakes the install function.
    await waitFor(
      'the Operator to list the Subscription waiting for approval',
      async () =>
        (await refs(client, 'etcd.team-c'))?.some(
          (r) =>
            r.kind === 'Subscription' &&
            r.conditions?.some((c) => c.type === 'InstallPlanPending' && c.status === 'True'),
        ),
      60_000,
    );
    const sub = await client.get<KubeObject & { status?: { installPlanRef?: { name?: string } } }>({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      namespace: 'team-c',
      name: 'etcd',
    });
    const planName = sub?.status?.installPlanRef?.name ?? '';
    const planRef = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'InstallPlan',
      namespace: 'team-c',
      name: planName,
    };
    await client.patch(planRef, 'merge', { spec: { approved: true } });
    await etcdSucceeded(client, 'team-c');
    const label = 'operators.coreos.com/etcd.team-c';
    // The field managers that set the label (managedFields entries listing it).
    const adoptedBy = (o: KubeObject | undefined): string[] =>
      ((o?.metadata.managedFields ?? []) as { manager?: string; fieldsV1?: unknown }[])
        .filter((f) => JSON.stringify(f.fieldsV1 ?? {}).includes(`"f:${label}"`))
        .map((f) => f.manager ?? '');
    const objects = [
      planRef,
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        namespace: 'team-c',
        name: etcdHead,
      },
      { apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'team-c', name: 'etcd-operator' },
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'team-c', name: 'etcd-operator' },
      {
        apiVersion: 'operators.coreos.com/v2',
        kind: 'OperatorCondition',
        namespace: 'team-c',
        name: etcdHead,
      },
      ...['etcdclusters', 'etcdbackups', 'etcdrestores'].map((plural) => ({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: `${plural}.etcd.database.coreos.com`,
      })),
    ];
    for (const ref of objects) {
      const o = await client.get(ref);
      t.equal(o?.metadata.labels?.[label], '', `${ref.kind} ${ref.name} labelled`);
      const managers = adoptedBy(o);
      t.ok(managers.length > 0, `${ref.kind} ${ref.name}: its label's writer is recorded`);
      t.notOk(managers.includes('olmq-operator'), `${ref.kind} ${ref.name} labelled at creation`);
    }
    // The RBAC of the CSV's permissions, named by the install after the CSV.
    for (const kind of ['Role', 'RoleBinding']) {
      const list = await client.list({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind,
        namespace: 'team-c',
      });
      const owned = list.items.filter((o) => o.metadata.name?.startsWith(`${etcdHead}-`));
      t.ok(owned.length > 0, `the CSV's ${kind}s`);
      for (const o of owned) {
        t.equal(o.metadata.labels?.[label], '', `${kind} ${o.metadata.name ?? ''} labelled`);
        t.notOk(adoptedBy(o).includes('olmq-operator'), `${kind} labelled at creation`);
      }
    }
    // The user's Subscription has no other writer of the label: adoption patched it.
    t.same(
      adoptedBy(
        await client.get({
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'Subscription',
          namespace: 'team-c',
          name: 'etcd',
        }),
      ),
      ['olmq-operator'],
      'the Subscription is labelled by adoption',
    );
  },
);
