// The install rooms read Deployments and OperatorConditions from the watcher's mirror, which
// trims the kubectl last-applied annotation: what they update must keep it (rebased on the API
// object), and objects the mirror does not hold must still be found.
import t from 'tap';
import {
  installFunctionFor,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import { createInstallPlan, smallBundle } from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';
const hashLabel = 'olm.deployment-spec-hash';

const deploymentRef = (namespace: string, name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  namespace,
  name,
});

t.test(
  'install - a drifted strategy deployment is put back without losing what the mirror trims',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'drift');
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, {
      name: 'install-drift',
      namespace: 'drift',
      bundles: [bundle],
    });
    await waitForCsvPhase(client, 'drift', 'etcdoperator.v0.9.4', 'Succeeded');
    const ref = deploymentRef('drift', 'etcd-operator');
    const installed = await client.get(ref);
    const hash = installed?.metadata.labels?.[hashLabel];
    t.type(hash, 'string', 'the deployment carries its spec hash');

    // A hand edit: a kubectl apply record, and the spec hash no longer the strategy's.
    await client.patch(ref, 'merge', {
      metadata: {
        annotations: { [lastApplied]: '{"kind":"Deployment"}' },
        labels: { [hashLabel]: 'edited' },
      },
    });
    const restored = await waitFor(
      'the CSV to put its deployment back',
      async () => {
        const d = await client.get(ref);
        return d?.metadata.labels?.[hashLabel] === hash ? d : undefined;
      },
      30_000,
    );
    t.equal(
      restored.metadata.annotations?.[lastApplied],
      '{"kind":"Deployment"}',
      'the update kept the annotation the mirror does not carry',
    );
    await waitForCsvPhase(client, 'drift', 'etcdoperator.v0.9.4', 'Succeeded');
  },
);

t.test(
  'install - a strategy deployment the mirror does not hold (olm.managed removed) is still seen',
  async (t) => {
    const { client } = await installFunctionFor(t);
    await namespaceWithOperatorGroup(client, 'unlabelled');
    const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
    await createInstallPlan(client, {
      name: 'install-unlabelled',
      namespace: 'unlabelled',
      bundles: [bundle],
    });
    await waitForCsvPhase(client, 'unlabelled', 'etcdoperator.v0.9.4', 'Succeeded');
    const ref = deploymentRef('unlabelled', 'etcd-operator');
    // Out of the mirror (the watcher mirrors olm.managed Deployments only), and drifted: the
    // CSV must find it through the API and update it, not fail creating it again.
    await client.patch(ref, 'json', [
      { op: 'remove', path: '/metadata/labels/olm.managed' },
      { op: 'replace', path: `/metadata/labels/${hashLabel}`, value: 'edited' },
    ]);
    const restored = await waitFor(
      'the CSV to put its deployment back',
      async () => {
        const d = await client.get(ref);
        return d?.metadata.labels?.[hashLabel] !== 'edited' ? d : undefined;
      },
      30_000,
    );
    t.equal(restored.metadata.labels?.['olm.managed'], 'true', 'labelled olm.managed again');
    await waitForCsvPhase(client, 'unlabelled', 'etcdoperator.v0.9.4', 'Succeeded');
  },
);
