// The simulated CronJob controller, after kube 1.30's pkg/controller/cronjob (v2): at each
// scheduled minute (spec.schedule in spec.timeZone) a Job `<cronjob>-<minutes since epoch>` is
// made from spec.jobTemplate, unless suspended, too late (startingDeadlineSeconds) or barred by
// concurrencyPolicy (Forbid skips, Replace deletes the running ones); status.active,
// lastScheduleTime and lastSuccessfulTime follow the Jobs, and finished Jobs beyond the history
// limits are deleted. Time comes from the devcluster's clock, so tests can move it forward.
import { systemWrite, type ApiCore } from '../api/core.js';
import { jsonEqual } from '../api/object-json.js';
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';
import { rfc3339 } from '../api/metadata.js';
import {
  CronSyntaxError,
  nextScheduleTime,
  parseCronSchedule,
  type CronSchedule,
} from '../resources/cron-schedule.js';
import type { Clock } from './clock.js';
import {
  controllerOf,
  metadataOf,
  obj,
  ownerRef,
  recordEvent,
  tolerate,
} from './workload-objects.js';

/** Annotation with the time a CronJob's Job was scheduled for (kube 1.28+). */
export const scheduledTimestampAnnotation = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

const component = 'cronjob-controller';

function finishedType(job: JsonObject): 'Complete' | 'Failed' | undefined {
  const conditions = obj(job['status'])['conditions'];
  if (!Array.isArray(conditions)) return undefined;
  for (const c of conditions.filter(isJsonObject))
    if ((c['type'] === 'Complete' || c['type'] === 'Failed') && c['status'] === 'True')
      return c['type'];
  return undefined;
}

/** The most recent scheduled time in (earliest, now], if any (kube's mostRecentScheduleTime). */
function mostRecentScheduleTime(
  schedule: CronSchedule,
  earliest: number,
  now: number,
  zone: string,
): number | undefined {
  let recent: number | undefined;
  let t = nextScheduleTime(schedule, earliest, zone);
  for (let missed = 0; t !== undefined && t <= now; missed++) {
    recent = t;
    // Long-missed schedules (a stopped devcluster): only the last day's can still be the latest.
    const from = missed > 100 && t < now - 86_400_000 ? now - 86_400_000 : t;
    t = nextScheduleTime(schedule, from, zone);
  }
  return recent;
}

function jobName(cronJob: JsonObject, scheduled: number): string {
  return `${text(metadataOf(cronJob)['name'])}-${Math.floor(scheduled / 60_000)}`;
}

/** The Job kube's getJobFromTemplate2 builds for a scheduled time. */
function jobFromTemplate(cronJob: JsonObject, scheduled: number, zone: string): JsonObject {
  const template = obj(obj(cronJob['spec'])['jobTemplate']);
  const templateMeta = obj(template['metadata']);
  const stamp = zone === 'UTC' ? rfc3339(new Date(scheduled)) : zonedRfc3339(scheduled, zone);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(cronJob, scheduled),
      namespace: text(metadataOf(cronJob)['namespace']),
      ...(isJsonObject(templateMeta['labels'])
        ? { labels: structuredClone(templateMeta['labels']) }
        : {}),
      annotations: {
        ...structuredClone(obj(templateMeta['annotations'])),
        [scheduledTimestampAnnotation]: stamp,
      },
      ownerReferences: [ownerRef(cronJob, 'CronJob', 'batch/v1')],
    },
    spec: structuredClone(obj(template['spec'])),
  };
}

/** RFC 3339 with the zone's offset, as Go formats a time in a location. */
function zonedRfc3339(instant: number, zone: string): string {
  const parts: Record<string, string> = {};
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  for (const part of format.formatToParts(instant)) parts[part.type] = part.value;
  const wall = Date.UTC(
    Number(parts['year']),
    Number(parts['month']) - 1,
    Number(parts['day']),
    Number(parts['hour']),
    Number(parts['minute']),
    Number(parts['second']),
  );
  const offset = Math.round((wall - Math.floor(instant / 1000) * 1000) / 60_000);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  const local = `${parts['year']}-${parts['month']}-${parts['day']}T${parts['hour']}:${parts['minute']}:${parts['second']}`;
  return offset === 0 ? `${local}Z` : `${local}${sign}${hh}:${mm}`;
}

function jobReference(job: JsonObject): JsonObject {
  const m = metadataOf(job);
  return {
    kind: 'Job',
    namespace: m['namespace'] ?? '',
    name: m['name'] ?? '',
    uid: m['uid'] ?? '',
    apiVersion: 'batch/v1',
    resourceVersion: m['resourceVersion'] ?? '',
  };
}

function deleteJob(core: ApiCore, cronJob: JsonObject, job: JsonObject): void {
  const m = metadataOf(job);
  tolerate(() =>
    core.delete(core.typeOf('batch', 'jobs'), text(m['namespace']), text(m['name']), {
      dryRun: false,
      propagationPolicy: 'Background',
    }),
  );
  recordEvent(core, cronJob, component, 'SuccessfulDelete', `Deleted job ${text(m['name'])}`);
}

/** Deletes the oldest finished Jobs beyond the history limits (by start time, as kube sorts). */
function cleanupHistory(core: ApiCore, cronJob: JsonObject, jobs: JsonObject[]): void {
  const spec = obj(cronJob['spec']);
  const startOf = (j: JsonObject): string => text(obj(j['status'])['startTime'] ?? '');
  for (const [type, key] of [
    ['Complete', 'successfulJobsHistoryLimit'],
    ['Failed', 'failedJobsHistoryLimit'],
  ] as const) {
    const limit = spec[key];
    if (typeof limit !== 'number') continue;
    const done = jobs
      .filter((j) => finishedType(j) === type)
      .sort((a, b) => startOf(a).localeCompare(startOf(b)));
    for (const job of done.slice(0, Math.max(0, done.length - limit)))
      deleteJob(core, cronJob, job);
  }
}

/**
 * Reconciles the CronJob `namespace/name`; `requeueAt` asks to look again at a clock time (the
 * next scheduled minute).
 */
export function reconcileCronJob(
  core: ApiCore,
  key: string,
  clock: Clock,
  requeueAt: (key: string, at: number) => void,
): void {
  const [namespace = '', name = ''] = key.split('/');
  const cronJob = core.store.get('cronjobs.batch', namespace, name);
  if (!cronJob || metadataOf(cronJob)['deletionTimestamp'] !== undefined) return;
  const spec = obj(cronJob['spec']);
  const status: JsonObject = structuredClone(obj(cronJob['status']));
  const uid = text(metadataOf(cronJob)['uid']);
  const jobs = core.store.list('jobs.batch', namespace).filter((j) => controllerOf(j) === uid);

  // status.active: the running Jobs it made; finished or deleted ones leave it. Jobs made by
  // others (kubectl create job --from) are not listed, as in kube.
  const listed = new Map(
    (Array.isArray(status['active']) ? status['active'] : []).map((r) => [text(obj(r)['uid']), r]),
  );
  const running = jobs.filter(
    (j) => finishedType(j) === undefined && listed.has(text(metadataOf(j)['uid'])),
  );
  for (const job of jobs) {
    if (finishedType(job) !== 'Complete') continue;
    const completed = obj(job['status'])['completionTime'];
    if (typeof completed !== 'string') continue;
    const last = status['lastSuccessfulTime'];
    if (typeof last !== 'string' || Date.parse(completed) > Date.parse(last))
      status['lastSuccessfulTime'] = completed;
  }
  cleanupHistory(core, cronJob, jobs);

  let schedule: CronSchedule | undefined;
  try {
    schedule = parseCronSchedule(text(spec['schedule']));
  } catch (error) {
    if (!(error instanceof CronSyntaxError)) throw error;
  }
  const zone = typeof spec['timeZone'] === 'string' ? spec['timeZone'] : (schedule?.zone ?? 'UTC');
  const now = clock.now().getTime();
  if (schedule !== undefined && spec['suspend'] !== true) {
    const created = metadataOf(cronJob)['creationTimestamp'];
    let earliest = Date.parse(text(status['lastScheduleTime'] ?? created ?? ''));
    const deadline = spec['startingDeadlineSeconds'];
    if (typeof deadline === 'number') earliest = Math.max(earliest, now - deadline * 1000);
    const scheduled = mostRecentScheduleTime(schedule, earliest, now, zone);
    const name = scheduled === undefined ? undefined : jobName(cronJob, scheduled);
    const policy = spec['concurrencyPolicy'];
    if (scheduled !== undefined && !jobs.some((j) => metadataOf(j)['name'] === name)) {
      if (policy === 'Forbid' && running.length > 0) {
        // Skipped: the next reconcile after the running Job ends may still start it in time.
      } else {
        if (policy === 'Replace') {
          for (const job of running.splice(0)) deleteJob(core, cronJob, job);
        }
        const job = createJob(core, cronJob, scheduled, zone);
        if (job !== undefined) running.push(job);
        status['lastScheduleTime'] = rfc3339(new Date(scheduled));
      }
    }
    const next = nextScheduleTime(schedule, now, zone);
    if (next !== undefined) requeueAt(key, next);
  }
  // A listed Job keeps its reference as first written (kube does not refresh it).
  status['active'] = running.map((j) => listed.get(text(metadataOf(j)['uid'])) ?? jobReference(j));
  if ((status['active'] as unknown[]).length === 0) delete status['active'];
  if (jsonEqual(status, cronJob['status'] ?? {})) return;
  const copy = structuredClone(cronJob);
  copy['status'] = status;
  tolerate(() =>
    core.update(
      core.typeOf('batch', 'cronjobs'),
      namespace,
      name,
      copy,
      systemWrite(component),
      'status',
    ),
  );
}

function createJob(
  core: ApiCore,
  cronJob: JsonObject,
  scheduled: number,
  zone: string,
): JsonObject | undefined {
  const body = jobFromTemplate(cronJob, scheduled, zone);
  const namespace = text(metadataOf(cronJob)['namespace']);
  let created: JsonObject | undefined;
  tolerate(() => {
    created = core.create(core.typeOf('batch', 'jobs'), namespace, body, systemWrite(component));
  });
  if (created === undefined) return undefined;
  const message = `Created job ${text(metadataOf(created)['name'])}`;
  recordEvent(core, cronJob, component, 'SuccessfulCreate', message);
  return created;
}
