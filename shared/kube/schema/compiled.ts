// One openAPIV3Schema compiled once into the shape validation, defaulting and pruning walk.
// Compilation is cached per schema object, so every write of a custom object reuses it.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject, jsonEqual } from '../json.js';

export { jsonEqual };

/** A schema node with its keywords read and typed once. */
export interface SchemaNode {
  /** Accepted JSON types; int-or-string widens it to integer and string as kube does. */
  readonly types: readonly string[] | undefined;
  readonly nullable: boolean;
  readonly format: string | undefined;
  readonly properties: ReadonlyMap<string, SchemaNode> | undefined;
  readonly required: readonly string[];
  /** A schema for other keys, `true` (anything, no schema) or `false` (none allowed). */
  readonly additionalProperties: SchemaNode | boolean | undefined;
  readonly items: SchemaNode | undefined;
  readonly enumValues: readonly JsonValue[] | undefined;
  readonly pattern: { readonly source: string; readonly regex: RegExp | undefined } | undefined;
  readonly minimum: number | undefined;
  readonly maximum: number | undefined;
  readonly exclusiveMinimum: boolean;
  readonly exclusiveMaximum: boolean;
  readonly multipleOf: number | undefined;
  readonly minLength: number | undefined;
  readonly maxLength: number | undefined;
  readonly minItems: number | undefined;
  readonly maxItems: number | undefined;
  readonly uniqueItems: boolean;
  readonly minProperties: number | undefined;
  readonly maxProperties: number | undefined;
  readonly allOf: readonly SchemaNode[];
  readonly anyOf: readonly SchemaNode[];
  readonly oneOf: readonly SchemaNode[];
  readonly not: SchemaNode | undefined;
  readonly preserveUnknownFields: boolean;
  readonly embeddedResource: boolean;
  readonly listType: string | undefined;
  readonly listMapKeys: readonly string[];
  /** Whether list-type or embedded-resource checks apply here or anywhere below. */
  readonly hasStructureChecks: boolean;
  /** Present only when the schema declares `default`. */
  readonly defaultValue: { readonly value: JsonValue } | undefined;
}

const compiledSchemas = new WeakMap<JsonObject, SchemaNode>();
const compiledPatterns = new Map<string, RegExp | undefined>();

/**
 * Rewrites RE2-only syntax into ECMAScript: named groups (?P<n>..), \A and \z, and inline
 * flags ((?i) anywhere, (?i:..)), which ECMAScript (Node 20) lacks; their flags are applied to
 * the whole pattern, a slight widening kept only for such patterns.
 */
function translateGoPattern(source: string): { body: string; flags: string } {
  const flags = new Set<string>();
  const body = source
    .replace(/(?<!\\)\(\?P</g, '(?<')
    .replace(/(?<!\\)\\A/g, '^')
    .replace(/(?<!\\)\\z/g, '$')
    .replace(/(?<!\\)\(\?([imsU]+)(\)|:)/g, (_match, found: string, end: string) => {
      for (const flag of found) if (flag !== 'U') flags.add(flag);
      return end === ':' ? '(?:' : '';
    });
  return { body, flags: [...flags].join('') };
}

/**
 * Compiles a Go RE2 pattern into an ECMAScript RegExp, once per distinct source: unicode mode
 * first (for \p{..}), then legacy mode. Undefined when neither compiles.
 */
export function compilePattern(source: string): RegExp | undefined {
  if (compiledPatterns.has(source)) return compiledPatterns.get(source);
  const { body, flags } = translateGoPattern(source);
  let regex: RegExp | undefined;
  for (const mode of ['u', '']) {
    try {
      regex = new RegExp(body, flags + mode);
      break;
    } catch {
      regex = undefined;
    }
  }
  compiledPatterns.set(source, regex);
  return regex;
}

function numberOf(value: JsonValue | undefined): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function nodeList(value: JsonValue | undefined): SchemaNode[] {
  return Array.isArray(value) ? value.filter(isJsonObject).map(compileSchema) : [];
}

/** The compiled form of `schema` (cached by object identity). */
export function compileSchema(schema: JsonObject): SchemaNode {
  const cached = compiledSchemas.get(schema);
  if (cached !== undefined) return cached;

  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  let types: string[] | undefined;
  if (intOrString) types = ['integer', 'string'];
  else if (typeof schema.type === 'string' && schema.type !== '') types = [schema.type];

  let properties: Map<string, SchemaNode> | undefined;
  const rawProperties = schema.properties;
  if (isJsonObject(rawProperties)) {
    properties = new Map();
    for (const [key, sub] of Object.entries(rawProperties)) {
      if (isJsonObject(sub)) properties.set(key, compileSchema(sub));
    }
  }

  let additionalProperties: SchemaNode | boolean | undefined;
  const rawAdditional = schema.additionalProperties;
  if (typeof rawAdditional === 'boolean') additionalProperties = rawAdditional;
  else if (isJsonObject(rawAdditional)) additionalProperties = compileSchema(rawAdditional);

  const pattern =
    typeof schema.pattern === 'string' && schema.pattern !== ''
      ? { source: schema.pattern, regex: compilePattern(schema.pattern) }
      : undefined;

  const items = isJsonObject(schema.items) ? compileSchema(schema.items) : undefined;
  const listType =
    typeof schema['x-kubernetes-list-type'] === 'string'
      ? schema['x-kubernetes-list-type']
      : undefined;
  const embeddedResource = schema['x-kubernetes-embedded-resource'] === true;
  const children = [...(properties?.values() ?? [])];
  if (items !== undefined) children.push(items);
  if (typeof additionalProperties === 'object') children.push(additionalProperties);
  const hasStructureChecks =
    listType === 'set' ||
    listType === 'map' ||
    embeddedResource ||
    children.some((c) => c.hasStructureChecks);

  const node: SchemaNode = {
    types,
    nullable: schema.nullable === true,
    format: typeof schema.format === 'string' && schema.format !== '' ? schema.format : undefined,
    properties,
    required: Array.isArray(schema.required)
      ? schema.required.filter((r): r is string => typeof r === 'string')
      : [],
    additionalProperties,
    items,
    enumValues: Array.isArray(schema.enum) ? schema.enum : undefined,
    pattern,
    minimum: numberOf(schema.minimum),
    maximum: numberOf(schema.maximum),
    exclusiveMinimum: schema.exclusiveMinimum === true,
    exclusiveMaximum: schema.exclusiveMaximum === true,
    multipleOf: numberOf(schema.multipleOf),
    minLength: numberOf(schema.minLength),
    maxLength: numberOf(schema.maxLength),
    minItems: numberOf(schema.minItems),
    maxItems: numberOf(schema.maxItems),
    uniqueItems: schema.uniqueItems === true,
    minProperties: numberOf(schema.minProperties),
    maxProperties: numberOf(schema.maxProperties),
    allOf: nodeList(schema.allOf),
    anyOf: nodeList(schema.anyOf),
    oneOf: nodeList(schema.oneOf),
    not: isJsonObject(schema.not) ? compileSchema(schema.not) : undefined,
    preserveUnknownFields: schema['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource,
    listType,
    listMapKeys: Array.isArray(schema['x-kubernetes-list-map-keys'])
      ? schema['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string')
      : [],
    hasStructureChecks,
    defaultValue: 'default' in schema ? { value: schema.default ?? null } : undefined,
  };
  compiledSchemas.set(schema, node);
  return node;
}
