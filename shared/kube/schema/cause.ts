// Builders of Kubernetes StatusCauses worded as apimachinery's field.Error renders them
// (`ErrorBody`: "<type>: <value>: <detail>"), plus field-path composition in Kubernetes' notation.
import type { JsonValue } from '../json.js';
import type { FieldCause } from './types.js';

/** The path kube prints for an error without a field (a nil *field.Path). */
export const NO_FIELD = '<nil>';

/** `parent.name`, or `name` at the root. */
export function childPath(parent: string, name: string): string {
  return parent === '' ? name : `${parent}.${name}`;
}

/** `parent[key]`: a map key in a schema path, e.g. `properties[spec]`. */
export function keyPath(parent: string, key: string): string {
  return `${parent}[${key}]`;
}

/** `parent[i]`: a list index. */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/**
 * Formats a float as Go's `%v` does (strconv 'g' with the shortest representation): exponent
 * form below 1e-4 and from 1e21 on, with at least two exponent digits.
 */
function goFloat(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  if (n === 0) return '0';
  const exponent = Math.floor(Math.log10(Math.abs(n)));
  if (exponent < -4 || exponent >= 21) {
    const [mantissa = '', exp = '0'] = n.toExponential().split('e');
    const sign = exp.startsWith('-') ? '-' : '+';
    const digits = exp.replace(/^[+-]/, '').padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(n);
}

/** A number as kube prints it: integers as int64, others as float64. */
export function goNumber(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 1e21 ? n.toFixed(0) : goFloat(n);
}

/** Go's `%#v` of a decoded JSON value (map[string]interface {}, []interface {}, ...). */
export function goSyntax(value: JsonValue): string {
  if (value === null) return 'interface {}(nil)';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSyntax).join(', ')}}`;
  const entries = Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${goSyntax(value[k] ?? null)}`);
  return `map[string]interface {}{${entries.join(', ')}}`;
}

/** Renders a bad value the way field.Error.ErrorBody does. */
export function renderValue(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return '"null"';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  return goSyntax(value);
}

function withDetail(body: string, detail: string): string {
  return detail === '' ? body : `${body}: ${detail}`;
}

/** field.Required. */
export function required(field: string, detail = ''): FieldCause {
  return { type: 'FieldValueRequired', field, message: withDetail('Required value', detail) };
}

/** field.Invalid. */
export function invalid(field: string, value: JsonValue | undefined, detail: string): FieldCause {
  return {
    type: 'FieldValueInvalid',
    field,
    message: withDetail(`Invalid value: ${renderValue(value)}`, detail),
  };
}

/** A value printed as Go prints a typed slice, e.g. []string{"a", "b"}. */
export function goStringSlice(values: readonly string[]): { readonly goSyntax: string } {
  return { goSyntax: `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}` };
}

/** field.Invalid for a bad value already rendered in Go syntax (typed values kube prints with %#v). */
export function invalidTyped(
  field: string,
  value: { readonly goSyntax: string },
  detail: string,
): FieldCause {
  return {
    type: 'FieldValueInvalid',
    field,
    message: withDetail(`Invalid value: ${value.goSyntax}`, detail),
  };
}

/** field.TypeInvalid (printed as "Invalid value" too). */
export function typeInvalid(field: string, value: JsonValue, detail: string): FieldCause {
  return {
    type: 'FieldValueTypeInvalid',
    field,
    message: withDetail(`Invalid value: ${renderValue(value)}`, detail),
  };
}

/** field.NotSupported: lists the supported values, each quoted. */
export function notSupported(
  field: string,
  value: JsonValue | undefined,
  supported: readonly string[],
): FieldCause {
  const detail =
    supported.length > 0
      ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`
      : '';
  return {
    type: 'FieldValueNotSupported',
    field,
    message: withDetail(`Unsupported value: ${renderValue(value)}`, detail),
  };
}

/** field.Forbidden. */
export function forbidden(field: string, detail: string): FieldCause {
  return { type: 'FieldValueForbidden', field, message: withDetail('Forbidden', detail) };
}

/** field.Duplicate. */
export function duplicate(field: string, value: JsonValue): FieldCause {
  return { type: 'FieldValueDuplicate', field, message: `Duplicate value: ${renderValue(value)}` };
}

/** field.TooLongMaxLength: the value itself is not printed. */
export function tooLong(field: string, maxLength: number): FieldCause {
  const detail = maxLength >= 0 ? `may not be longer than ${maxLength}` : 'value is too long';
  return { type: 'FieldValueTooLong', field, message: `Too long: ${detail}` };
}

/** field.TooMany. */
export function tooMany(field: string, actual: number, max: number): FieldCause {
  const detail = max >= 0 ? `must have at most ${max} items` : 'has too many items';
  return { type: 'FieldValueTooMany', field, message: `Too many: ${actual}: ${detail}` };
}

/** The line kube prints for one cause in a Status message: "<field>: <message>". */
export function formatCause(cause: FieldCause): string {
  return `${cause.field}: ${cause.message}`;
}

/** Sorts causes as kube sorts structural-schema errors: by their printed line. */
export function sortCauses(causes: FieldCause[]): FieldCause[] {
  return causes.sort((a, b) => {
    const x = formatCause(a);
    const y = formatCause(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
