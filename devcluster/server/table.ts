// Server-side Table output (meta.k8s.io/v1 Table) for `kubectl get`, including CRD printer
// columns evaluated with the simple JSONPath subset CRDs use.
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import { formatAge } from '../resources/builtin.js';
import type { PrinterColumn, ResourceType } from '../resources/types.js';

/** Evaluates a CRD column JSONPath such as `.status.conditions[?(@.type=="Ready")].status`. */
export function evaluateJsonPath(object: JsonValue, path: string): JsonValue[] {
  let current: JsonValue[] = [object];
  const expression = path
    .trim()
    .replace(/^\{|\}$/g, '')
    .replace(/^\$/, '');
  const tokens = expression.match(/\.[^.[]+|\[[^\]]*\]/g) ?? [];
  for (const token of tokens) {
    const next: JsonValue[] = [];
    for (const value of current) {
      if (token.startsWith('.')) {
        const key = token.slice(1);
        if (isJsonObject(value) && value[key] !== undefined) next.push(value[key]);
      } else {
        const inner = token.slice(1, -1).trim();
        if (!Array.isArray(value)) continue;
        if (inner === '*') next.push(...value);
        else if (/^-?\d+$/.test(inner)) {
          const index = Number(inner);
          const item = value[index < 0 ? value.length + index : index];
          if (item !== undefined) next.push(item);
        } else {
          const filter = /^\?\(@\.([\w.]+)\s*==\s*["']?([^"')]*)["']?\)$/.exec(inner);
          if (!filter) continue;
          const [, fieldPath = '', expected = ''] = filter;
          for (const item of value) {
            const found = evaluateJsonPath(item, `.${fieldPath}`)[0];
            if (found !== undefined && text(found) === expected) next.push(item);
          }
        }
      }
    }
    current = next;
  }
  return current;
}

function cellOf(column: PrinterColumn, object: JsonObject, now: number): JsonValue {
  if (column.cell) return column.cell(object, now);
  const values = evaluateJsonPath(object, column.jsonPath ?? '');
  if (values.length === 0) return column.type === 'string' || column.type === 'date' ? '' : null;
  if (column.type === 'date') {
    const first = values[0];
    return typeof first === 'string' ? formatAge(first, now) : '';
  }
  if (values.length === 1) {
    const only = values[0] ?? null;
    if (column.type === 'string' && !(typeof only === 'string'))
      return isJsonObject(only) || Array.isArray(only) ? JSON.stringify(only) : text(only);
    return only;
  }
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(',');
}

/** metav1.PartialObjectMetadata of an object, as Table rows carry by default. */
export function partialObjectMetadata(object: JsonObject): JsonObject {
  return {
    kind: 'PartialObjectMetadata',
    apiVersion: 'meta.k8s.io/v1',
    metadata: object['metadata'] ?? {},
  };
}

/** Which object a row carries: none, its metadata (default), or the whole object. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Converts objects to a Table with the type's columns. */
export function toTable(
  type: ResourceType,
  objects: readonly JsonObject[],
  options: {
    resourceVersion: string;
    continueToken?: string;
    includeObject: IncludeObject;
    now: number;
  },
): JsonObject {
  const columns = type.columns.map((c) => {
    const definition: JsonObject = {
      name: c.name,
      type: c.type === 'date' ? 'string' : c.type,
      format: c.format ?? '',
      description: c.description ?? '',
      priority: c.priority ?? 0,
    };
    return definition;
  });
  const metadata: JsonObject = { resourceVersion: options.resourceVersion };
  if (options.continueToken) metadata['continue'] = options.continueToken;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: [
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description:
          'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.',
        priority: 0,
      },
      ...columns,
    ],
    rows: objects.map((object) => {
      const name = isJsonObject(object['metadata']) ? (object['metadata']['name'] ?? '') : '';
      const row: JsonObject = {
        cells: [name, ...type.columns.map((c) => cellOf(c, object, options.now))],
      };
      if (options.includeObject === 'Object') row['object'] = object;
      else if (options.includeObject === 'Metadata') row['object'] = partialObjectMetadata(object);
      return row;
    }),
  };
}
