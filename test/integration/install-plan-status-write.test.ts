// The plan status after a pass, when the plan's metadata moved on meanwhile (the Operator API
// labels every plan it adopts): written on the fresh plan, so what the pass created stays
// Created; a changed spec or status still re-decides.
import t from 'tap';
import pino from 'pino';
import type { InstallPlan } from '../../shared/api/index.js';
import type { KubeClient } from '../../shared/kube/client.js';
import { StaleDecisionError } from '../../shared/runtime/function-host.js';
import { applyPlan } from '../../functions/install/install-plan/apply.js';
import type { ServedInstallPlan } from '../../functions/install/install-plan/types.js';
import { clusterFor } from '../harness/backbone.js';

const ref = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', namespace: 'ns1' };

async function installingPlan(client: KubeClient, name: string): Promise<ServedInstallPlan> {
  await client.create({
    ...ref,
    metadata: { name, namespace: 'ns1' },
    spec: { clusterServiceVersionNames: ['a.v1'], approval: 'Automatic', approved: true },
  });
  const created = await client.get<ServedInstallPlan>({ ...ref, name });
  if (created === undefined) throw new Error('plan not created');
  await client.updateStatus({
    ...created,
    status: {
      phase: 'Installing',
      catalogSources: [],
      plan: [
        {
          resolving: 'a.v1',
          status: 'Unknown',
          resource: {
            sourceName: 'c',
            sourceNamespace: 'olm',
            group: '',
            version: 'v1',
            kind: 'ServiceAccount',
            name: `${name}-sa`,
            manifest: '{}',
          },
        },
      ],
    },
  });
  const plan = await client.get<ServedInstallPlan>({ ...ref, name });
  if (plan === undefined) throw new Error('plan gone');
  return plan;
}

function pass(client: KubeClient, plan: ServedInstallPlan) {
  const status = structuredClone(plan.status) as NonNullable<InstallPlan['status']>;
  return applyPlan(
    {
      plan,
      status,
      steps: [
        {
          step: 0,
          scoped: false,
          status: 'Created',
          write: {
            op: 'create',
            object: {
              apiVersion: 'v1',
              kind: 'ServiceAccount',
              metadata: { name: `${plan.metadata.name ?? ''}-sa`, namespace: 'ns1' },
            },
          },
        },
      ],
    },
    {
      client,
      scoped: { clientFor: () => client } as never,
      now: () => new Date(),
      log: pino({ level: 'silent' }),
      countWarnings: () => undefined,
    },
  );
}

t.test('plan status - a label written meanwhile does not turn Created into Present', async (t) => {
  const { client } = await clusterFor(t);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
  const plan = await installingPlan(client, 'install-a');
  // The Operator API adopts the plan between this pass's read and its status write.
  await client.patch({ ...ref, name: 'install-a' }, 'merge', {
    metadata: { labels: { 'operators.coreos.com/a.ns1': '' } },
  });
  await pass(client, plan);
  const after = await client.get<ServedInstallPlan>({ ...ref, name: 'install-a' });
  t.equal(after?.status?.plan?.[0]?.status, 'Created', 'the step this pass created');
  t.equal(after?.status?.phase, 'Complete');
  t.equal(after?.metadata.labels?.['operators.coreos.com/a.ns1'], '', 'the label kept');
});

t.test('plan status - a spec changed meanwhile makes the pass decide again', async (t) => {
  const { client } = await clusterFor(t);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
  const plan = await installingPlan(client, 'install-b');
  await client.patch({ ...ref, name: 'install-b' }, 'merge', { spec: { approved: false } });
  await t.rejects(pass(client, plan), StaleDecisionError);
});
