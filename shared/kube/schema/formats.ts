// String formats kube-apiserver checks on custom objects (the go-openapi strfmt registry, as
// narrowed by apiextensions' supported-format list). Unknown formats are ignored, as in kube.
// strfmt.IsDateTime: a full date, "T", and a time with seconds and a zone.
const dateTimeRe =
  /^(\d{4}-\d{2}-\d{2})[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const dateRe = /^(\d{4})-(\d{2})-(\d{2})$/;
const base64Re = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const uuidRe = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid3Re = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid4Re = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const uuid5Re = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const ipv4Re = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const macRe = /^([0-9a-f]{2}([:-]))([0-9a-f]{2}\2){4}[0-9a-f]{2}$|^([0-9a-f]{4}\.){2}[0-9a-f]{4}$/i;
const hostnameRe =
  /^[a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)(\.[a-zA-Z0-9\p{S}\p{L}](-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)*\.?$/u;
const emailRe = /^[^\s@<>]+@[^\s@<>]+$/;
const durationRe =
  /^(\s*[+-]?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)\s*)+$/;
const quantityRe = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[munkMGTPE])?$/;
const bsonObjectIdRe = /^[0-9a-f]{24}$/i;
const hexColorRe = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const rgbColorRe = /^rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)$/;
const ssnRe = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const shortNameRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const longNameRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isIPv6(value: string): boolean {
  if (!value.includes(':') || /[^0-9a-fA-F:.]/.test(value)) return false;
  const doubleColons = value.split('::').length - 1;
  if (doubleColons > 1) return false;
  let groups = value.split(':');
  const last = groups[groups.length - 1] ?? '';
  let expected = 8;
  if (last.includes('.')) {
    if (!ipv4Re.test(last)) return false;
    groups = groups.slice(0, -1);
    expected = 6;
  }
  const filled = groups.filter((g) => g !== '');
  if (!filled.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  return doubleColons === 1 ? filled.length < expected : filled.length === expected;
}

function isCIDR(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const ip = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const n = Number(bits);
  if (ipv4Re.test(ip)) return n <= 32;
  return isIPv6(ip) && n <= 128;
}

function isURI(value: string): boolean {
  // Go's url.ParseRequestURI: an absolute URI or an absolute path.
  if (value.startsWith('/')) return !/\s/.test(value);
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** A calendar date as Go's time.Parse("2006-01-02") accepts it. */
function isDate(value: string): boolean {
  const m = dateRe.exec(value);
  if (m === null) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}

function isDateTime(value: string): boolean {
  const m = dateTimeRe.exec(value);
  return m !== null && isDate(m[1] ?? '');
}

const checks: ReadonlyMap<string, (value: string) => boolean> = new Map<
  string,
  (value: string) => boolean
>([
  ['datetime', isDateTime],
  ['date', isDate],
  ['byte', (v) => base64Re.test(v)],
  ['uuid', (v) => uuidRe.test(v)],
  ['uuid3', (v) => uuid3Re.test(v)],
  ['uuid4', (v) => uuid4Re.test(v)],
  ['uuid5', (v) => uuid5Re.test(v)],
  ['ipv4', (v) => ipv4Re.test(v)],
  ['ipv6', isIPv6],
  ['cidr', isCIDR],
  ['mac', (v) => macRe.test(v)],
  ['hostname', (v) => v.length <= 255 && hostnameRe.test(v)],
  ['email', (v) => emailRe.test(v)],
  ['uri', isURI],
  ['duration', (v) => durationRe.test(v)],
  ['quantity', (v) => quantityRe.test(v)],
  ['bsonobjectid', (v) => bsonObjectIdRe.test(v)],
  ['hexcolor', (v) => hexColorRe.test(v)],
  ['rgbcolor', (v) => rgbColorRe.test(v)],
  ['ssn', (v) => ssnRe.test(v)],
  ['k8sshortname', (v) => v.length <= 63 && shortNameRe.test(v)],
  ['k8slongname', (v) => v.length <= 253 && longNameRe.test(v)],
]);

/**
 * Whether a string satisfies a format. Format names are normalized as go-openapi does
 * ("date-time" is "datetime"); formats kube does not check always pass.
 */
export function satisfiesFormat(format: string, value: string): boolean {
  const check = checks.get(format.replaceAll('-', ''));
  return check === undefined ? true : check(value);
}
