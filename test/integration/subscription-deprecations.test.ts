// #19 item 13 (first entry): a catalog's olm.deprecations reaches the Subscription of the installed
// operator as PackageDeprecated, ChannelDeprecated, BundleDeprecated and the Deprecated roll-up
// (the newest upstream's conditions; v0.26.0 has none).
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import { loadRegistryCatalog, startRegistryServer } from '../../shared/registry/index.js';
import { kubectlMissing } from '../harness/devcluster.js';
import { namespaceWithOperatorGroup } from '../harness/install.js';
import { pipelineFor } from '../harness/pipeline.js';
import { smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

type Subscription = KubeObject & {
  status?: {
    installedCSV?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
};

t.test(
  'subscription - olm.deprecations in the catalog become the Deprecated conditions of the installed operator',
  async (t) => {
    const { client } = await pipelineFor(t);
    const dir = await mkdtemp(join(tmpdir(), 'olmq-deprecations-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    await cp(join(smallCatalog, 'etcd'), join(dir, 'etcd'), { recursive: true });
    await writeFile(
      join(dir, 'etcd', 'deprecations.json'),
      JSON.stringify({
        schema: 'olm.deprecations',
        package: 'etcd',
        entries: [
          { reference: { schema: 'olm.package' }, message: 'etcd is no longer maintained' },
          {
            reference: { schema: 'olm.channel', name: 'singlenamespace-alpha' },
            message: 'channel singlenamespace-alpha is frozen',
          },
          {
            reference: { schema: 'olm.bundle', name: 'etcdoperator.v0.9.4' },
            message: 'etcdoperator.v0.9.4 has a known CVE',
          },
        ],
      }),
    );
    const served = await startRegistryServer({
      catalog: (await loadRegistryCatalog(dir)).catalog,
      host: '127.0.0.1',
      port: 0,
    });
    t.teardown(() => served.stop(0));
    await client.create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'deprecating', namespace: 'olm' },
      spec: { sourceType: 'grpc', address: served.address },
    });
    await namespaceWithOperatorGroup(client, 'dep');
    await client.create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: 'dep' },
      spec: {
        name: 'etcd',
        channel: 'singlenamespace-alpha',
        source: 'deprecating',
        sourceNamespace: 'olm',
      },
    });
    const sub = await waitFor(
      'the Deprecated condition on the installed Subscription',
      async () => {
        const s = await client.get<Subscription>({
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'Subscription',
          namespace: 'dep',
          name: 'etcd',
        });
        return s?.status?.conditions?.some((c) => c.type === 'Deprecated') === true ? s : undefined;
      },
      60_000,
    );
    t.equal(sub.status?.installedCSV, 'etcdoperator.v0.9.4');
    const condition = (type: string) => sub.status?.conditions?.find((c) => c.type === type);
    t.match(condition('PackageDeprecated'), {
      status: 'True',
      message: 'etcd is no longer maintained',
    });
    t.match(condition('ChannelDeprecated'), {
      status: 'True',
      message: 'channel singlenamespace-alpha is frozen',
    });
    t.match(condition('BundleDeprecated'), {
      status: 'True',
      message: 'etcdoperator.v0.9.4 has a known CVE',
    });
    t.match(condition('Deprecated'), {
      status: 'True',
      message:
        'etcd is no longer maintained; channel singlenamespace-alpha is frozen; etcdoperator.v0.9.4 has a known CVE',
    });
  },
);
