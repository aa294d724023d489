// The pure parts of the devcluster's Job and CronJob simulation: cron schedules (robfig/cron's
// standard syntax), index sets as kube writes them, the fail annotation and pod failure policy
// verdicts.
import t from 'tap';
import { judgeFailedPod } from '../../devcluster/controllers/job-failure-policy.js';
import { formatIndexes, parseIndexes } from '../../devcluster/controllers/job-indexes.js';
import { parseFailMode } from '../../devcluster/controllers/workload-objects.js';
import {
  CronSyntaxError,
  nextScheduleTime,
  parseCronSchedule,
} from '../../devcluster/resources/cron-schedule.js';
import type { JsonObject } from '../../shared/kube/json.js';

const at = (iso: string): number => Date.parse(iso);
const next = (schedule: string, after: string, zone?: string): string | undefined => {
  const time = nextScheduleTime(parseCronSchedule(schedule), at(after), zone);
  return time === undefined ? undefined : new Date(time).toISOString();
};

void t.test('cron schedule - fields, names, steps and descriptors', (t) => {
  t.equal(next('*/15 * * * *', '2026-01-01T10:07:30Z'), '2026-01-01T10:15:00.000Z');
  t.equal(next('0 9 * * mon-fri', '2026-11-27T10:00:00Z'), '2026-11-30T09:00:00.000Z');
  t.equal(next('@hourly', '2026-01-01T10:00:00Z'), '2026-01-01T11:00:00.000Z');
  t.equal(next('@yearly', '2026-03-01T00:00:00Z'), '2027-01-01T00:00:00.000Z');
  t.equal(next('0 0 1 jan,jul *', '2026-02-01T00:00:00Z'), '2026-07-01T00:00:00.000Z');
  t.equal(next('5/20 * * * *', '2026-01-01T10:06:00Z'), '2026-01-01T10:25:00.000Z');
  t.equal(next('0 0 30 2 *', '2026-01-01T00:00:00Z'), undefined, 'never');
  t.end();
});

void t.test('cron schedule - day-of-month and day-of-week: either when both are set', (t) => {
  // The 13th, or any Friday (robfig/cron and Vixie cron alike).
  t.equal(next('0 0 13 * fri', '2026-11-01T00:00:00Z'), '2026-11-06T00:00:00.000Z');
  // A star in one day field makes it an "and".
  t.equal(next('0 0 13 * *', '2026-11-01T00:00:00Z'), '2026-11-13T00:00:00.000Z');
  t.end();
});

void t.test('cron schedule - time zones, with DST', (t) => {
  t.equal(next('30 9 * * *', '2026-01-01T00:00:00Z', 'Asia/Kolkata'), '2026-01-01T04:00:00.000Z');
  // New York: EST (UTC-5) before 2026-03-08, EDT (UTC-4) after.
  t.equal(
    next('0 8 * * *', '2026-03-07T14:00:00Z', 'America/New_York'),
    '2026-03-08T12:00:00.000Z',
  );
  t.equal(
    next('0 0 * * *', '2026-03-07T06:00:00Z', 'America/New_York'),
    '2026-03-08T05:00:00.000Z',
  );
  const tokyo = parseCronSchedule('TZ=Asia/Tokyo 0 0 * * *');
  t.equal(tokyo.zone, 'Asia/Tokyo');
  t.equal(next('0 0 * * *', '2026-01-01T00:00:00Z', tokyo.zone), '2026-01-01T15:00:00.000Z');
  t.equal(parseCronSchedule('CRON_TZ=Asia/Tokyo @daily').zone, 'Asia/Tokyo');
  t.end();
});

void t.test('cron schedule - robfig/cron errors', (t) => {
  const error = (schedule: string): string => {
    try {
      parseCronSchedule(schedule);
      return 'parsed';
    } catch (e) {
      return e instanceof CronSyntaxError ? e.message : 'other error';
    }
  };
  t.equal(error('* * *'), 'expected exactly 5 fields, found 3: [* * *]');
  t.equal(error('60 * * * *'), 'end of range (60) above maximum (59): 60');
  t.equal(error('5-2 * * * *'), 'beginning of range (5) beyond end of range (2): 5-2');
  t.equal(error('x * * * *'), 'failed to parse int from x');
  t.equal(error('@fortnightly'), 'unrecognized descriptor: @fortnightly');
  t.equal(error('*/0 * * * *'), 'step of range should be a positive number: */0');
  t.end();
});

void t.test('job indexes - kube range format', (t) => {
  t.equal(formatIndexes([4, 0, 1, 2, 7, 8]), '0-2,4,7-8');
  t.equal(formatIndexes([]), '');
  t.same([...parseIndexes('0-2,4,9', 5)].sort(), [0, 1, 2, 4], 'indexes past completions dropped');
  t.end();
});

void t.test('fail annotation - modes and exit codes', (t) => {
  t.same(parseFailMode('fail'), { mode: 'fail', exitCode: 1 });
  t.same(parseFailMode('fail:42'), { mode: 'fail', exitCode: 42 });
  t.same(parseFailMode('disrupt'), { mode: 'disrupt', exitCode: 137 });
  t.same(parseFailMode('unready'), { mode: 'unready', exitCode: 1 });
  t.equal(parseFailMode('fail:0'), undefined, 'a failure needs a non-zero code');
  t.equal(parseFailMode('fail:999'), undefined);
  t.end();
});

function failedPod(exitCodes: Record<string, number>, conditions: JsonObject[] = []): JsonObject {
  return {
    metadata: { name: 'p', namespace: 'ns' },
    status: {
      phase: 'Failed',
      conditions,
      containerStatuses: Object.entries(exitCodes).map(([name, exitCode]) => ({
        name,
        state: { terminated: { exitCode } },
      })),
    },
  };
}

void t.test('pod failure policy - the first matching rule decides', (t) => {
  const policy = {
    rules: [
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
      { action: 'Count', onExitCodes: { operator: 'NotIn', values: [3] } },
      { action: 'FailIndex', onExitCodes: { operator: 'In', values: [3] } },
    ],
  };
  t.same(judgeFailedPod(undefined, failedPod({ main: 1 })), { action: 'Count', counts: true });
  t.same(
    judgeFailedPod(policy, failedPod({ main: 1 }, [{ type: 'DisruptionTarget', status: 'True' }])),
    { action: 'Ignore', counts: false },
  );
  t.same(judgeFailedPod(policy, failedPod({ main: 42 })), {
    action: 'FailJob',
    counts: true,
    message:
      'Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1',
  });
  t.same(judgeFailedPod(policy, failedPod({ side: 42 })), { action: 'Count', counts: true });
  t.same(judgeFailedPod(policy, failedPod({ main: 3 })), { action: 'FailIndex', counts: true });
  t.same(
    judgeFailedPod(policy, failedPod({ main: 0, side: 0 })),
    { action: 'Count', counts: true },
    'exit code 0 never matches',
  );
  t.end();
});
