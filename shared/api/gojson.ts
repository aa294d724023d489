// Upstream OLM decodes bundle manifests with Go's encoding/json, which matches an object key to
// a struct field case-insensitively when no field has that exact name. Real bundles rely on it
// (`spec.MinKubeVersion`, `resources[].Kind`), so olmq renames such keys before validating.
import type { z } from 'zod';

type AnySchema = z.core.$ZodType;

interface WalkDef {
  type: string;
  innerType?: AnySchema;
  shape?: Record<string, AnySchema>;
  element?: AnySchema;
  valueType?: AnySchema;
}

function bare(schema: AnySchema): AnySchema {
  let current = schema;
  for (;;) {
    const def = current._zod.def as unknown as WalkDef;
    if ((def.type === 'optional' || def.type === 'default') && def.innerType !== undefined) {
      current = def.innerType;
    } else {
      return current;
    }
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Returns a copy of `value` whose object keys are renamed to the schema's field names where they
 * differ only in letter case, as Go's decoder would assign them. Keys are applied in order, so
 * when both `kind` and `Kind` are present the later one wins, as in Go. Unknown keys are kept
 * (validation drops them later); values the schema does not describe are returned untouched.
 */
export function matchFieldNamesLikeGo(schema: AnySchema, value: unknown): unknown {
  const def = bare(schema)._zod.def as unknown as WalkDef;
  if (def.type === 'array' && def.element !== undefined && Array.isArray(value)) {
    const element = def.element;
    return value.map((item) => matchFieldNamesLikeGo(element, item));
  }
  if (def.type === 'record' && def.valueType !== undefined && isPlainObject(value)) {
    const valueType = def.valueType;
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, matchFieldNamesLikeGo(valueType, item)]),
    );
  }
  if (def.type === 'object' && def.shape !== undefined && isPlainObject(value)) {
    const shape = def.shape;
    const byLowerCase = new Map(Object.keys(shape).map((key) => [key.toLowerCase(), key]));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const field = key in shape ? key : (byLowerCase.get(key.toLowerCase()) ?? key);
      const fieldSchema = shape[field];
      out[field] = fieldSchema === undefined ? item : matchFieldNamesLikeGo(fieldSchema, item);
    }
    return out;
  }
  return value;
}
