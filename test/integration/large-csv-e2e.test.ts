// End to end with a real CSV larger than NATS's default max payload: stackgres-community
// v1.18.8 (1,060,684 bytes as its bundle stores it) is served by a registry, and a Subscription
// installs it on the devcluster through every function, on a nats-server with its default
// 1 MiB max payload. Its CSV and InstallPlan reach the functions through the mirror by reference.
import { join } from 'node:path';
import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import { kubectlMissing } from '../harness/devcluster.js';
import { namespaceWithOperatorGroup, waitForCsvPhase } from '../harness/install.js';
import { largeCsvBundle } from '../harness/large-csv.js';
import { pipelineFor } from '../harness/pipeline.js';
import { operatorhubPackages } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

t.test(
  'e2e - a Subscription installs a bundle whose CSV is over 1 MiB: CSV Succeeded',
  async (t) => {
    const { client } = await pipelineFor(t, {
      catalogDir: join(operatorhubPackages, largeCsvBundle.package),
    });
    await namespaceWithOperatorGroup(client, 'stackgres');
    await client.create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: largeCsvBundle.package, namespace: 'stackgres' },
      spec: {
        name: largeCsvBundle.package,
        channel: largeCsvBundle.channel,
        source: 'community',
        sourceNamespace: 'olm',
      },
    });
    const csv = await waitForCsvPhase(
      client,
      'stackgres',
      largeCsvBundle.name,
      'Succeeded',
      undefined,
      120_000,
    );
    t.ok(JSON.stringify(csv).length > 1024 * 1024, 'the installed CSV is over 1 MiB');
    const sub = await waitFor(
      'the Subscription to report the installed CSV',
      async () => {
        const s = await client.get<KubeObject & { status?: { installedCSV?: string } }>({
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'Subscription',
          namespace: 'stackgres',
          name: largeCsvBundle.package,
        });
        return s?.status?.installedCSV === largeCsvBundle.name ? s : undefined;
      },
      30_000,
    );
    t.equal(sub.status?.installedCSV, largeCsvBundle.name);
  },
);
