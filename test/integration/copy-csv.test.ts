import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  bundleCsv,
  createNamespace,
  createOperatorGroup,
  createPermissionRbac,
  installCsv,
  startMultitenancy,
  waitForObject,
} from '../harness/multitenancy.js';
import { waitFor } from '../harness/wait.js';
import { getMirrored } from '../../shared/bus/mirror-read.js';

type Csv = KubeObject & {
  status?: { phase?: string; reason?: string; message?: string; lastUpdateTime?: string };
  spec?: Record<string, unknown>;
};
const csvRef = (namespace: string, name: string) => ({
  kind: 'ClusterServiceVersion',
  apiVersion: 'operators.coreos.com/v1alpha1',
  namespace,
  name,
});
const ogRef = (namespace: string, name: string) => ({
  kind: 'OperatorGroup',
  apiVersion: 'operators.coreos.com/v1',
  namespace,
  name,
});
const hasStatus = (g: KubeObject | undefined) =>
  Array.isArray((g?.['status'] as { namespaces?: unknown } | undefined)?.namespaces);

t.test(
  'copy-csv - an AllNamespaces operator is copied into every namespace, new ones too; copies follow the parent and go with it',
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    await createNamespace(client, 'app-1');
    await createOperatorGroup(client, 'operators', 'global');
    await waitForObject(client, 'group status', ogRef('operators', 'global'), hasStatus);
    const source = await installCsv(
      client,
      await bundleCsv('etcd', 'etcdoperator.v0.9.4-clusterwide'),
      'operators',
    );
    const name = source.metadata.name ?? '';

    const copy = (await waitForObject<Csv>(
      client,
      'copy in app-1',
      csvRef('app-1', name),
      (c) => c?.status?.reason === 'Copied',
    )) as Csv;
    t.equal(copy.status?.phase, 'Succeeded', 'phase mirrored');
    t.equal(
      copy.status?.message,
      'The operator is running in operators but is managing this namespace',
    );
    t.equal(copy.metadata.labels?.['olm.copiedFrom'], 'operators');
    t.equal(
      copy.metadata.annotations?.['olm.targetNamespaces'],
      undefined,
      'olm.targetNamespaces stripped',
    );
    t.equal(copy.metadata.annotations?.['olm.operatorNamespace'], 'operators');
    t.ok(
      (copy.spec as { icon?: unknown[] } | undefined)?.icon,
      'the full spec is copied (icon too)',
    );
    const full = await client.get<Csv>(csvRef('operators', name));
    t.same(copy.spec, full?.spec, 'spec identical to the parent');

    // System namespaces present from the start got copies too; a new namespace gets one.
    await waitForObject<Csv>(
      client,
      'copy in default',
      csvRef('default', name),
      (c) => c?.status?.reason === 'Copied',
    );
    await createNamespace(client, 'app-2');
    await waitForObject<Csv>(
      client,
      'copy in new app-2',
      csvRef('app-2', name),
      (c) => c?.status?.reason === 'Copied',
    );

    // A copy deleted by hand comes back; one edited by hand is restored.
    await client.delete(csvRef('app-1', name));
    await waitForObject<Csv>(
      client,
      'copy recreated',
      csvRef('app-1', name),
      (c) =>
        c !== undefined && c.metadata.uid !== copy.metadata.uid && c.status?.reason === 'Copied',
    );
    const edited = await client.get<Csv>(csvRef('app-2', name));
    await client.updateStatus({
      ...edited,
      status: { ...edited?.status, phase: 'Failed', reason: 'Tampered' },
    } as KubeObject);
    await waitForObject<Csv>(
      client,
      'copy status restored',
      csvRef('app-2', name),
      (c) => c?.status?.reason === 'Copied' && c.status.phase === 'Succeeded',
    );

    // The parent's phase is mirrored.
    const parent = await client.get<Csv>(csvRef('operators', name));
    await client.updateStatus({
      ...parent,
      status: { ...parent?.status, phase: 'Failed', reason: 'ComponentUnhealthy', message: 'x' },
    } as KubeObject);
    await waitForObject<Csv>(
      client,
      'copy mirrors Failed',
      csvRef('app-1', name),
      (c) => c?.status?.phase === 'Failed' && c.status.reason === 'Copied',
    );

    // Parent gone: copies go.
    await client.delete(csvRef('operators', name));
    await waitForObject(
      client,
      'copy in app-1 deleted',
      csvRef('app-1', name),
      (c) => c === undefined,
    );
    await waitForObject(
      client,
      'copy in app-2 deleted',
      csvRef('app-2', name),
      (c) => c === undefined,
    );
  },
);

t.test(
  'copy-csv - a MultiNamespace operator is copied into its targets only, with its Roles owned by each copy; a dropped target loses both',
  async (t) => {
    const { client } = await startMultitenancy(t);
    for (const ns of ['operators', 'a', 'b', 'c']) await createNamespace(client, ns);
    await createOperatorGroup(client, 'operators', 'og', { targetNamespaces: ['a', 'b'] });
    await waitForObject(client, 'group status', ogRef('operators', 'og'), hasStatus);
    const source = await installCsv(
      client,
      await bundleCsv('prometheus', 'prometheusoperator.0.22.2'),
      'operators',
    );
    await createPermissionRbac(client, source);
    const name = source.metadata.name ?? '';
    const copyA = (await waitForObject<Csv>(
      client,
      'copy in a',
      csvRef('a', name),
      (c) => c?.status?.reason === 'Copied',
    )) as Csv;
    await waitForObject<Csv>(
      client,
      'copy in b',
      csvRef('b', name),
      (c) => c?.status?.reason === 'Copied',
    );
    type Role = KubeObject & { rules?: unknown[] };
    const roleName = `${name}-0`;
    const role = (await waitForObject<Role>(
      client,
      'tenant Role in a',
      { kind: 'Role', apiVersion: 'rbac.authorization.k8s.io/v1', namespace: 'a', name: roleName },
      (r) => r !== undefined,
    )) as Role;
    t.equal(role.metadata.ownerReferences?.[0]?.uid, copyA.metadata.uid, 'owned by the copy');
    t.equal(role.metadata.labels?.['olm.copiedFrom'], 'operators');
    t.equal(role.metadata.labels?.['olm.owner.namespace'], 'a');
    const source0 = await client.get<Role>({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      namespace: 'operators',
      name: roleName,
    });
    t.same(role.rules, source0?.rules, 'same rules');
    const bindingRef = {
      kind: 'RoleBinding',
      apiVersion: 'rbac.authorization.k8s.io/v1',
      namespace: 'b',
      name: roleName,
    };
    const binding = await waitForObject(
      client,
      'tenant RoleBinding in b',
      bindingRef,
      (r) => r !== undefined,
    );
    // Deleted (by hand, or by the garbage collector after the copy was replaced): made again.
    await client.delete(bindingRef);
    await waitForObject(
      client,
      'tenant RoleBinding in b made again',
      bindingRef,
      (r) => r !== undefined && r.metadata.uid !== binding?.metadata.uid,
    );
    t.equal(await client.get(csvRef('c', name)), undefined, 'no copy outside the targets');

    // b dropped from the targets: its copy goes, and the garbage collector takes its Role.
    const group = await client.get(ogRef('operators', 'og'));
    await client.update({ ...group, spec: { targetNamespaces: ['a'] } } as KubeObject);
    await waitForObject(client, 'copy in b deleted', csvRef('b', name), (c) => c === undefined);
    await waitForObject(
      client,
      'Role in b collected',
      { kind: 'Role', apiVersion: 'rbac.authorization.k8s.io/v1', namespace: 'b', name: roleName },
      (r) => r === undefined,
    );
    t.ok(await client.get(csvRef('a', name)), 'the copy in a stays');
  },
);

t.test(
  'copy-csv - a copy the rbac function sees only as its latest, Copied version still gets its tenant Roles (a lagging trigger saw no creation and made none)',
  async (t) => {
    const { client, backbone, hosts } = await startMultitenancy(t);
    for (const ns of ['operators', 'a']) await createNamespace(client, ns);
    await createOperatorGroup(client, 'operators', 'og', { targetNamespaces: ['a'] });
    await waitForObject(client, 'group status', ogRef('operators', 'og'), hasStatus);
    // No copy yet: rbac annotates the operator's CSV and handles its Roles, then settles.
    await hosts.copyCsv.stop();
    const source = await installCsv(
      client,
      await bundleCsv('prometheus', 'prometheusoperator.0.22.2'),
      'operators',
    );
    await createPermissionRbac(client, source);
    const name = source.metadata.name ?? '';
    const mirrored = <T extends KubeObject>(kind: string, namespace: string, objectName: string) =>
      getMirrored<T>(backbone, { cluster: 'c1', kind, namespace, name: objectName });
    await waitFor('rbac settled on the annotated CSV and its Roles', async () => {
      const csv = await mirrored<Csv>('ClusterServiceVersion', 'operators', name);
      if (csv?.metadata.annotations?.['olm.targetNamespaces'] !== 'a') return false;
      for (const kind of ['Role', 'RoleBinding'])
        for (const suffix of ['-0', '-1'])
          if ((await mirrored(kind, 'operators', `${name}${suffix}`)) === undefined) return false;
      return hosts.rbac.idle();
    });
    // With rbac away, the copy is created, written Copied, then given the parent's new
    // lastUpdateTime: the mirror keeps only the last, which names just that as changed.
    await hosts.rbac.stop();
    await hosts.copyCsv.start();
    await waitForObject<Csv>(
      client,
      'copy in a',
      csvRef('a', name),
      (c) => c?.status?.reason === 'Copied',
    );
    const parent = await client.get<Csv>(csvRef('operators', name));
    const lastUpdateTime = '2001-01-01T00:00:00Z';
    await client.updateStatus({
      ...parent,
      status: { ...parent?.status, lastUpdateTime },
    } as KubeObject);
    const copy = await waitFor('the copy in a mirrored with the new time', async () => {
      const c = await mirrored<Csv>('ClusterServiceVersion', 'a', name);
      return c?.status?.reason === 'Copied' && c.status.lastUpdateTime === lastUpdateTime
        ? c
        : undefined;
    });
    await hosts.rbac.start();
    const role = await waitForObject(
      client,
      'tenant Role in a',
      {
        kind: 'Role',
        apiVersion: 'rbac.authorization.k8s.io/v1',
        namespace: 'a',
        name: `${name}-0`,
      },
      (r) => r !== undefined,
    );
    t.equal(role?.metadata.ownerReferences?.[0]?.uid, copy.metadata.uid, 'owned by the copy');
  },
);

t.test('copy-csv - OwnNamespace operators get no copies', async (t) => {
  const { client } = await startMultitenancy(t);
  await createNamespace(client, 'own');
  await createNamespace(client, 'other');
  await createOperatorGroup(client, 'own', 'og', { targetNamespaces: ['own'] });
  await waitForObject(client, 'group status', ogRef('own', 'og'), hasStatus);
  const source = await installCsv(client, await bundleCsv('etcd', 'etcdoperator.v0.9.4'), 'own');
  await waitForObject<Csv>(
    client,
    'annotated',
    csvRef('own', source.metadata.name ?? ''),
    (c) => c?.metadata.annotations?.['olm.targetNamespaces'] === 'own',
  );
  // A namespace item for "other" runs after the annotation: nothing is copied there.
  await createNamespace(client, 'later');
  await waitFor(
    'namespace mirrored and settled',
    async () =>
      (
        await client.list({
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'ClusterServiceVersion',
        })
      ).items.length === 1,
    3_000,
  ).catch(() => undefined);
  const all = (
    await client.list({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
    })
  ).items;
  t.same(
    all.map((c) => c.metadata.namespace),
    ['own'],
  );
});

t.test(
  'copy-csv - disableCopiedCSVs removes copies of AllNamespaces operators with an Event and condition; re-enabling restores them',
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    await createNamespace(client, 'app');
    await createOperatorGroup(client, 'operators', 'global');
    await waitForObject(client, 'group status', ogRef('operators', 'global'), hasStatus);
    const source = await installCsv(
      client,
      await bundleCsv('etcd', 'etcdoperator.v0.9.4-clusterwide'),
      'operators',
    );
    const name = source.metadata.name ?? '';
    await waitForObject<Csv>(
      client,
      'copy in app',
      csvRef('app', name),
      (c) => c?.status?.reason === 'Copied',
    );
    type Config = KubeObject & {
      status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
    };
    const cfgRef = { kind: 'OLMConfig', apiVersion: 'operators.coreos.com/v1', name: 'cluster' };
    const condition = (c: Config | undefined) =>
      c?.status?.conditions?.find((x) => x.type === 'DisabledCopiedCSVs');
    await client.create({
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OLMConfig',
      metadata: { name: 'cluster' },
      spec: {},
    });
    await waitForObject<Config>(
      client,
      'enabled condition',
      cfgRef,
      (c) => {
        const x = condition(c);
        return (
          x?.status === 'False' &&
          x.reason === 'CopiedCSVsEnabled' &&
          x.message === 'Copied CSVs are enabled and present across the cluster'
        );
      },
      30_000,
    );

    await client.patch(
      { apiVersion: 'operators.coreos.com/v1', kind: 'OLMConfig', name: 'cluster' },
      'merge',
      { spec: { features: { disableCopiedCSVs: true } } },
    );
    await waitForObject(client, 'copy in app removed', csvRef('app', name), (c) => c === undefined);
    await waitForObject<Config>(
      client,
      'disabled condition',
      cfgRef,
      (c) => {
        const x = condition(c);
        return (
          x?.status === 'True' &&
          x.reason === 'CopiedCSVsDisabled' &&
          x.message ===
            'Copied CSVs are disabled and no unexpected copied CSVs were found for operators installed in AllNamespace mode'
        );
      },
      30_000,
    );
    type Event = KubeObject & { reason?: string; message?: string; type?: string };
    const events = await waitFor('the DisabledCopiedCSVs Event', async () => {
      const list = (
        await client.list<Event>({ apiVersion: 'v1', kind: 'Event', namespace: 'operators' })
      ).items.filter((e) => e.reason === 'DisabledCopiedCSVs');
      return list.length > 0 ? list : undefined;
    });
    t.equal(events[0]?.type, 'Warning');
    t.equal(events[0]?.message, `CSV copying disabled for operators/${name}`);

    await client.patch(
      { apiVersion: 'operators.coreos.com/v1', kind: 'OLMConfig', name: 'cluster' },
      'merge',
      { spec: { features: { disableCopiedCSVs: false } } },
    );
    await waitForObject<Csv>(
      client,
      'copy back in app',
      csvRef('app', name),
      (c) => c?.status?.reason === 'Copied',
    );
    await waitForObject<Config>(
      client,
      'enabled again',
      cfgRef,
      (c) =>
        condition(c)?.reason === 'CopiedCSVsEnabled' &&
        condition(c)?.message === 'Copied CSVs are enabled and present across the cluster',
      30_000,
    );
    await waitFor('the Event removed', async () =>
      (
        await client.list<Event>({ apiVersion: 'v1', kind: 'Event', namespace: 'operators' })
      ).items.every((e) => e.reason !== 'DisabledCopiedCSVs'),
    );
  },
);
