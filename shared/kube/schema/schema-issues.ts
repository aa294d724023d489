// Everything kube checks on one version's openAPIV3Schema, in kube's order: keyword rules on
// every subschema, then structurality, then (only for a structural schema) the defaults.
import type { JsonObject } from '../json.js';
import type { FieldCause } from './types.js';
import { defaultIssues } from './default-validation.js';
import { schemaRuleIssues } from './schema-rules.js';
import { structuralSchemaIssues } from './structural.js';

/** All violations of one CRD version schema, reported under `path`. */
export function schemaIssues(schema: JsonObject, path: string): FieldCause[] {
  const out = schemaRuleIssues(schema, path);
  const structural = structuralSchemaIssues(schema, path);
  if (structural.length > 0) return out.concat(structural);
  return out.concat(defaultIssues(schema, path));
}
