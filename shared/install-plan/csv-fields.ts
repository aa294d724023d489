// A bundle's CSV with only the fields the CSV type declares. Upstream plans the CSV it decoded
// into its Go type, so a field the type lacks (a bundle's `spec.support`) is in neither the
// plan's step nor the CSV, and the API server has nothing to warn about. olmq prunes by its own
// CSV schema, which is what the API server keeps when the CSV is written. Pure.
import { clusterServiceVersionSchema } from '../api/index.js';
import { versionSchema } from '../api/crd/definitions.js';
import type { JsonObject, JsonValue } from '../kube/json.js';
import { compileSchema, type SchemaNode } from '../kube/schema/compiled.js';
import { pruneValue } from '../kube/schema/pruning.js';

// Compiled when the module loads (tens of milliseconds), so that a process's first plan does
// not wait for it.
const compiled: SchemaNode = compileSchema(
  versionSchema(clusterServiceVersionSchema) as unknown as JsonObject,
);

/** The CSV without the fields its schema does not declare (metadata kept whole). */
export function declaredCsvFields<T extends Record<string, unknown>>(csv: T): T {
  return pruneValue(compiled, csv as unknown as JsonValue, true).value as unknown as T;
}
