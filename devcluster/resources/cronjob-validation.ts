// The checks kube 1.30's batch validation makes of a CronJob's schedule, time zone and name
// (pkg/apis/batch/validation: validateScheduleFormat, validateTimeZone, ValidateCronJobCreate).
import type { StatusCause } from '../../shared/kube/status.js';
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';
import { CronSyntaxError, isKnownTimeZone, parseCronSchedule } from './cron-schedule.js';

function invalid(field: string, value: string, message: string): StatusCause {
  return {
    type: 'FieldValueInvalid',
    field,
    message: `Invalid value: ${JSON.stringify(value)}: ${message}`,
  };
}

/** spec.schedule, spec.timeZone and the name's length (a Job name adds 11 characters). */
export function validateCronJobSchedule(object: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
  const name = text(metadata['name'] ?? '');
  if (name.length > 52)
    causes.push(invalid('metadata.name', name, 'must be no more than 52 characters'));
  const spec = isJsonObject(object['spec']) ? object['spec'] : {};
  const schedule = spec['schedule'];
  const zone = spec['timeZone'];
  if (typeof schedule === 'string' && schedule !== '') {
    if (/TZ/.test(schedule) && zone !== undefined && zone !== null) {
      const message = 'cannot use both timeZone field and TZ or CRON_TZ in schedule';
      causes.push(invalid('spec.schedule', schedule, message));
    } else {
      try {
        parseCronSchedule(schedule);
      } catch (error) {
        if (!(error instanceof CronSyntaxError)) throw error;
        causes.push(invalid('spec.schedule', schedule, error.message));
      }
    }
  }
  if (typeof zone === 'string') {
    if (zone === '')
      causes.push(invalid('spec.timeZone', zone, 'timeZone must be nil or non-empty string'));
    else if (zone.toLowerCase() === 'local') {
      const message =
        'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones';
      causes.push(invalid('spec.timeZone', zone, message));
    } else if (/\s/.test(zone) || !isKnownTimeZone(zone))
      causes.push(invalid('spec.timeZone', zone, `unknown time zone ${zone}`));
  }
  return causes;
}
