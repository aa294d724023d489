// Causes worded as apimachinery's field errors (field.Required, field.Invalid...): the message is
// the error's body ("Invalid value: \"x\": detail") and the field its path, as kube-apiserver
// puts them in Status.details.causes.
import type { StatusCause } from '../../../shared/kube/status.js';

/** A value printed as Go's `%#v` would print a struct kube validates as a whole. */
export interface GoSyntax {
  readonly goSyntax: string;
}

/** A bad value as kube prints it: strings quoted, numbers bare, string lists as `[]string{...}`. */
export type BadValue = string | number | boolean | null | readonly string[] | GoSyntax;

/** Go's %q of a string (JSON's escaping is the same for the text kube objects hold). */
export function goQuote(value: string): string {
  return JSON.stringify(value);
}

/** Go's %#v of a []string (nil when absent). */
export function goStrings(values: readonly string[] | undefined): GoSyntax {
  if (values === undefined) return { goSyntax: '[]string(nil)' };
  return { goSyntax: `[]string{${values.map(goQuote).join(', ')}}` };
}

function render(value: BadValue): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if ('goSyntax' in value) return value.goSyntax;
  return goStrings(value).goSyntax;
}

function withDetail(body: string, detail: string): string {
  return detail === '' ? body : `${body}: ${detail}`;
}

/** field.Required. */
export function required(field: string, detail = ''): StatusCause {
  return { type: 'FieldValueRequired', field, message: withDetail('Required value', detail) };
}

/** field.Invalid. */
export function invalid(field: string, value: BadValue, detail: string): StatusCause {
  return {
    type: 'FieldValueInvalid',
    field,
    message: withDetail(`Invalid value: ${render(value)}`, detail),
  };
}

/** field.NotSupported, the supported values quoted in the order given. */
export function notSupported(
  field: string,
  value: BadValue,
  supported: readonly string[],
): StatusCause {
  const detail =
    supported.length === 0 ? '' : `supported values: ${supported.map(goQuote).join(', ')}`;
  return {
    type: 'FieldValueNotSupported',
    field,
    message: withDetail(`Unsupported value: ${render(value)}`, detail),
  };
}

/** field.Duplicate. */
export function duplicate(field: string, value: BadValue): StatusCause {
  return { type: 'FieldValueDuplicate', field, message: `Duplicate value: ${render(value)}` };
}

/** field.NotFound. */
export function notFound(field: string, value: BadValue): StatusCause {
  return { type: 'FieldValueNotFound', field, message: `Not found: ${render(value)}` };
}

/** field.Forbidden. */
export function forbidden(field: string, detail: string): StatusCause {
  return { type: 'FieldValueForbidden', field, message: withDetail('Forbidden', detail) };
}

/** field.TooLong (1.30 wording). */
export function tooLong(field: string, maxBytes: number): StatusCause {
  return {
    type: 'FieldValueTooLong',
    field,
    message: `Too long: must have at most ${maxBytes} bytes`,
  };
}

/** One Invalid cause per message of an identifier check (kube's `for _, msg := range Is...`). */
export function invalidEach(
  field: string,
  value: BadValue,
  messages: readonly string[],
): StatusCause[] {
  return messages.map((message) => invalid(field, value, message));
}

/** Go's %#v of a map[string]string (keys sorted, as fmt prints maps). */
export function goStringMap(map: Readonly<Record<string, unknown>> | undefined): string {
  if (map === undefined) return 'map[string]string(nil)';
  const entries = Object.keys(map)
    .sort()
    .map((k) => `${goQuote(k)}:${goQuote(typeof map[k] === 'string' ? map[k] : '')}`);
  return `map[string]string{${entries.join(', ')}}`;
}
