// Turns our zod schemas into Kubernetes structural OpenAPI v3 schemas (CRD openAPIV3Schema).
// A small walker over zod v4 definitions: it knows exactly the constructs shared/api uses and
// refuses anything else, so a schema that cannot be expressed structurally fails generation
// instead of producing a CRD the API server would reject.
import { z } from 'zod';
import { SERVER_DEFAULT_KEY } from '../meta.js';

/** A JSON value, as CRD defaults hold them. */
export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The subset of apiextensions/v1 JSONSchemaProps that generated CRDs use. */
export interface OpenAPISchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  enum?: string[];
  default?: JsonValue;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  required?: string[];
  properties?: Record<string, OpenAPISchema>;
  additionalProperties?: OpenAPISchema;
  items?: OpenAPISchema;
  anyOf?: OpenAPISchema[];
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
}

/** A zod construct the walker cannot express as a structural schema, with where it was met. */
export class UnsupportedSchemaError extends Error {
  override readonly name = 'UnsupportedSchemaError';
  /** Path of the offending node, e.g. "spec.install.spec". */
  readonly path: string;

  constructor(path: string, detail: string) {
    super(`cannot express ${path === '' ? 'the root' : path} as a structural schema: ${detail}`);
    this.path = path;
  }
}

type AnySchema = z.core.$ZodType;

interface CheckDef {
  check: string;
  minimum?: number;
  maximum?: number;
  value?: number;
  inclusive?: boolean;
  format?: string;
  pattern?: RegExp;
}

const INTEGER_FORMATS = new Set(['safeint', 'int32', 'uint32', 'int64', 'uint64']);

/** The OpenAPI schema of a zod schema (a whole object kind, or any part of one). */
export function toOpenAPISchema(schema: AnySchema): OpenAPISchema {
  return walk(schema, '');
}

function descriptionOf(schema: AnySchema): string | undefined {
  const { description } = schema as { description?: unknown };
  return typeof description === 'string' ? description : undefined;
}

function checksOf(schema: AnySchema): CheckDef[] {
  const checks = (schema._zod.def as unknown as { checks?: AnySchema[] }).checks ?? [];
  return checks.map((check) => check._zod.def as unknown as CheckDef);
}

interface Unwrapped {
  inner: AnySchema;
  description?: string;
  default?: JsonValue;
  extensions: Pick<OpenAPISchema, 'x-kubernetes-list-type' | 'x-kubernetes-list-map-keys'>;
}

/** Copies list extensions from a schema's zod metadata; the outermost wrapper that sets one wins. */
function addExtensions(schema: AnySchema, into: Unwrapped['extensions']): void {
  const meta = z.globalRegistry.get(schema) as Record<string, unknown> | undefined;
  if (meta === undefined) return;
  const listType = meta['x-kubernetes-list-type'];
  if (
    into['x-kubernetes-list-type'] === undefined &&
    (listType === 'atomic' || listType === 'set' || listType === 'map')
  ) {
    into['x-kubernetes-list-type'] = listType;
  }
  const keys = meta['x-kubernetes-list-map-keys'];
  if (into['x-kubernetes-list-map-keys'] === undefined && Array.isArray(keys)) {
    into['x-kubernetes-list-map-keys'] = keys.map(String);
  }
}

/** A default only the API server applies, from zod metadata (meta.ts `serverDefault`). */
function serverDefaultOf(schema: AnySchema): JsonValue | undefined {
  const meta = z.globalRegistry.get(schema) as Record<string, unknown> | undefined;
  return meta?.[SERVER_DEFAULT_KEY] as JsonValue | undefined;
}

/** Strips optional/default wrappers, collecting description, default and list extensions. */
function unwrap(schema: AnySchema): Unwrapped {
  let current = schema;
  let description = descriptionOf(schema);
  let defaultValue: JsonValue | undefined = serverDefaultOf(schema);
  const extensions: Unwrapped['extensions'] = {};
  addExtensions(schema, extensions);
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: AnySchema; defaultValue?: unknown };
    if ((def.type === 'optional' || def.type === 'default') && def.innerType !== undefined) {
      if (def.type === 'default') defaultValue = def.defaultValue as JsonValue;
      current = def.innerType;
      description ??= descriptionOf(current);
      defaultValue ??= serverDefaultOf(current);
      addExtensions(current, extensions);
      continue;
    }
    break;
  }
  const out: Unwrapped = { inner: current, extensions };
  if (description !== undefined) out.description = description;
  if (defaultValue !== undefined) out.default = defaultValue;
  return out;
}

function isRequired(schema: AnySchema): boolean {
  const type = (schema._zod.def as { type: string }).type;
  return type !== 'optional' && type !== 'default';
}

function walk(schema: AnySchema, path: string): OpenAPISchema {
  const { inner, description, default: defaultValue, extensions } = unwrap(schema);
  const node = walkBare(inner, path);
  if (Object.keys(extensions).length > 0 && node.type !== 'array') {
    throw new UnsupportedSchemaError(path, 'list extensions on something that is not a list');
  }
  // Key order is fixed here (type first) so the YAML reads like controller-gen's output.
  const out: OpenAPISchema = {};
  if (description !== undefined) out.description = description;
  Object.assign(out, node);
  if (defaultValue !== undefined) out.default = defaultValue;
  Object.assign(out, extensions);
  return out;
}

function walkBare(schema: AnySchema, path: string): OpenAPISchema {
  const def = schema._zod.def as { type: string } & Record<string, unknown>;
  switch (def.type) {
    case 'string':
      return stringNode(schema, def.format as string | undefined);
    case 'number':
      return numberNode(schema, def.format as string | undefined, path);
    case 'boolean':
      return { type: 'boolean' };
    case 'enum':
      return enumNode(Object.values(def.entries as Record<string, unknown>), path);
    case 'literal':
      return enumNode(def.values as unknown[], path);
    case 'array':
      return arrayNode(schema, def.element as AnySchema, path);
    case 'object':
      return objectNode(
        def.shape as Record<string, AnySchema>,
        def.catchall as AnySchema | undefined,
        path,
      );
    case 'record':
      return recordNode(def.keyType as AnySchema, def.valueType as AnySchema, path);
    case 'union':
      return unionNode(def.options as AnySchema[], path);
    default:
      throw new UnsupportedSchemaError(path, `zod type "${def.type}" has no structural equivalent`);
  }
}

function stringNode(schema: AnySchema, format: string | undefined): OpenAPISchema {
  const out: OpenAPISchema = { type: 'string' };
  if (format === 'datetime') out.format = 'date-time';
  for (const check of checksOf(schema)) {
    if (check.check === 'min_length' && check.minimum !== undefined) out.minLength = check.minimum;
    if (check.check === 'max_length' && check.maximum !== undefined) out.maxLength = check.maximum;
    if (
      check.check === 'string_format' &&
      check.format === 'regex' &&
      check.pattern !== undefined
    ) {
      // JavaScript escapes "/" in a RegExp source; Kubernetes patterns are RE2 and need no escape.
      out.pattern = check.pattern.source.replaceAll('\\/', '/');
    }
  }
  return out;
}

function numberNode(schema: AnySchema, format: string | undefined, path: string): OpenAPISchema {
  const checks = checksOf(schema);
  const formats = [format, ...checks.map((check) => check.format)];
  const integer = formats.some((f) => f !== undefined && INTEGER_FORMATS.has(f));
  const out: OpenAPISchema = { type: integer ? 'integer' : 'number' };
  if (formats.includes('int32')) out.format = 'int32';
  else if (formats.includes('int64')) out.format = 'int64';
  for (const check of checks) {
    // Exclusive bounds do not occur in our schemas; treat them as errors rather than guess.
    if (check.check === 'greater_than' && check.value !== undefined) {
      if (check.inclusive !== true) throw new UnsupportedSchemaError(path, 'exclusive minimum');
      out.minimum = check.value;
    }
    if (check.check === 'less_than' && check.value !== undefined) {
      if (check.inclusive !== true) throw new UnsupportedSchemaError(path, 'exclusive maximum');
      out.maximum = check.value;
    }
  }
  return out;
}

function enumNode(values: unknown[], path: string): OpenAPISchema {
  const strings = values.filter((value): value is string => typeof value === 'string');
  if (strings.length !== values.length)
    throw new UnsupportedSchemaError(path, 'non-string enum value');
  return { type: 'string', enum: strings };
}

function arrayNode(schema: AnySchema, element: AnySchema, path: string): OpenAPISchema {
  const out: OpenAPISchema = { type: 'array' };
  for (const check of checksOf(schema)) {
    if (check.check === 'min_length' && check.minimum !== undefined) out.minItems = check.minimum;
    if (check.check === 'max_length' && check.maximum !== undefined) out.maxItems = check.maximum;
  }
  out.items = walk(element, `${path}[]`);
  return out;
}

function objectNode(
  shape: Record<string, AnySchema>,
  catchall: AnySchema | undefined,
  path: string,
): OpenAPISchema {
  const out: OpenAPISchema = { type: 'object' };
  const keys = Object.keys(shape).sort();
  const required = keys.filter((key) => isRequired(shape[key] as AnySchema));
  if (required.length > 0) out.required = required;
  if (keys.length > 0) {
    out.properties = {};
    for (const key of keys) {
      out.properties[key] = walk(shape[key] as AnySchema, path === '' ? key : `${path}.${key}`);
    }
  }
  if (catchall !== undefined) {
    const kind = (catchall._zod.def as { type: string }).type;
    if (kind !== 'unknown')
      throw new UnsupportedSchemaError(path, `object catchall of type "${kind}"`);
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  return out;
}

function recordNode(keyType: AnySchema, valueType: AnySchema, path: string): OpenAPISchema {
  if ((keyType._zod.def as { type: string }).type !== 'string') {
    throw new UnsupportedSchemaError(path, 'record keys must be strings');
  }
  const valueKind = (valueType._zod.def as { type: string }).type;
  // A record of unknown values is how meta.ts spells "an embedded type we do not model".
  if (valueKind === 'unknown')
    return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return { type: 'object', additionalProperties: walk(valueType, `${path}[*]`) };
}

function unionNode(options: AnySchema[], path: string): OpenAPISchema {
  const kinds = options.map((option) => walkBare(unwrap(option).inner, path).type).sort();
  if (kinds.length === 2 && kinds[0] === 'integer' && kinds[1] === 'string') {
    return { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true };
  }
  throw new UnsupportedSchemaError(
    path,
    `union of ${kinds.join(', ')} (only int-or-string is structural)`,
  );
}
