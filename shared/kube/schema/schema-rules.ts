// The per-node rules apiextensions-apiserver applies to every (sub)schema of a v1 CRD before
// looking at structurality: supported keywords, types, uniqueItems, properties vs
// additionalProperties, preserve-unknown-fields, list and map types.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import type { FieldCause } from './types.js';
import {
  childPath,
  forbidden,
  goStringSlice,
  invalidTyped,
  invalid,
  keyPath,
  indexPath,
  notSupported,
  required,
} from './cause.js';

const openAPIV3Types = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

const unsupportedKeywords: ReadonlyArray<readonly [string, string]> = [
  ['id', 'id is not supported'],
  ['additionalItems', 'additionalItems is not supported'],
  ['patternProperties', 'patternProperties is not supported'],
  ['definitions', 'definitions is not supported'],
  ['dependencies', 'dependencies is not supported'],
  ['$ref', '$ref is not supported'],
];

function typeOf(schema: JsonObject): string {
  return typeof schema.type === 'string' ? schema.type : '';
}

function validateListAndMapTypes(schema: JsonObject, path: string, out: FieldCause[]): void {
  const type = typeOf(schema);
  const listType = schema['x-kubernetes-list-type'];
  const mapType = schema['x-kubernetes-map-type'];
  const rawKeys = schema['x-kubernetes-list-map-keys'];
  const mapKeys = Array.isArray(rawKeys)
    ? rawKeys.filter((k): k is string => typeof k === 'string')
    : [];
  const items = isJsonObject(schema.items) ? schema.items : undefined;

  // A list or map type needs the matching type: missing is "required", another is "invalid".
  const needsType = (expected: string, keyword: string): void => {
    if (type === expected) return;
    const message = `must be ${expected} if ${keyword} is specified`;
    const typePath = childPath(path, 'type');
    out.push(type === '' ? required(typePath, message) : invalid(typePath, type, message));
  };
  if (mapType !== undefined) needsType('object', 'x-kubernetes-map-type');
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') {
    out.push(
      notSupported(childPath(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']),
    );
  }
  if (listType !== undefined && type !== 'array') needsType('array', 'x-kubernetes-list-type');
  else if (listType === 'set' && items !== undefined) {
    const itemType = typeOf(items);
    const itemsPath = childPath(path, 'items');
    if (itemType === 'array') {
      const itemListType = items['x-kubernetes-list-type'];
      if (itemListType !== undefined && itemListType !== 'atomic') {
        out.push(
          invalid(
            childPath(itemsPath, 'x-kubernetes-list-type'),
            itemListType,
            'must be atomic as item of a list with x-kubernetes-list-type=set',
          ),
        );
      }
    } else if (itemType === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      out.push(
        invalid(
          childPath(itemsPath, 'x-kubernetes-map-type'),
          // kube reports the items' list type here (its own quirk), usually unset.
          items['x-kubernetes-list-type'] ?? null,
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    }
  }
  if (listType !== undefined && listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
    out.push(
      notSupported(childPath(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']),
    );
  }
  if (mapKeys.length > 0) {
    if (listType === undefined) {
      out.push(
        required(
          childPath(path, 'x-kubernetes-list-type'),
          'must be map if x-kubernetes-list-map-keys is non-empty',
        ),
      );
    } else if (listType !== 'map') {
      out.push(
        invalid(
          childPath(path, 'x-kubernetes-list-type'),
          listType,
          'must be map if x-kubernetes-list-map-keys is non-empty',
        ),
      );
    }
  }
  if (listType === 'map') {
    if (mapKeys.length === 0) {
      out.push(
        required(
          childPath(path, 'x-kubernetes-list-map-keys'),
          'must not be empty if x-kubernetes-list-type is map',
        ),
      );
    }
    if (schema.items === undefined) {
      out.push(
        required(childPath(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'),
      );
    } else if (items === undefined) {
      out.push(
        invalid(
          childPath(path, 'items'),
          schema.items,
          'must only have a single schema if x-kubernetes-list-type is map',
        ),
      );
    } else if (typeOf(items) !== 'object') {
      out.push(
        invalid(
          childPath(childPath(path, 'items'), 'type'),
          typeOf(items),
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    } else {
      const itemProps = isJsonObject(items.properties) ? items.properties : {};
      const seen = new Set<string>();
      for (const key of mapKeys) {
        const prop = itemProps[key];
        if (isJsonObject(prop)) {
          const propType = typeOf(prop);
          if (propType === 'array' || propType === 'object') {
            const propPath = childPath(
              keyPath(childPath(childPath(path, 'items'), 'properties'), key),
              'type',
            );
            out.push(
              invalid(
                propPath,
                typeOf(items),
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
          }
        } else {
          out.push(
            invalidTyped(
              childPath(path, 'x-kubernetes-list-map-keys'),
              goStringSlice(mapKeys),
              'entries must all be names of item properties',
            ),
          );
        }
        if (seen.has(key)) {
          out.push(
            invalidTyped(
              childPath(path, 'x-kubernetes-list-map-keys'),
              goStringSlice(mapKeys),
              'must not contain duplicate entries',
            ),
          );
        }
        seen.add(key);
      }
    }
  }
}

function validateNode(schema: JsonObject, path: string, out: FieldCause[]): void {
  const type = schema.type;
  if (
    typeof type === 'string' &&
    type !== '' &&
    type !== 'null' &&
    !openAPIV3Types.includes(type)
  ) {
    out.push(notSupported(childPath(path, 'type'), type, openAPIV3Types));
  }
  for (const [keyword, detail] of unsupportedKeywords) {
    if (schema[keyword] !== undefined) out.push(forbidden(childPath(path, keyword), detail));
  }
  if (type === 'null')
    out.push(
      forbidden(
        childPath(path, 'type'),
        'type cannot be set to null, use nullable as an alternative',
      ),
    );
  if (Array.isArray(schema.items))
    out.push(forbidden(childPath(path, 'items'), 'items must be a schema object and not an array'));
  if (schema.uniqueItems === true) {
    out.push(
      forbidden(
        childPath(path, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  }
  const additional = schema.additionalProperties;
  if (
    additional !== undefined &&
    isJsonObject(schema.properties) &&
    Object.keys(schema.properties).length > 0
  ) {
    if (additional === false || isJsonObject(additional)) {
      out.push(
        forbidden(
          childPath(path, 'additionalProperties'),
          'additionalProperties and properties are mutual exclusive',
        ),
      );
    }
  }
  if (schema['x-kubernetes-preserve-unknown-fields'] === false) {
    out.push(
      invalid(
        childPath(path, 'x-kubernetes-preserve-unknown-fields'),
        false,
        'must be true or undefined',
      ),
    );
  }
  validateListAndMapTypes(schema, path, out);
}

function eachSubschema(
  schema: JsonObject,
  path: string,
  visit: (sub: JsonObject, subPath: string) => void,
): void {
  const maps = ['properties', 'patternProperties', 'definitions'] as const;
  for (const name of maps) {
    const map = schema[name];
    if (isJsonObject(map)) {
      for (const [key, sub] of Object.entries(map)) {
        if (isJsonObject(sub)) visit(sub, keyPath(childPath(path, name), key));
      }
    }
  }
  for (const name of ['additionalProperties', 'additionalItems', 'items', 'not'] as const) {
    const sub = schema[name];
    if (isJsonObject(sub)) visit(sub, childPath(path, name));
  }
  if (Array.isArray(schema.items)) {
    schema.items.forEach((sub, i) => {
      if (isJsonObject(sub)) visit(sub, indexPath(childPath(path, 'items'), i));
    });
  }
  for (const name of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list: JsonValue | undefined = schema[name];
    if (Array.isArray(list)) {
      list.forEach((sub, i) => {
        if (isJsonObject(sub)) visit(sub, indexPath(childPath(path, name), i));
      });
    }
  }
}

/** The keyword-level rules, applied to `schema` and all of its subschemas. */
export function schemaRuleIssues(schema: JsonObject, path: string): FieldCause[] {
  const out: FieldCause[] = [];
  const visit = (node: JsonObject, nodePath: string): void => {
    validateNode(node, nodePath, out);
    eachSubschema(node, nodePath, visit);
  };
  visit(schema, path);
  return out;
}
