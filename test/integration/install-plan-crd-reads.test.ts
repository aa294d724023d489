// A plan pass lists a CRD's custom resources only when its step changes the definition: those
// CRs must stay valid under the new schema. A CRD another namespace's install already wrote the
// same way is only marked ours, and listing its CRs (on every install of a popular operator)
// would cost a LIST per version for nothing.
import { Registry } from 'prom-client';
import t from 'tap';
import { loadPlan } from '../../functions/install/install-plan/load.js';
import { KubeClient } from '../../shared/kube/client.js';
import { OwnWrites } from '../../shared/kube/own-writes.js';
import { createApiRequestCounter } from '../../shared/runtime/metrics.js';
import { backboneFor, clusterFor } from '../harness/backbone.js';
import { createInstallPlan, restrictSize, smallBundle } from '../harness/install-plan.js';

t.test(
  'install plan - custom resources are listed only for a CRD whose definition changes',
  async (t) => {
    const { fixture, client } = await clusterFor(t);
    const backbone = await backboneFor(t);
    const registry = new Registry();
    const requests = createApiRequestCounter(registry);
    const counted = await KubeClient.fromKubeConfig('c1', fixture.kubeConfig, {
      userAgent: 'olmq-test',
      requests,
    });
    t.teardown(() => counted.close());
    const lists = async (): Promise<number> =>
      ((await requests.get()).values ?? [])
        .filter((v) => v.labels.verb === 'list')
        .reduce((sum, v) => sum + v.value, 0);

    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    const crds = bundle.others.filter((o) => o.kind === 'CustomResourceDefinition');
    t.equal(crds.length, 3, 'etcd owns three CRDs');
    // Another namespace installed the same operator: the CRDs exist as this plan writes them.
    for (const crd of crds) await client.create(structuredClone(crd));
    await createInstallPlan(client, { name: 'install-same', namespace: 'ns1', bundles: [bundle] });

    const load = () =>
      loadPlan(
        counted,
        { source: backbone, cluster: 'c1', ownWrites: new OwnWrites() },
        'ns1',
        'install-same',
        () => new Date(),
      );
    const same = await load();
    t.equal(same.existing.size, 3, 'the pass read the three existing CRDs');
    t.same([...(same.customResources?.keys() ?? [])], [], 'no CRs read for unchanged CRDs');
    t.equal(await lists(), 0, 'and no LIST request made');

    // One definition differs from the plan's (a looser schema than the bundle's): its CRs count.
    const name = 'etcdclusters.etcd.database.coreos.com';
    const stored = await client.get({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name,
    });
    if (stored === undefined) throw new Error(`${name} is missing`);
    await client.update(restrictSize(stored));
    const changed = await load();
    const steps = (same.plan?.status?.plan ?? []).map((s) => s.resource.name);
    const index = steps.indexOf(name);
    t.same(
      [...(changed.customResources?.keys() ?? [])],
      [index],
      'the changed CRD has its CRs read',
    );
    t.equal(await lists(), changed.customResources?.get(index)?.length, 'one LIST per version');
  },
);
