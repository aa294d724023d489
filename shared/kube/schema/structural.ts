// The structural-schema rules (kube's ValidateStructural): every specified field has a type
// outside of value validations, allOf/anyOf/oneOf/not only constrain values, metadata at the
// root restricts name/generateName only, embedded resources are objects.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import type { FieldCause } from './types.js';
import {
  childPath,
  forbidden,
  indexPath,
  invalid,
  keyPath,
  required,
  sortCauses,
} from './cause.js';
import { compilePattern } from './compiled.js';

type Level = 'root' | 'item' | 'field';

const emptyTypeDetail: Record<Level, string> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

function typeOf(schema: JsonObject): string {
  return typeof schema.type === 'string' ? schema.type : '';
}

function objectEntries(value: JsonValue | undefined): Array<[string, JsonObject]> {
  if (!isJsonObject(value)) return [];
  return Object.entries(value).filter((e): e is [string, JsonObject] => isJsonObject(e[1]));
}

function schemaList(value: JsonValue | undefined): JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

function isTypeOnly(schema: JsonObject | undefined, type: string): boolean {
  return schema !== undefined && Object.keys(schema).length === 1 && schema.type === type;
}

/** anyOf: [{type: integer}, {type: string}], the one composition an int-or-string may carry. */
function isIntOrStringAnyOf(schema: JsonObject): boolean {
  const anyOf = schemaList(schema.anyOf);
  return anyOf.length === 2 && isTypeOnly(anyOf[0], 'integer') && isTypeOnly(anyOf[1], 'string');
}

function isIntOrStringAllOf(schema: JsonObject): boolean {
  const first = schemaList(schema.allOf)[0];
  return first !== undefined && isIntOrStringAnyOf(first);
}

/** Constructs ECMAScript accepts but Go's RE2 (what kube compiles patterns with) rejects. */
const re2Unsupported = /(?<!\\)\((\?<?[=!])|(?<!\\)\\([1-9])/;

/** Why kube would refuse a pattern, or undefined when it compiles. */
function patternProblem(pattern: string): string | undefined {
  const unsupported = re2Unsupported.exec(pattern);
  if (unsupported?.[1] !== undefined) {
    return `error parsing regexp: invalid or unsupported Perl syntax: \`(${unsupported[1]}\``;
  }
  if (unsupported?.[2] !== undefined)
    return `error parsing regexp: invalid escape sequence: \`\\${unsupported[2]}\``;
  if (compilePattern(pattern) === undefined)
    return `error parsing regexp: invalid pattern: \`${pattern}\``;
  return undefined;
}

function validateValueValidation(
  schema: JsonObject,
  skipAnyOf: boolean,
  skipFirstAllOfAnyOf: boolean,
  path: string,
  out: FieldCause[],
): void {
  if (!skipAnyOf) {
    schemaList(schema.anyOf).forEach((sub, i) =>
      validateNested(sub, false, indexPath(childPath(path, 'anyOf'), i), out),
    );
  }
  schemaList(schema.allOf).forEach((sub, i) => {
    validateNested(
      sub,
      skipFirstAllOfAnyOf && i === 0,
      indexPath(childPath(path, 'allOf'), i),
      out,
    );
  });
  schemaList(schema.oneOf).forEach((sub, i) =>
    validateNested(sub, false, indexPath(childPath(path, 'oneOf'), i), out),
  );
  if (isJsonObject(schema.not)) validateNested(schema.not, false, childPath(path, 'not'), out);
  if (typeof schema.pattern === 'string' && schema.pattern !== '') {
    const problem = patternProblem(schema.pattern);
    if (problem !== undefined) {
      const detail = `must be a valid regular expression, but isn't: ${problem}`;
      out.push(invalid(childPath(path, 'pattern'), schema.pattern, detail));
    }
  }
}

const nestedForbidden: ReadonlyArray<readonly [string, (v: JsonValue) => boolean, string]> = [
  ['type', (v) => v !== '', 'must be empty to be structural'],
  ['additionalProperties', () => true, 'must be undefined to be structural'],
  ['default', () => true, 'must be undefined to be structural'],
  ['title', (v) => v !== '', 'must be empty to be structural'],
  ['description', (v) => v !== '', 'must be empty to be structural'],
  ['nullable', (v) => v === true, 'must be false to be structural'],
  ['x-kubernetes-preserve-unknown-fields', (v) => v === true, 'must be false to be structural'],
  ['x-kubernetes-embedded-resource', (v) => v === true, 'must be false to be structural'],
  ['x-kubernetes-int-or-string', (v) => v === true, 'must be false to be structural'],
  [
    'x-kubernetes-list-map-keys',
    (v) => Array.isArray(v) && v.length > 0,
    'must be empty to be structural',
  ],
  ['x-kubernetes-list-type', () => true, 'must be undefined to be structural'],
  ['x-kubernetes-map-type', () => true, 'must be undefined to be structural'],
  [
    'x-kubernetes-validations',
    (v) => Array.isArray(v) && v.length > 0,
    'must be empty to be structural',
  ],
];

/** A schema under allOf/anyOf/oneOf/not: it may only constrain values. */
function validateNested(
  schema: JsonObject,
  skipAnyOf: boolean,
  path: string,
  out: FieldCause[],
): void {
  validateValueValidation(schema, skipAnyOf, false, path, out);
  if (isJsonObject(schema.items))
    validateNested(schema.items, false, childPath(path, 'items'), out);
  for (const [key, sub] of objectEntries(schema.properties)) {
    validateNested(sub, false, keyPath(childPath(path, 'properties'), key), out);
  }
  for (const [keyword, applies, detail] of nestedForbidden) {
    const value = schema[keyword];
    if (value !== undefined && applies(value))
      out.push(forbidden(childPath(path, keyword), detail));
  }
  if (isJsonObject(schema.properties) && schema.properties.metadata !== undefined) {
    out.push(
      forbidden(
        keyPath(childPath(path, 'properties'), 'metadata'),
        'must not be specified in a nested context',
      ),
    );
  }
}

function validateMetadata(
  metadata: JsonObject,
  checkMetadata: boolean,
  level: Level,
  path: string,
  out: FieldCause[],
): void {
  if (checkMetadata && typeOf(metadata) !== 'object') {
    out.push(invalid(childPath(path, 'type'), typeOf(metadata), 'must be object'));
  }
  if (level !== 'root') return;
  const props = isJsonObject(metadata.properties) ? Object.keys(metadata.properties) : [];
  const onlyNames = props.every((p) => p === 'name' || p === 'generateName');
  const extra = Object.keys(metadata).filter(
    (k) => k !== 'type' && k !== 'default' && k !== 'properties',
  );
  if (!onlyNames || extra.length > 0) {
    out.push(
      forbidden(
        path,
        'must not specify anything other than name and generateName, but metadata is implicitly specified',
      ),
    );
  }
}

function validateInvariants(
  schema: JsonObject,
  level: Level,
  path: string,
  out: FieldCause[],
): void {
  const type = typeOf(schema);
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;

  if (type === 'array' && schema.items === undefined)
    out.push(required(childPath(path, 'items'), 'must be specified'));
  if (isJsonObject(schema.items))
    validateInvariants(schema.items, 'item', childPath(path, 'items'), out);
  for (const [key, sub] of objectEntries(schema.properties)) {
    validateInvariants(sub, 'field', keyPath(childPath(path, 'properties'), key), out);
  }
  if (schema.additionalProperties !== undefined) {
    if (level === 'root')
      out.push(forbidden(childPath(path, 'additionalProperties'), 'must not be used at the root'));
    if (isJsonObject(schema.additionalProperties)) {
      validateInvariants(
        schema.additionalProperties,
        'field',
        childPath(path, 'additionalProperties'),
        out,
      );
    }
  }
  if (intOrString && preserve) {
    out.push(
      invalid(
        childPath(path, 'x-kubernetes-preserve-unknown-fields'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  if (intOrString && embedded) {
    out.push(
      invalid(
        childPath(path, 'x-kubernetes-embedded-resource'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  validateValueValidation(
    schema,
    isIntOrStringAnyOf(schema),
    isIntOrStringAllOf(schema),
    path,
    out,
  );

  const checkMetadata = level === 'root' || embedded;
  if (embedded && type !== 'object') {
    const detail = 'must be object if x-kubernetes-embedded-resource is true';
    out.push(
      type === ''
        ? required(childPath(path, 'type'), detail)
        : invalid(childPath(path, 'type'), type, detail),
    );
  } else if (type === '' && !intOrString && !preserve) {
    out.push(required(childPath(path, 'type'), emptyTypeDetail[level]));
  }
  if (embedded && schema.additionalProperties !== undefined) {
    out.push(
      forbidden(
        childPath(path, 'additionalProperties'),
        'must not be used if x-kubernetes-embedded-resource is set',
      ),
    );
  }
  if (level === 'root' && type !== '' && type !== 'object') {
    out.push(invalid(childPath(path, 'type'), type, 'must be object at the root'));
  }
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const propertiesPath = childPath(path, 'properties');
  for (const meta of ['kind', 'apiVersion']) {
    const prop = properties[meta];
    if (checkMetadata && isJsonObject(prop) && typeOf(prop) !== 'string') {
      out.push(
        invalid(childPath(keyPath(propertiesPath, meta), 'type'), typeOf(prop), 'must be string'),
      );
    }
  }
  const metadata = properties.metadata;
  if (isJsonObject(metadata))
    validateMetadata(metadata, checkMetadata, level, keyPath(propertiesPath, 'metadata'), out);
  if (embedded && !preserve && Object.keys(properties).length === 0) {
    out.push(
      required(
        propertiesPath,
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
  }
}

function completeValueValidation(
  v: JsonObject,
  s: JsonObject,
  sPath: string,
  vPath: string,
  out: FieldCause[],
): void {
  if (isJsonObject(v.not)) completeNested(v.not, s, sPath, childPath(vPath, 'not'), out);
  for (const name of ['allOf', 'anyOf', 'oneOf'] as const) {
    schemaList(v[name]).forEach((sub, i) =>
      completeNested(sub, s, sPath, indexPath(childPath(vPath, name), i), out),
    );
  }
}

function completeNested(
  v: JsonObject,
  s: JsonObject | undefined,
  sPath: string,
  vPath: string,
  out: FieldCause[],
): void {
  if (s === undefined) {
    out.push(required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  completeValueValidation(v, s, sPath, vPath, out);
  if (isJsonObject(v.items)) {
    const sItems = isJsonObject(s.items) ? s.items : undefined;
    completeNested(v.items, sItems, childPath(sPath, 'items'), childPath(vPath, 'items'), out);
  }
  const sProps = isJsonObject(s.properties) ? s.properties : {};
  for (const [key, vProp] of objectEntries(v.properties)) {
    const sProp = sProps[key];
    const sPropPath = keyPath(childPath(sPath, 'properties'), key);
    const vPropPath = keyPath(childPath(vPath, 'properties'), key);
    if (!isJsonObject(sProp))
      out.push(required(sPropPath, `because it is defined in ${vPropPath}`));
    else completeNested(vProp, sProp, sPropPath, vPropPath, out);
  }
}

/** The structural invariants and completeness of a root schema, sorted as kube sorts them. */
export function structuralSchemaIssues(schema: JsonObject, path: string): FieldCause[] {
  const out: FieldCause[] = [];
  validateInvariants(schema, 'root', path, out);
  completeValueValidation(schema, schema, path, path, out);
  return sortCauses(out);
}
