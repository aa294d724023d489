// Validation of a custom object against its compiled schema, with kube-apiserver's semantics and
// wording: the kube-openapi validators (type, allOf/anyOf/oneOf/not, string, format, number,
// array, enum, object, in that order), then the list-type and embedded-resource checks that kube
// runs over the structural part of the schema.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import type { FieldCause } from './types.js';
import type { SchemaNode } from './compiled.js';
import { jsonEqual } from './compiled.js';
import {
  NO_FIELD,
  childPath,
  duplicate,
  goNumber,
  indexPath,
  invalid,
  notSupported,
  required,
  tooLong,
  tooMany,
  typeInvalid,
} from './cause.js';
import { satisfiesFormat } from './formats.js';

/** The JSON type name kube-openapi infers for a decoded value. */
export function jsonKind(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  return Array.isArray(value) ? 'array' : 'object';
}

/** Where errors land: `root` is the field of the validated value itself. */
interface Sink {
  readonly root: string;
  readonly out: FieldCause[];
}

/** kube prefixes the openapi name (e.g. "spec.replicas") with the field path of the root. */
function fieldOf(sink: Sink, name: string): string {
  if (name === '') return sink.root;
  return sink.root === NO_FIELD ? name : `${sink.root}.${name}`;
}

function inBody(name: string, rest: string): string {
  return `${name} in body ${rest}`;
}

function validateType(node: SchemaNode, value: JsonValue, name: string, sink: Sink): void {
  const types = node.types;
  if (types === undefined) return;
  if (value === null) {
    if (!node.nullable) {
      sink.out.push(
        typeInvalid(
          fieldOf(sink, name),
          'null',
          inBody(name, `must be of type ${types.join(',')}: "null"`),
        ),
      );
    }
    return;
  }
  const kind = jsonKind(value);
  if (types.includes(kind) || (kind === 'integer' && types.includes('number'))) return;
  sink.out.push(
    typeInvalid(
      fieldOf(sink, name),
      kind,
      inBody(name, `must be of type ${types.join(',')}: "${kind}"`),
    ),
  );
}

function validateEach(
  nodes: readonly SchemaNode[],
  value: JsonValue,
  name: string,
  root: string,
): FieldCause[][] {
  return nodes.map((sub) => {
    const out: FieldCause[] = [];
    validateNode(sub, value, name, { root, out });
    return out;
  });
}

function fewestErrors(results: FieldCause[][]): FieldCause[] {
  let best: FieldCause[] | undefined;
  for (const r of results)
    if (r.length > 0 && (best === undefined || r.length < best.length)) best = r;
  return best ?? [];
}

function validateComposition(node: SchemaNode, value: JsonValue, name: string, sink: Sink): void {
  const quoted = JSON.stringify(name);
  if (node.anyOf.length > 0) {
    const results = validateEach(node.anyOf, value, name, sink.root);
    if (!results.some((r) => r.length === 0)) {
      sink.out.push(invalid(sink.root, '', `${quoted} must validate at least one schema (anyOf)`));
      sink.out.push(...fewestErrors(results));
    }
  }
  if (node.oneOf.length > 0) {
    const results = validateEach(node.oneOf, value, name, sink.root);
    const valid = results.filter((r) => r.length === 0).length;
    if (valid !== 1) {
      const found = valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`;
      sink.out.push(
        invalid(sink.root, '', `${quoted} must validate one and only one schema (oneOf). ${found}`),
      );
      if (valid === 0) sink.out.push(...fewestErrors(results));
    }
  }
  if (node.allOf.length > 0) {
    const results = validateEach(node.allOf, value, name, sink.root);
    const valid = results.filter((r) => r.length === 0).length;
    for (const r of results) sink.out.push(...r);
    if (valid !== results.length) {
      const none = valid === 0 ? '. None validated' : '';
      sink.out.push(
        invalid(sink.root, '', `${quoted} must validate all the schemas (allOf)${none}`),
      );
    }
  }
  if (node.not !== undefined) {
    const [result = []] = validateEach([node.not], value, name, sink.root);
    if (result.length === 0)
      sink.out.push(invalid(sink.root, '', `${quoted} must not validate the schema (not)`));
  }
}

function validateString(node: SchemaNode, value: string, name: string, sink: Sink): void {
  const field = fieldOf(sink, name);
  if (node.maxLength !== undefined || node.minLength !== undefined) {
    const length = [...value].length;
    if (node.maxLength !== undefined && length > node.maxLength)
      sink.out.push(tooLong(field, node.maxLength));
    if (node.minLength !== undefined && length < node.minLength) {
      sink.out.push(
        invalid(field, value, inBody(name, `should be at least ${node.minLength} chars long`)),
      );
    }
  }
  const pattern = node.pattern;
  if (pattern?.regex !== undefined && !pattern.regex.test(value)) {
    sink.out.push(invalid(field, value, inBody(name, `should match '${pattern.source}'`)));
  }
  // kube strips formats on schemas typed other than string before validating.
  const typed = node.types === undefined || (node.types.length === 1 && node.types[0] === 'string');
  if (node.format !== undefined && typed && !satisfiesFormat(node.format, value)) {
    sink.out.push(
      typeInvalid(
        field,
        value,
        inBody(name, `must be of type ${node.format}: ${JSON.stringify(value)}`),
      ),
    );
  }
}

function isMultipleOf(value: number, factor: number): boolean {
  if (factor <= 0) return true;
  const quotient = value / factor;
  return Math.abs(quotient - Math.round(quotient)) < 1e-9 * Math.max(1, Math.abs(quotient));
}

function validateNumber(node: SchemaNode, value: number, name: string, sink: Sink): void {
  const field = fieldOf(sink, name);
  if (node.multipleOf !== undefined && !isMultipleOf(value, node.multipleOf)) {
    sink.out.push(
      invalid(field, value, inBody(name, `should be a multiple of ${goNumber(node.multipleOf)}`)),
    );
  }
  if (node.maximum !== undefined) {
    const max = node.maximum;
    if (node.exclusiveMaximum ? value >= max : value > max) {
      const rel = node.exclusiveMaximum ? 'less than' : 'less than or equal to';
      sink.out.push(invalid(field, value, inBody(name, `should be ${rel} ${goNumber(max)}`)));
    }
  }
  if (node.minimum !== undefined) {
    const min = node.minimum;
    if (node.exclusiveMinimum ? value <= min : value < min) {
      const rel = node.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      sink.out.push(invalid(field, value, inBody(name, `should be ${rel} ${goNumber(min)}`)));
    }
  }
}

/** Stable text of a value for duplicate detection (object keys sorted). */
function canonical(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k] ?? null)}`).join(',')}}`;
}

function validateArray(node: SchemaNode, value: JsonValue[], name: string, sink: Sink): void {
  if (node.items !== undefined) {
    for (let i = 0; i < value.length; i++)
      validateNode(node.items, value[i] ?? null, `${name}[${i}]`, sink);
  }
  const field = fieldOf(sink, name);
  if (node.minItems !== undefined && value.length < node.minItems) {
    sink.out.push(
      invalid(field, value.length, inBody(name, `should have at least ${node.minItems} items`)),
    );
  }
  if (node.maxItems !== undefined && value.length > node.maxItems) {
    sink.out.push(tooMany(field, value.length, node.maxItems));
  }
  if (node.uniqueItems && new Set(value.map(canonical)).size !== value.length) {
    sink.out.push(invalid(field, '', inBody(name, "shouldn't contain duplicates")));
  }
}

function enumText(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function validateObject(node: SchemaNode, value: JsonObject, name: string, sink: Sink): void {
  const field = fieldOf(sink, name);
  const keys = Object.keys(value);
  if (node.maxProperties !== undefined && keys.length > node.maxProperties) {
    sink.out.push(tooMany(field, keys.length, node.maxProperties));
  }
  if (node.minProperties !== undefined && keys.length < node.minProperties) {
    sink.out.push(
      invalid(
        field,
        node.minProperties,
        inBody(name, `should have at least ${node.minProperties} properties`),
      ),
    );
  }
  const additional = node.additionalProperties;
  if (additional === false) {
    for (const key of keys) {
      if (node.properties?.has(key) !== true) {
        sink.out.push(invalid(field, key, `${name}.${key} in body is a forbidden property`));
      }
    }
  }
  for (const key of node.required) {
    if (!(key in value)) sink.out.push(required(fieldOf(sink, childPath(name, key))));
  }
  for (const key of keys) {
    const sub =
      node.properties?.get(key) ?? (typeof additional === 'object' ? additional : undefined);
    if (sub !== undefined) validateNode(sub, value[key] ?? null, childPath(name, key), sink);
  }
}

/** Runs the kube-openapi validators of one schema node over `value` named `name`. */
function validateNode(node: SchemaNode, value: JsonValue, name: string, sink: Sink): void {
  validateType(node, value, name, sink);
  if (value === null) {
    if (node.enumValues !== undefined && !node.enumValues.some((e) => e === null)) {
      sink.out.push(notSupported(fieldOf(sink, name), null, node.enumValues.map(enumText)));
    }
    return;
  }
  validateComposition(node, value, name, sink);
  if (typeof value === 'string') validateString(node, value, name, sink);
  else if (typeof value === 'number') validateNumber(node, value, name, sink);
  else if (Array.isArray(value)) validateArray(node, value, name, sink);
  if (node.enumValues !== undefined && !node.enumValues.some((e) => jsonEqual(e, value))) {
    sink.out.push(notSupported(fieldOf(sink, name), value, node.enumValues.map(enumText)));
  }
  if (isJsonObject(value)) validateObject(node, value, name, sink);
}

function listMapKey(node: SchemaNode, item: JsonObject): JsonObject {
  const key: JsonObject = {};
  for (const k of node.listMapKeys) {
    const present = item[k];
    key[k] =
      present !== undefined
        ? present
        : (node.items?.properties?.get(k)?.defaultValue?.value ?? null);
  }
  return key;
}

function validateListType(
  node: SchemaNode,
  list: JsonValue[],
  path: string,
  out: FieldCause[],
): void {
  if (node.listType === 'set') {
    const seen = new Map<string, number>();
    list.forEach((item, i) => {
      const text = canonical(item);
      const times = seen.get(text) ?? 0;
      seen.set(text, times + 1);
      if (times === 1) out.push(duplicate(indexPath(path, i), item));
    });
  } else if (node.listType === 'map') {
    const seen = new Map<string, number>();
    list.forEach((item, i) => {
      if (!isJsonObject(item)) {
        out.push(
          invalid(indexPath(path, i), item, 'must be an object for an array of list-type map'),
        );
        return;
      }
      if (Object.keys(item).length === 0) {
        out.push(invalid(indexPath(path, i), item, 'must contain at least one key'));
        return;
      }
      const key = listMapKey(node, item);
      const text = canonical(key);
      const times = seen.get(text) ?? 0;
      seen.set(text, times + 1);
      if (times === 1) out.push(duplicate(indexPath(path, i), key));
    });
  }
}

function validateEmbedded(value: JsonObject, path: string, out: FieldCause[]): void {
  const apiVersion = value.apiVersion;
  const kind = value.kind;
  if (apiVersion === undefined)
    out.push(required(childPath(path, 'apiVersion'), 'must not be empty'));
  else if (typeof apiVersion !== 'string')
    out.push(invalid(childPath(path, 'apiVersion'), apiVersion, 'must be a string'));
  else if (apiVersion === '')
    out.push(invalid(childPath(path, 'apiVersion'), apiVersion, 'must not be empty'));
  if (kind === undefined) out.push(required(childPath(path, 'kind'), 'must not be empty'));
  else if (typeof kind !== 'string')
    out.push(invalid(childPath(path, 'kind'), kind, 'must be a string'));
  else if (kind === '') out.push(invalid(childPath(path, 'kind'), kind, 'must not be empty'));
}

/** The checks kube runs over the structural part only: list types and embedded resources. */
function validateStructure(
  node: SchemaNode | undefined,
  value: JsonValue,
  path: string,
  lists: FieldCause[],
  embedded: FieldCause[],
): void {
  if (node?.hasStructureChecks !== true || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    validateListType(node, value, path, lists);
    if (node.items !== undefined) {
      for (let i = 0; i < value.length; i++) {
        validateStructure(node.items, value[i] ?? null, indexPath(path, i), lists, embedded);
      }
    }
    return;
  }
  if (node.embeddedResource) validateEmbedded(value, path, embedded);
  const additional =
    typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
  for (const [key, sub] of Object.entries(value)) {
    validateStructure(
      node.properties?.get(key) ?? additional,
      sub,
      childPath(path, key),
      lists,
      embedded,
    );
  }
}

/**
 * Validates `value` against `node`; `root` is the field path errors about the value itself carry
 * (kube uses "<nil>" for a whole custom object, `<schema path>.default` for defaults).
 */
export function validateValue(
  node: SchemaNode,
  value: JsonValue,
  root: string = NO_FIELD,
  withStructureChecks = true,
): FieldCause[] {
  const out: FieldCause[] = [];
  validateNode(node, value, '', { root, out });
  if (!withStructureChecks) return out;
  const lists: FieldCause[] = [];
  const embedded: FieldCause[] = [];
  const structurePath = root === NO_FIELD ? '' : root;
  validateStructure(node, value, structurePath, lists, embedded);
  return out.concat(embedded, lists);
}
