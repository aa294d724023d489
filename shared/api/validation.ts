// One entry point to validate an object against its schema, with errors shaped like the
// Kubernetes API server's: every bad field named by its path ("spec.installModes[0].type"),
// and a mapping onto Status.details.causes[] for responses.
import type { z } from 'zod';

/** Kubernetes StatusCause types (metav1.CauseType) that validation produces. */
export type CauseType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueTypeInvalid'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany';

/** One invalid field: Kubernetes path, cause type and a message in the API server's style. */
export interface FieldIssue {
  /** Path as Kubernetes prints it, e.g. "spec.installModes[0].type". */
  field: string;
  /** Kind of problem, as a Kubernetes StatusCause type. */
  type: CauseType;
  /** What is wrong, e.g. `Unsupported value: "Bogus": supported values: "Pending", ...`. */
  message: string;
}

/** A Kubernetes StatusCause (Status.details.causes[]). */
export interface StatusCause {
  type: CauseType;
  field: string;
  message: string;
}

/** An object failed validation; `issues` name every bad field. Retrying the same object cannot help. */
export class ObjectValidationError extends Error {
  override readonly name = 'ObjectValidationError';
  /** What was validated, e.g. `ClusterServiceVersion "etcd.v0.9.4"`. */
  readonly what: string;
  /** Every invalid field, in path order. */
  readonly issues: readonly FieldIssue[];

  constructor(what: string, issues: readonly FieldIssue[], options?: { cause?: unknown }) {
    const details = issues.map((issue) => `${issue.field}: ${issue.message}`);
    const list = details.length === 1 ? (details[0] ?? '') : `[${details.join(', ')}]`;
    super(`${what} is invalid: ${list}`, options);
    this.what = what;
    this.issues = issues;
  }
}

/**
 * Validates `value` against `schema` and returns the typed result (defaults applied, unknown
 * fields dropped as the API server prunes them). `what` names the object in the error message.
 * Throws ObjectValidationError naming every invalid field.
 */
export function parseObject<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
): z.output<S> {
  // The API server prunes nulls in fields that are not nullable before validating, so a manifest
  // with `resources: null` is accepted there; none of our fields is nullable.
  const input = withoutNulls(value);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues
    .map((issue) => toFieldIssue(issue, input, schema))
    .sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  throw new ObjectValidationError(what, issues, { cause: result.error });
}

/** The Status.details.causes[] of a validation error. */
export function statusCauses(error: ObjectValidationError): StatusCause[] {
  return error.issues.map((issue) => ({
    type: issue.type,
    field: issue.field,
    message: issue.message,
  }));
}

/**
 * Formats a path the way Kubernetes field.Path does: struct fields joined by dots, list indexes
 * and map keys in brackets (`spec.installModes[0].type`, `metadata.labels[olm.managed]`). With
 * the schema, map keys are told from fields exactly; without it, keys that are not identifiers
 * are taken for map keys.
 */
export function formatFieldPath(path: readonly PropertyKey[], schema?: z.core.$ZodType): string {
  let out = '';
  let current = schema === undefined ? undefined : bare(schema);
  for (const segment of path) {
    const def = current?._zod.def as unknown as PathDef | undefined;
    if (typeof segment === 'number') {
      out += `[${segment}]`;
      current = def?.type === 'array' && def.element !== undefined ? bare(def.element) : undefined;
      continue;
    }
    const key = String(segment);
    const mapKey =
      def === undefined ? !/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) : def.type === 'record';
    if (mapKey) out += `[${key}]`;
    else out += out === '' ? key : `.${key}`;
    const next = def?.type === 'record' ? def.valueType : def?.shape?.[key];
    current = next === undefined ? undefined : bare(next);
  }
  return out === '' ? '<root>' : out;
}

interface PathDef {
  type: string;
  innerType?: z.core.$ZodType;
  element?: z.core.$ZodType;
  shape?: Record<string, z.core.$ZodType>;
  valueType?: z.core.$ZodType;
}

/** The schema under optional/default wrappers. */
function bare(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (;;) {
    const def = current._zod.def as unknown as PathDef;
    if ((def.type === 'optional' || def.type === 'default') && def.innerType !== undefined) {
      current = def.innerType;
    } else {
      return current;
    }
  }
}

/** Returns a copy of a JSON value with null object members removed (arrays keep their length). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutNulls(item));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== null) out[key] = withoutNulls(item);
    }
    return out;
  }
  return value;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let current: unknown = root;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return { found: false, value: undefined };
    const record = current as Record<PropertyKey, unknown>;
    if (!(segment in record)) return { found: false, value: undefined };
    current = record[segment];
  }
  return { found: current !== undefined, value: current };
}

function jsonTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function shortValue(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : jsonTypeName(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function toFieldIssue(issue: z.core.$ZodIssue, input: unknown, schema: z.ZodType): FieldIssue {
  const field = formatFieldPath(issue.path, schema);
  const at = valueAt(input, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (!at.found) return { field, type: 'FieldValueRequired', message: 'Required value' };
      return {
        field,
        type: 'FieldValueTypeInvalid',
        message: `Invalid value: ${shortValue(at.value)}: must be of type ${issue.expected}`,
      };
    case 'invalid_value': {
      const supported = issue.values.map((v) => JSON.stringify(v)).join(', ');
      return {
        field,
        type: 'FieldValueNotSupported',
        message: `Unsupported value: ${shortValue(at.value)}: supported values: ${supported}`,
      };
    }
    case 'too_big':
      if (issue.origin === 'string') {
        return {
          field,
          type: 'FieldValueTooLong',
          message: `Too long: may not be more than ${String(issue.maximum)} bytes`,
        };
      }
      if (issue.origin === 'array') {
        return {
          field,
          type: 'FieldValueTooMany',
          message: `Too many: must have at most ${String(issue.maximum)} items`,
        };
      }
      return {
        field,
        type: 'FieldValueInvalid',
        message: `Invalid value: ${shortValue(at.value)}: ${issue.message}`,
      };
    default:
      return {
        field,
        type: 'FieldValueInvalid',
        message: `Invalid value: ${shortValue(at.value)}: ${issue.message}`,
      };
  }
}
