// CronJob schedules as kube 1.30 reads them (robfig/cron/v3's ParseStandard): five fields
// (minute hour day-of-month month day-of-week) with `*`, `?`, lists, ranges, steps and month and
// weekday names, or a descriptor (@yearly, @annually, @monthly, @weekly, @daily, @midnight,
// @hourly); evaluated in a time zone (spec.timeZone, else the server's, UTC here).

/** A parsed schedule: the allowed values of each field. */
export interface CronSchedule {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  daysOfWeek: ReadonlySet<number>;
  /** robfig's star bit: when either day field is `*`/`?`, both must match; else either may. */
  dayStar: boolean;
  /** The zone of a `TZ=`/`CRON_TZ=` prefix (not officially supported by kube, but accepted). */
  zone?: string;
}

/** Why a schedule does not parse, in robfig/cron's words. */
export class CronSyntaxError extends Error {
  override readonly name = 'CronSyntaxError';
}

const descriptors: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const monthNames = [
  'jan',
  'feb',
  'mar',
  'apr',
  'may',
  'jun',
  'jul',
  'aug',
  'sep',
  'oct',
  'nov',
  'dec',
];
const dayNames = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface Bounds {
  min: number;
  max: number;
  names?: readonly string[];
  /** Value of the first name (1 for months, 0 for weekdays). */
  nameBase?: number;
}

function number(text: string, bounds: Bounds): number {
  const named = bounds.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (bounds.nameBase ?? 0);
  if (!/^\d+$/.test(text)) throw new CronSyntaxError(`failed to parse int from ${text}`);
  return Number(text);
}

/** One field: returns its values and whether it was a bare star. */
function field(expression: string, bounds: Bounds): { values: Set<number>; star: boolean } {
  const values = new Set<number>();
  let star = false;
  for (const part of expression.split(',')) {
    const [range = '', stepText, extra] = part.split('/');
    if (extra !== undefined) throw new CronSyntaxError(`too many slashes: ${part}`);
    let start: number;
    let end: number;
    let bare = false;
    if (range === '*' || range === '?') {
      [start, end, bare] = [bounds.min, bounds.max, true];
    } else {
      const [low = '', high, more] = range.split('-');
      if (more !== undefined) throw new CronSyntaxError(`too many hyphens: ${range}`);
      start = number(low, bounds);
      end =
        high === undefined ? (stepText === undefined ? start : bounds.max) : number(high, bounds);
    }
    const step = stepText === undefined ? 1 : number(stepText, bounds);
    if (step === 0) throw new CronSyntaxError(`step of range should be a positive number: ${part}`);
    if (start < bounds.min)
      throw new CronSyntaxError(
        `beginning of range (${start}) below minimum (${bounds.min}): ${part}`,
      );
    if (end > bounds.max)
      throw new CronSyntaxError(`end of range (${end}) above maximum (${bounds.max}): ${part}`);
    if (start > end)
      throw new CronSyntaxError(
        `beginning of range (${start}) beyond end of range (${end}): ${part}`,
      );
    for (let v = start; v <= end; v += step) values.add(v);
    if (bare && step === 1) star = true;
  }
  return { values, star };
}

/** Parses a standard schedule; throws CronSyntaxError. */
export function parseCronSchedule(schedule: string): CronSchedule {
  const text = schedule.trim();
  if (text === '') throw new CronSyntaxError('empty spec string');
  let expression = text;
  let zone: string | undefined;
  if (text.startsWith('TZ=') || text.startsWith('CRON_TZ=')) {
    const space = text.search(/\s/);
    zone = text.slice(text.indexOf('=') + 1, space < 0 ? undefined : space);
    if (!isKnownTimeZone(zone))
      throw new CronSyntaxError(`provided bad location ${zone}: unknown time zone ${zone}`);
    expression = space < 0 ? '' : text.slice(space).trim();
  }
  if (expression.startsWith('@')) {
    const known = descriptors[expression];
    if (known === undefined) throw new CronSyntaxError(`unrecognized descriptor: ${expression}`);
    expression = known;
  }
  const fields = expression === '' ? [] : expression.split(/\s+/);
  if (fields.length !== 5)
    throw new CronSyntaxError(
      `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`,
    );
  const [minute = '', hour = '', dom = '', month = '', dow = ''] = fields;
  const daysOfMonth = field(dom, { min: 1, max: 31 });
  const daysOfWeek = field(dow, { min: 0, max: 6, names: dayNames, nameBase: 0 });
  return {
    minutes: field(minute, { min: 0, max: 59 }).values,
    hours: field(hour, { min: 0, max: 23 }).values,
    daysOfMonth: daysOfMonth.values,
    months: field(month, { min: 1, max: 12, names: monthNames, nameBase: 1 }).values,
    daysOfWeek: daysOfWeek.values,
    dayStar: daysOfMonth.star || daysOfWeek.star,
    ...(zone === undefined ? {} : { zone }),
  };
}

/** Whether a time zone name is one the runtime knows (kube checks against its tzdata). */
export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

interface WallClock {
  month: number;
  day: number;
  weekday: number;
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallClock(instant: number, zone: string): WallClock {
  let format = formatters.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(zone, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(instant)) parts[part.type] = part.value;
  return {
    month: Number(parts['month']),
    day: Number(parts['day']),
    weekday: dayNames.indexOf((parts['weekday'] ?? '').toLowerCase()),
    hour: Number(parts['hour']),
    minute: Number(parts['minute']),
  };
}

const minuteMs = 60_000;

/**
 * The first scheduled minute strictly after `after` (ms since epoch), in `zone`; undefined when
 * none comes within five years (e.g. "0 0 30 2 *").
 */
export function nextScheduleTime(
  schedule: CronSchedule,
  after: number,
  zone = 'UTC',
): number | undefined {
  let t = Math.floor(after / minuteMs) * minuteMs + minuteMs;
  const limit = after + 5 * 366 * 24 * 60 * minuteMs;
  while (t <= limit) {
    const wall = wallClock(t, zone);
    const domMatch = schedule.daysOfMonth.has(wall.day);
    const dowMatch = schedule.daysOfWeek.has(wall.weekday);
    const dayMatch = schedule.dayStar ? domMatch && dowMatch : domMatch || dowMatch;
    if (!schedule.months.has(wall.month) || !dayMatch) {
      // On to 23:00 local, then hour by hour to midnight: a day shortened by a DST change
      // must not make the jump overshoot the next day's first hour.
      const toMidnight = (23 - wall.hour) * 60 + (60 - wall.minute);
      t += (toMidnight > 60 ? toMidnight - 60 : toMidnight) * minuteMs;
    } else if (!schedule.hours.has(wall.hour)) {
      t += (60 - wall.minute) * minuteMs;
    } else if (!schedule.minutes.has(wall.minute)) {
      t += minuteMs;
    } else return t;
  }
  return undefined;
}
