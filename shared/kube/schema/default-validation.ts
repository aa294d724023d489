// Defaults in a CRD schema must validate against their own schema and survive pruning unchanged
// (kube's ValidateDefaults). Defaults below additionalProperties are not followed, as in kube.
import type { JsonObject } from '../json.js';
import { isJsonObject } from '../json.js';
import type { FieldCause } from './types.js';
import { childPath, invalid, keyPath } from './cause.js';
import { compileSchema, jsonEqual } from './compiled.js';
import { pruneValue } from './pruning.js';
import { validateValue } from './value-validation.js';

function validateDefaultsAt(schema: JsonObject, path: string, out: FieldCause[]): void {
  if ('default' in schema) {
    const node = compileSchema(schema);
    const value = schema.default ?? null;
    const defaultPath = childPath(path, 'default');
    const pruned = pruneValue(node, value, node.embeddedResource).value;
    if (!jsonEqual(pruned, value))
      out.push(invalid(defaultPath, value, 'must not have unknown fields'));
    out.push(...validateValue(node, value, defaultPath, false));
  }
  if (isJsonObject(schema.items)) validateDefaultsAt(schema.items, childPath(path, 'items'), out);
  if (isJsonObject(schema.properties)) {
    for (const [key, sub] of Object.entries(schema.properties)) {
      if (isJsonObject(sub))
        validateDefaultsAt(sub, keyPath(childPath(path, 'properties'), key), out);
    }
  }
}

/** Violations of the defaults declared anywhere in a structural schema. */
export function defaultIssues(schema: JsonObject, path: string): FieldCause[] {
  const out: FieldCause[] = [];
  validateDefaultsAt(schema, path, out);
  return out;
}
