import t from 'tap';
import type { Test } from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { kubectl, kubectlMissing, type ClusterFixture } from '../harness/devcluster.js';
import {
  getCsv,
  installFunctionFor,
  installPlanStatus,
  namespaceWithOperatorGroup,
  waitForCsvPhase,
} from '../harness/install.js';
import {
  createInstallPlan,
  smallBundle,
  withOlmGroupWebhook,
  type TestBundle,
} from '../harness/install-plan.js';
import { waitFor } from '../harness/wait.js';

interface EventObject {
  metadata: { name: string };
  involvedObject: { kind: string; name: string; namespace?: string; fieldPath?: string };
  type: string;
  reason: string;
  message: string;
  count: number;
  source: { component: string };
}

// What a user sees: kubectl get events --field-selector involvedObject.name=<name>.
async function eventsOf(
  t: Test,
  fixture: ClusterFixture,
  namespace: string,
  name: string,
): Promise<EventObject[]> {
  const result = await kubectl(fixture, [
    'get',
    'events',
    '-n',
    namespace,
    '--field-selector',
    `involvedObject.name=${name}`,
    '-o',
    'json',
  ]);
  t.equal(result.code, 0, result.stderr);
  return (JSON.parse(result.stdout) as { items: EventObject[] }).items;
}

const failAnnotation = 'devcluster.olmq.io/fail';
const csvName = 'etcdoperator.v0.9.4';

const missing = kubectlMissing();
if (missing !== undefined) t.fail(missing);
else {
  t.test('install events - CSV phase writes are Events on the CSV, as upstream', async (t) => {
    const { fixture, client } = await installFunctionFor(t);
    const bundle = await smallBundle('etcd', csvName);

    await t.test('a normal install: Normal Events, one per phase write, in order', async (t) => {
      await namespaceWithOperatorGroup(client, 'ok');
      await createInstallPlan(client, { name: 'install-ok', namespace: 'ok', bundles: [bundle] });
      await waitForCsvPhase(client, 'ok', csvName, 'Succeeded');
      const events = await waitFor('the Succeeded Event', async () => {
        const all = await eventsOf(t, fixture, 'ok', csvName);
        return all.some((e) => e.message === 'install strategy completed with no errors')
          ? all
          : undefined;
      });
      t.ok(
        events.every(
          (e) =>
            e.type === 'Normal' &&
            e.involvedObject.kind === 'ClusterServiceVersion' &&
            e.source.component === 'operator-lifecycle-manager',
        ),
        'Normal Events on the CSV from operator-lifecycle-manager',
      );
      const pairs = events.map((e) => [e.reason, e.message]);
      for (const expected of [
        ['RequirementsUnknown', 'requirements not yet checked'],
        ['AllRequirementsMet', 'all requirements found, attempting install'],
        ['InstallSucceeded', 'waiting for install components to report healthy'],
        ['InstallSucceeded', 'install strategy completed with no errors'],
      ]) {
        t.ok(
          pairs.some(([r, m]) => r === expected[0] && m === expected[1]),
          `Event ${expected.join(': ')}`,
        );
      }
      // Every Event matches a recorded phase move: the CSV's history has each reason.
      const csv = await getCsv(client, 'ok', csvName);
      const reasons = new Set(csv?.status?.conditions?.map((c) => c.reason));
      t.ok(
        events.every((e) => reasons.has(e.reason)),
        'no Event without a phase write',
      );
    });

    await t.test(
      'a repeated move counts up on the same Event (the recorder aggregates)',
      async (t) => {
        const deployment = {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace: 'ok',
          name: 'etcd-operator',
        };
        const unhealthy = async (round: number): Promise<EventObject> => {
          await client.patch(deployment, 'merge', {
            metadata: { annotations: { [failAnnotation]: 'unready' } },
          });
          const event = await waitFor(`ComponentUnhealthy #${round}`, async () =>
            (await eventsOf(t, fixture, 'ok', csvName)).find(
              (e) => e.reason === 'ComponentUnhealthy' && e.count === round,
            ),
          );
          await client.patch(deployment, 'json', [
            { op: 'remove', path: `/metadata/annotations/${failAnnotation.replace('/', '~1')}` },
          ]);
          await waitForCsvPhase(client, 'ok', csvName, 'Succeeded');
          return event;
        };
        const first = await unhealthy(1);
        t.equal(first.type, 'Warning', 'Failed phases are Warning Events');
        t.match(first.message, /waiting for deployment etcd-operator to become ready/);
        const second = await unhealthy(2);
        t.equal(second.metadata.name, first.metadata.name, 'the same Event object, count 2');
        const events = await eventsOf(t, fixture, 'ok', csvName);
        t.equal(
          events.filter((e) => e.reason === 'ComponentUnhealthy').length,
          1,
          'no duplicate Event',
        );
      },
    );

    await t.test(
      'a failing CSV: a Warning Event with the failure reason and message',
      async (t) => {
        await namespaceWithOperatorGroup(client, 'bad-hook');
        const hooked = withOlmGroupWebhook(bundle);
        await createInstallPlan(client, {
          name: 'install-hook',
          namespace: 'bad-hook',
          bundles: [hooked],
        });
        await waitForCsvPhase(client, 'bad-hook', csvName, 'Failed', 'InvalidWebhookDescription');
        const warning = await waitFor('the Warning Event', async () =>
          (await eventsOf(t, fixture, 'bad-hook', csvName)).find((e) => e.type === 'Warning'),
        );
        t.match(warning, {
          reason: 'InvalidWebhookDescription',
          message: 'webhook rules cannot include the OLM group',
          involvedObject: { kind: 'ClusterServiceVersion', name: csvName, namespace: 'bad-hook' },
        });
      },
    );
  });

  t.test(
    'install events - a plan step drawing API warnings: AppliedWithWarnings and installplan_warnings_total; the plan Completes',
    async (t) => {
      const { fixture, client, registry } = await installFunctionFor(t);
      await servicemonitorsDeprecated(client);
      await namespaceWithOperatorGroup(client, 'warned');
      const bundle: TestBundle = await smallBundle('etcd', csvName);
      bundle.others.push({
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: { name: 'etcd-operator-metrics' },
        spec: {
          selector: { matchLabels: { name: 'etcd-operator' } },
          endpoints: [{ port: 'http' }],
        },
      });
      await createInstallPlan(client, {
        name: 'install-w',
        namespace: 'warned',
        bundles: [bundle],
      });
      const status = await waitFor('the plan to be Complete', async () => {
        const s = await installPlanStatus(client, 'warned', 'install-w');
        return s?.phase === 'Complete' ? s : undefined;
      });
      const index = status.plan?.findIndex((s) => s.resource.kind === 'ServiceMonitor') ?? -1;
      t.equal(status.plan?.[index]?.status, 'Created', 'the deprecated object was still applied');

      const events = await waitFor('the AppliedWithWarnings Event', async () => {
        const all = await eventsOf(t, fixture, 'warned', 'install-w');
        return all.length > 0 ? all : undefined;
      });
      t.equal(events.length, 1, 'one Event: only the ServiceMonitor step drew a warning');
      t.match(events[0], {
        type: 'Warning',
        reason: 'AppliedWithWarnings',
        count: 1,
        involvedObject: {
          kind: 'InstallPlan',
          name: 'install-w',
          namespace: 'warned',
          fieldPath: `status.plan[${index}]`,
        },
        message: `1 warning(s) generated during installation of operator "${csvName}" (ServiceMonitor "etcd-operator-metrics"): monitoring.coreos.com/v1 ServiceMonitor is deprecated`,
      });
      const counter = (await registry.getMetricsAsJSON()).find(
        (m) => m.name === 'installplan_warnings_total',
      );
      t.same(
        counter?.values.map((v) => v.value),
        [1],
        'installplan_warnings_total counts the step',
      );
    },
  );
}

// prometheus-operator's ServiceMonitor CRD from the catalog, with its only version deprecated.
async function servicemonitorsDeprecated(client: KubeClient): Promise<void> {
  const prometheus = await smallBundle('prometheus', 'prometheusoperator.0.56.3');
  const crd = prometheus.others.find(
    (o) => o.metadata.name === 'servicemonitors.monitoring.coreos.com',
  ) as KubeObject & { spec: { versions: Record<string, unknown>[] } };
  for (const v of crd.spec.versions) v['deprecated'] = true;
  await client.create(crd);
  await waitFor('the ServiceMonitor CRD to be served', async () => {
    const got = await client.get({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: 'servicemonitors.monitoring.coreos.com',
    });
    return (
      got?.['status'] as { conditions?: { type: string; status: string }[] } | undefined
    )?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
}
