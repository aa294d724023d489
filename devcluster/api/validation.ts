// Validation of a write's object: for custom resources their version's structural schema
// (unknown fields pruned and reported per fieldValidation, defaults applied, then validated), for
// built-in kinds their known fields and their strategy's checks (CRDs: kube's CRD validation).
import { badRequest, invalid, refOf } from './errors.js';
import { withoutKeys } from './object-json.js';
import type { WriteOptions } from './types.js';
import { isJsonObject, type JsonObject } from '../../shared/kube/json.js';
import {
  applyDefaults,
  prune,
  validateAgainstSchema,
  validateCustomResourceDefinition,
} from '../../shared/kube/schema/index.js';
import type { StatusCause } from '../../shared/kube/status.js';
import { unknownBuiltinFields, unknownMetadataFields } from '../resources/known-fields.js';
import { strategyOf } from '../resources/strategies.js';
import type { ResourceType } from '../resources/types.js';
import { QuantityError, validateBuiltinKind } from '../resources/validation/index.js';

/**
 * Custom objects: prune unknown fields (reporting them per fieldValidation), default, then
 * validate against the version's schema.
 */
export function applySchema(
  type: ResourceType,
  object: JsonObject,
  options: WriteOptions,
  name: string,
): JsonObject {
  const schema = type.schema;
  if (schema === undefined) {
    reportUnknownFields(type, unknownBuiltinFields(type.group, type.kind, object), options);
    return object;
  }
  const { apiVersion, kind, metadata, ...content } = object;
  const pruned = prune(content, schema);
  reportUnknownFields(type, [...unknownMetadataFields(metadata), ...pruned.unknownFields], options);
  const defaulted = applyDefaults(pruned.value, schema);
  const result: JsonObject = {
    apiVersion: apiVersion ?? null,
    kind: kind ?? null,
    metadata: metadata ?? {},
    ...(isJsonObject(defaulted) ? defaulted : {}),
  };
  const causes = validateAgainstSchema(
    { ...result, metadata: withoutKeys(metadata as JsonObject, ['managedFields']) },
    schema,
  );
  if (causes.length > 0) throw invalid(refOf(type, name), causes);
  return result;
}

/** Unknown fields fail the request (Strict), become warnings (Warn) or pass silently (Ignore). */
function reportUnknownFields(
  type: ResourceType,
  unknown: readonly string[],
  options: WriteOptions,
): void {
  if (unknown.length === 0) return;
  if (options.fieldValidation === 'Strict') {
    const list = unknown.map((f) => `unknown field "${f}"`).join(', ');
    throw badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${list}`,
    );
  }
  if (options.fieldValidation === 'Warn') {
    for (const f of unknown) options.warnings.push(`unknown field "${f}"`);
  }
}

/**
 * kube-apiserver's validation of a built-in object (after its defaults), on create and on
 * every update of the main resource (`old`: the stored object): 422 with every cause.
 */
export function validateBuiltin(
  type: ResourceType,
  object: JsonObject,
  name: string,
  old?: JsonObject,
): void {
  if (type.crdName !== undefined) return;
  const causes: StatusCause[] = [];
  if (type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition') {
    causes.push(...validateCustomResourceDefinition(object));
  }
  const strategy = strategyOf(type.group, type.kind);
  if (strategy.validate) causes.push(...strategy.validate(object));
  try {
    causes.push(...validateBuiltinKind(type.group, type.kind, object, old));
  } catch (error) {
    // kube fails such a body while decoding it, before validation.
    if (!(error instanceof QuantityError)) throw error;
    throw badRequest(
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${error.message}`,
    );
  }
  if (causes.length > 0) throw invalid(refOf(type, name), causes);
}
