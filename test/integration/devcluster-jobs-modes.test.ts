// batch/v1 Job modes in the devcluster, as kube 1.30's job controller runs them: Indexed Jobs,
// parallelism, backoffLimitPerIndex and podFailurePolicy (FailJob, Ignore), and the validation
// of those fields.
import { BatchV1Api, CoreV1Api, type V1Job, type V1Pod } from '@kubernetes/client-node';
import t from 'tap';
import { failAnnotation } from '../../devcluster/index.js';
import { startCluster, type ClusterFixture } from '../harness/devcluster.js';
import { jobFinished, jobPods, type JobScope } from '../harness/jobs.js';
import { waitFor } from '../harness/wait.js';

let fixture: ClusterFixture;
let batch: BatchV1Api;
let core: CoreV1Api;

t.before(async () => {
  fixture = await startCluster();
  batch = fixture.kubeConfig.makeApiClient(BatchV1Api);
  core = fixture.kubeConfig.makeApiClient(CoreV1Api);
});
t.teardown(async () => {
  await fixture.close();
});

const namespace = 'default';
const indexKey = 'batch.kubernetes.io/job-completion-index';

function job(
  name: string,
  spec: Partial<NonNullable<V1Job['spec']>> = {},
  annotations: Record<string, string> = {},
): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, annotations },
    spec: {
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [
            { name: 'main', image: 'busybox:1.36' },
            { name: 'sidecar', image: 'busybox:1.36' },
          ],
        },
      },
      ...spec,
    },
  };
}

const scope = (): JobScope => ({ batch, core, namespace });
const podsOf = (name: string): Promise<V1Pod[]> => jobPods(scope(), name);
const finished = (name: string, type: 'Complete' | 'Failed'): Promise<V1Job> =>
  jobFinished(scope(), name, type);

async function rejection(body: V1Job): Promise<string> {
  const error = await batch.createNamespacedJob({ namespace, body }).then(
    () => undefined,
    (e: unknown) => e as { code?: number; body?: unknown },
  );
  if (error?.code !== 422) throw new Error(`expected 422, got ${String(error?.code)}`);
  return (JSON.parse(String(error.body)) as { message: string }).message;
}

void t.test(
  'jobs - an Indexed job runs one pod per index with its annotation, label, hostname and env',
  async (t) => {
    await batch.createNamespacedJob({
      namespace,
      body: job('idx', { completionMode: 'Indexed', completions: 3, parallelism: 2 }),
    });
    const done = await finished('idx', 'Complete');
    t.equal(done.status?.completedIndexes, '0-2');
    t.equal(done.status?.succeeded, 3);
    t.equal(done.status?.failedIndexes, undefined, 'no failedIndexes without a per-index limit');
    const pods = (await podsOf('idx')).sort((a, b) =>
      (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
    t.equal(pods.length, 3);
    pods.forEach((pod, i) => {
      t.match(pod.metadata?.name, new RegExp(`^idx-${i}-[a-z0-9]{5}$`));
      t.equal(pod.metadata?.annotations?.[indexKey], String(i));
      t.equal(pod.metadata?.labels?.[indexKey], String(i));
      t.equal(pod.spec?.hostname, `idx-${i}`);
      for (const container of pod.spec?.containers ?? [])
        t.same(container.env, [
          {
            name: 'JOB_COMPLETION_INDEX',
            valueFrom: {
              fieldRef: { fieldPath: `metadata.labels['${indexKey}']` },
            },
          },
        ]);
    });
  },
);

void t.test('jobs - parallelism caps the running pods of both modes', async (t) => {
  const unready = { [failAnnotation]: 'unready' };
  await batch.createNamespacedJob({
    namespace,
    body: job('wide', { completions: 4, parallelism: 2 }, unready),
  });
  await batch.createNamespacedJob({
    namespace,
    body: job('wide-idx', { completionMode: 'Indexed', completions: 4, parallelism: 2 }, unready),
  });
  for (const name of ['wide', 'wide-idx']) {
    await waitFor(`${name} to report 2 active pods`, async () => {
      const read = await batch.readNamespacedJobStatus({ name, namespace });
      return read.status?.active === 2;
    });
    t.equal((await podsOf(name)).length, 2, `${name}: parallelism 2`);
  }
  const indexes = (await podsOf('wide-idx')).map((p) => p.metadata?.labels?.[indexKey]).sort();
  t.same(indexes, ['0', '1'], 'the lowest indexes first');
  for (const name of ['wide', 'wide-idx']) {
    await batch.patchNamespacedJob(
      { name, namespace, body: [{ op: 'remove', path: '/metadata/annotations' }] },
      undefined,
    );
    const done = await finished(name, 'Complete');
    t.equal(done.status?.succeeded, 4);
    t.equal((await podsOf(name)).length, 4);
  }
});

void t.test('jobs - backoffLimitPerIndex gives up a failing index only', async (t) => {
  await batch.createNamespacedJob({
    namespace,
    body: job(
      'per-index',
      { completionMode: 'Indexed', completions: 3, backoffLimitPerIndex: 1 },
      { [failAnnotation]: 'fail', 'devcluster.olmq.io/fail-indexes': '1' },
    ),
  });
  const created = await batch.readNamespacedJob({ name: 'per-index', namespace });
  t.equal(created.spec?.backoffLimit, 2147483647, 'the global limit defaults to unlimited');
  const failed = await finished('per-index', 'Failed');
  const condition = failed.status?.conditions?.find((c) => c.type === 'Failed');
  t.equal(condition?.reason, 'FailedIndexes');
  t.equal(condition?.message, 'Job has failed indexes');
  t.equal(failed.status?.failedIndexes, '1');
  t.equal(failed.status?.completedIndexes, '0,2');
  t.equal(failed.status?.failed, 2, 'index 1 ran twice');
  const ones = (await podsOf('per-index')).filter((p) => p.metadata?.labels?.[indexKey] === '1');
  t.same(
    ones
      .map((p) => p.metadata?.annotations?.['batch.kubernetes.io/job-index-failure-count'])
      .sort(),
    ['0', '1'],
  );
});

void t.test('jobs - a podFailurePolicy FailJob rule on an exit code fails the job', async (t) => {
  const rules = [
    { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
  ];
  await batch.createNamespacedJob({
    namespace,
    body: job('exit42', { podFailurePolicy: { rules } }, { [failAnnotation]: 'fail:42' }),
  });
  const failed = await finished('exit42', 'Failed');
  const pods = await podsOf('exit42');
  t.equal(pods.length, 1, 'no replacement');
  const pod = pods[0];
  t.match(pod?.status?.containerStatuses, [
    { name: 'main', state: { terminated: { exitCode: 42, reason: 'Error' } } },
    { name: 'sidecar', state: { terminated: { exitCode: 0, reason: 'Completed' } } },
  ]);
  const message = `Container main for pod default/${pod?.metadata?.name ?? ''} failed with exit code 42 matching FailJob rule at index 0`;
  t.match(failed.status?.conditions, [
    { type: 'FailureTarget', status: 'True', reason: 'PodFailurePolicy', message },
    { type: 'Failed', status: 'True', reason: 'PodFailurePolicy', message },
  ]);
  t.equal(failed.spec?.podReplacementPolicy, 'Failed');
});

void t.test('jobs - failures a podFailurePolicy Ignore rule matches are not counted', async (t) => {
  const rules = [
    { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
  ];
  await batch.createNamespacedJob({
    namespace,
    body: job(
      'disrupted',
      { backoffLimit: 0, podFailurePolicy: { rules } },
      { [failAnnotation]: 'disrupt' },
    ),
  });
  await waitFor('three disrupted pods', async () => {
    const pods = await podsOf('disrupted');
    return pods.filter((p) => p.status?.phase === 'Failed').length >= 3;
  });
  const read = await batch.readNamespacedJobStatus({ name: 'disrupted', namespace });
  t.equal(read.status?.failed, undefined, 'ignored failures are not counted');
  t.notOk(read.status?.conditions?.some((c) => c.type === 'Failed'));
  await batch.patchNamespacedJob(
    { name: 'disrupted', namespace, body: [{ op: 'remove', path: '/metadata/annotations' }] },
    undefined,
  );
  const done = await finished('disrupted', 'Complete');
  t.equal(done.status?.failed, undefined);
  t.equal(done.status?.succeeded, 1);

  // The same failures under a Count rule end a job with backoffLimit 0 at once.
  const counted = [{ ...rules[0], action: 'Count' }];
  await batch.createNamespacedJob({
    namespace,
    body: job(
      'counted',
      { backoffLimit: 0, podFailurePolicy: { rules: counted } },
      { [failAnnotation]: 'disrupt' },
    ),
  });
  const failed = await finished('counted', 'Failed');
  t.equal(
    failed.status?.conditions?.find((c) => c.type === 'Failed')?.reason,
    'BackoffLimitExceeded',
  );
  t.equal(failed.status?.failed, 1);
});

void t.test('jobs - the Indexed and podFailurePolicy fields are validated', async (t) => {
  const onFailure = job('on-failure', {
    podFailurePolicy: {
      rules: [{ action: 'Ignore', onExitCodes: { operator: 'In', values: [1] } }],
    },
  });
  if (onFailure.spec?.template.spec) onFailure.spec.template.spec.restartPolicy = 'OnFailure';
  t.equal(
    await rejection(onFailure),
    'Job.batch "on-failure" is invalid: spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified',
  );
  t.equal(
    await rejection(job('no-completions', { completionMode: 'Indexed', parallelism: 2 })),
    'Job.batch "no-completions" is invalid: spec.completions: Required value: when completion mode is Indexed',
  );
  t.equal(
    await rejection(job('per-index-plain', { backoffLimitPerIndex: 1 })),
    'Job.batch "per-index-plain" is invalid: spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode',
  );
  t.equal(
    await rejection(
      job('bad-rule', {
        podFailurePolicy: {
          rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [0, 3, 2] } }],
        },
      }),
    ),
    'Job.batch "bad-rule" is invalid: [spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator, spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 3, 2}: must be ordered]',
  );
});

void t.test('jobs - activeDeadlineSeconds follows the devcluster clock', async (t) => {
  await batch.createNamespacedJob({
    namespace,
    body: job('hour-long', { activeDeadlineSeconds: 3600 }, { [failAnnotation]: 'unready' }),
  });
  await waitFor('the job started', async () => {
    const read = await batch.readNamespacedJobStatus({ name: 'hour-long', namespace });
    return read.status?.active === 1;
  });
  fixture.cluster.clock.advance(3601_000);
  const failed = await finished('hour-long', 'Failed');
  t.equal(failed.status?.conditions?.find((c) => c.type === 'Failed')?.reason, 'DeadlineExceeded');
});
