// CronJobs in the devcluster, scheduled as kube 1.30's CronJob controller does, on the
// devcluster's clock (tests move it forward with `cluster.clock.advance`, never wait minutes):
// Job names and owners, status, suspend, concurrencyPolicy, startingDeadlineSeconds, history
// limits, time zones, validation and `kubectl create job --from=cronjob/...`.
import { BatchV1Api, type V1CronJob, type V1Job } from '@kubernetes/client-node';
import t from 'tap';
import { failAnnotation } from '../../devcluster/index.js';
import {
  kubectl,
  kubectlMissing,
  startCluster,
  type ClusterFixture,
} from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

let fixture: ClusterFixture;
let batch: BatchV1Api;

t.before(async () => {
  fixture = await startCluster();
  batch = fixture.kubeConfig.makeApiClient(BatchV1Api);
});
t.teardown(async () => {
  await fixture.close();
});

const namespace = 'default';
const minute = 60_000;

function cronJob(
  name: string,
  schedule: string,
  spec: Partial<NonNullable<V1CronJob['spec']>> = {},
  jobAnnotations: Record<string, string> = {},
): V1CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name },
    spec: {
      schedule,
      jobTemplate: {
        metadata: { labels: { app: name }, annotations: jobAnnotations },
        spec: {
          backoffLimit: 0,
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] },
          },
        },
      },
      ...spec,
    },
  };
}

const now = (): number => fixture.cluster.clock.now().getTime();

/** The first multiple of `periodMs` (since the epoch) after the devcluster's now. */
function nextMultiple(periodMs: number): number {
  return (Math.floor(now() / periodMs) + 1) * periodMs;
}

/** Moves the devcluster's clock just past `at`. */
function advanceTo(at: number): void {
  fixture.cluster.clock.advance(Math.max(0, at - now()) + 1000);
}

async function jobsOf(name: string): Promise<V1Job[]> {
  const list = await batch.listNamespacedJob({ namespace, labelSelector: `app=${name}` });
  return list.items.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

async function jobNamed(name: string): Promise<V1Job> {
  return waitFor(`job ${name}`, () =>
    batch.readNamespacedJob({ name, namespace }).catch(() => undefined),
  );
}

function jobNameAt(cronJobName: string, at: number): string {
  return `${cronJobName}-${Math.floor(at / minute)}`;
}

void t.test(
  'cronjobs - a Job is made at the scheduled minute, named <cronjob>-<minutes since epoch>',
  async (t) => {
    await batch.createNamespacedCronJob({ namespace, body: cronJob('every5', '*/5 * * * *') });
    const at = nextMultiple(5 * minute);
    advanceTo(at);
    const job = await jobNamed(jobNameAt('every5', at));
    t.match(job.metadata?.ownerReferences, [
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'every5', controller: true },
    ]);
    t.equal(job.metadata?.labels?.['app'], 'every5');
    t.equal(
      job.metadata?.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'],
      new Date(at).toISOString().replace('.000Z', 'Z'),
    );
    const running = await waitFor('status.active', async () => {
      const read = await batch.readNamespacedCronJobStatus({ name: 'every5', namespace });
      return read.status?.lastScheduleTime !== undefined ? read : undefined;
    });
    t.equal(new Date(running.status?.lastScheduleTime ?? 0).getTime(), at);
    const done = await waitFor('lastSuccessfulTime and no active job', async () => {
      const read = await batch.readNamespacedCronJobStatus({ name: 'every5', namespace });
      return read.status?.lastSuccessfulTime !== undefined && read.status.active === undefined
        ? read
        : undefined;
    });
    t.ok(done.status?.lastSuccessfulTime, 'the job succeeded');
  },
);

void t.test('cronjobs - a suspended CronJob makes no Job', async (t) => {
  await batch.createNamespacedCronJob({
    namespace,
    body: cronJob('paused', '* * * * *', { suspend: true }),
  });
  await batch.createNamespacedCronJob({ namespace, body: cronJob('witness', '* * * * *') });
  const at = nextMultiple(minute);
  advanceTo(at);
  await jobNamed(jobNameAt('witness', at));
  t.same(await jobsOf('paused'), [], 'nothing for the suspended one');
});

void t.test(
  'cronjobs - concurrencyPolicy Forbid skips, Replace replaces, Allow adds',
  async (t) => {
    const never = { [failAnnotation]: 'unready' };
    for (const policy of ['Forbid', 'Replace', 'Allow'])
      await batch.createNamespacedCronJob({
        namespace,
        body: cronJob(policy.toLowerCase(), '* * * * *', { concurrencyPolicy: policy }, never),
      });
    const first = nextMultiple(minute);
    advanceTo(first);
    for (const name of ['forbid', 'replace', 'allow']) await jobNamed(jobNameAt(name, first));
    const second = first + minute;
    advanceTo(second);
    await jobNamed(jobNameAt('allow', second));
    await jobNamed(jobNameAt('replace', second));
    await waitFor('the replaced job deleted', async () => (await jobsOf('replace')).length === 1);
    t.same(
      (await jobsOf('allow')).map((j) => j.metadata?.name),
      [jobNameAt('allow', first), jobNameAt('allow', second)],
    );
    t.same(
      (await jobsOf('forbid')).map((j) => j.metadata?.name),
      [jobNameAt('forbid', first)],
      'Forbid made no second job',
    );
    const replace = await batch.readNamespacedCronJobStatus({ name: 'replace', namespace });
    t.same(
      replace.status?.active?.map((r) => r.name),
      [jobNameAt('replace', second)],
    );
    for (const name of ['forbid', 'replace', 'allow'])
      await batch.patchNamespacedCronJob({
        name,
        namespace,
        body: [{ op: 'replace', path: '/spec/suspend', value: true }],
      });
  },
);

void t.test(
  'cronjobs - a schedule missed by more than startingDeadlineSeconds is skipped',
  async (t) => {
    await batch.createNamespacedCronJob({
      namespace,
      body: cronJob('strict', '0 * * * *', { startingDeadlineSeconds: 60 }),
    });
    await batch.createNamespacedCronJob({ namespace, body: cronJob('lenient', '0 * * * *') });
    const hour = nextMultiple(60 * minute);
    advanceTo(hour + 5 * minute);
    await jobNamed(jobNameAt('lenient', hour));
    t.same(await jobsOf('strict'), [], 'too late for the strict one');
  },
);

void t.test('cronjobs - history limits delete the oldest finished Jobs', async (t) => {
  await batch.createNamespacedCronJob({
    namespace,
    body: cronJob('history', '* * * * *', { successfulJobsHistoryLimit: 1 }),
  });
  let at = nextMultiple(minute);
  for (let i = 0; i < 3; i++, at += minute) {
    advanceTo(at);
    await waitFor(`job ${i} complete`, async () => {
      const job = await batch
        .readNamespacedJobStatus({ name: jobNameAt('history', at), namespace })
        .catch(() => undefined);
      return job?.status?.succeeded === 1;
    });
  }
  const last = at - minute;
  await waitFor('only the newest finished job kept', async () => {
    const names = (await jobsOf('history')).map((j) => j.metadata?.name);
    return names.length === 1 && names[0] === jobNameAt('history', last);
  });
  await batch.patchNamespacedCronJob({
    name: 'history',
    namespace,
    body: [{ op: 'replace', path: '/spec/suspend', value: true }],
  });
  t.pass('history trimmed to 1');
});

void t.test('cronjobs - timeZone schedules in the zone and stamps the local time', async (t) => {
  // 09:30 in Asia/Kolkata (UTC+05:30, no DST) is 04:00 UTC.
  await batch.createNamespacedCronJob({
    namespace,
    body: cronJob('kolkata', '30 9 * * *', { timeZone: 'Asia/Kolkata' }),
  });
  const day = 24 * 60 * minute;
  let at = Math.floor(now() / day) * day + 4 * 60 * minute;
  if (at <= now()) at += day;
  advanceTo(at);
  const job = await jobNamed(jobNameAt('kolkata', at));
  const stamp = job.metadata?.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'];
  t.match(stamp, /^\d{4}-\d\d-\d\dT09:30:00\+05:30$/);
  t.equal(new Date(stamp ?? '').getTime(), at);
});

void t.test('cronjobs - schedule and timeZone are validated', async (t) => {
  const rejected = async (body: V1CronJob): Promise<string> => {
    const error = await batch.createNamespacedCronJob({ namespace, body }).then(
      () => undefined,
      (e: unknown) => e as { code?: number; body?: unknown },
    );
    t.equal(error?.code, 422);
    return (JSON.parse(String(error?.body)) as { message: string }).message;
  };
  t.equal(
    await rejected(cronJob('bad', 'every minute')),
    'CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]',
  );
  t.equal(
    await rejected(cronJob('range', '61 * * * *')),
    'CronJob.batch "range" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
  );
  t.equal(
    await rejected(cronJob('mars', '@hourly', { timeZone: 'Mars/Base' })),
    'CronJob.batch "mars" is invalid: spec.timeZone: Invalid value: "Mars/Base": unknown time zone Mars/Base',
  );
});

void t.test('cronjobs - kubectl create job --from=cronjob makes an owned Job', async (t) => {
  const missing = kubectlMissing();
  if (missing !== undefined) {
    t.fail(`${missing}; install kubectl`);
    return;
  }
  await batch.createNamespacedCronJob({
    namespace,
    body: cronJob('manual', '@yearly', { suspend: true }),
  });
  const result = await kubectl(fixture, [
    'create',
    'job',
    'by-hand',
    '--from=cronjob/manual',
    '-n',
    namespace,
  ]);
  t.equal(result.code, 0, result.stderr);
  const job = await jobNamed('by-hand');
  t.equal(job.metadata?.annotations?.['cronjob.kubernetes.io/instantiate'], 'manual');
  t.match(job.metadata?.ownerReferences, [{ kind: 'CronJob', name: 'manual' }]);
  await waitFor('the manual job complete', async () => {
    const read = await batch.readNamespacedJobStatus({ name: 'by-hand', namespace });
    return read.status?.succeeded === 1;
  });
});
