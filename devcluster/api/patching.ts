// PATCH semantics: decoding the patch, applying it (JSON patch, merge patch, strategic merge
// patch, server-side apply) to the object as served, and kube's answers when that fails. What
// comes out is written as an update — or, for an apply to a missing object, as a create.
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest, conflict, notFound, refOf, staleObjectMessage } from './errors.js';
import { checkTypeMeta } from './metadata.js';
import { clone, metadataOf, writableCopy } from './object-json.js';
import type { PatchType, WriteOptions } from './types.js';
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import {
  ApplyConflictError,
  PatchError,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  applyWithLastApplied,
  type MergeRules,
} from '../patch/index.js';
import { apiVersionOf } from '../resources/registry.js';
import type { ResourceType } from '../resources/types.js';

/** What a patch makes: an object to create (apply to a missing object) or to replace the stored one with. */
export type PatchedObject =
  | { create: JsonObject }
  | {
      replace: JsonObject;
      /** Whether managedFields already record the write (server-side apply does it). */
      managedFieldsDone: boolean;
    };

/** A patch to apply, and what it applies to. */
export interface PatchInput {
  type: ResourceType;
  name: string;
  /** The stored object as served at the request's version; undefined when there is none. */
  presented: JsonObject | undefined;
  patchType: PatchType;
  /** The decoded patch (decodePatch). */
  patch: unknown;
  options: WriteOptions & { force: boolean };
  subresource: string;
  rules: () => MergeRules;
  now: () => string;
}

// Apply configurations are YAML, and most clients send them as JSON, which is YAML too and
// parses many times faster as JSON.
function parseApplyConfiguration(raw: string): unknown {
  if (raw.trimStart().startsWith('{')) {
    try {
      return JSON.parse(raw);
    } catch {
      // A YAML flow mapping that is not JSON: parsed as YAML below.
    }
  }
  return parseYaml(raw);
}

/** The patch document (YAML or JSON for apply, JSON otherwise); 400 when it does not parse. */
export function decodePatch(patchType: PatchType, raw: string): unknown {
  try {
    return patchType === 'apply' ? parseApplyConfiguration(raw) : JSON.parse(raw);
  } catch (error) {
    throw new ApiError(
      'BadRequest',
      `error decoding patch: ${error instanceof Error ? error.message : String(error)}`,
      undefined,
      { cause: error },
    );
  }
}

function applied(input: PatchInput): PatchedObject {
  const { type, name, presented, options, subresource } = input;
  if (!isJsonObject(input.patch))
    throw badRequest('error decoding YAML: the applied configuration must be an object');
  const configuration = input.patch;
  if (!options.fieldManager || options.fieldManager === 'unknown') {
    throw badRequest(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
  }
  const appliedMeta = isJsonObject(configuration['metadata']) ? configuration['metadata'] : {};
  if (appliedMeta['name'] !== undefined && appliedMeta['name'] !== name) {
    throw badRequest(
      `the name of the object (${text(appliedMeta['name'])}) does not match the name on the URL (${name})`,
    );
  }
  const applyOptions = {
    manager: options.fieldManager,
    force: options.force,
    rules: input.rules(),
    apiVersion: apiVersionOf(type.group, type.version),
    now: input.now(),
    ...(subresource !== '' ? { subresource } : {}),
  };
  if (!presented) {
    if (subresource !== '') throw notFound(refOf(type, name));
    const fresh = applyWithLastApplied(undefined, clone(configuration), applyOptions);
    const body = clone(fresh);
    metadataOf(body)['name'] = name;
    return { create: body };
  }
  // As kube-apiserver: a resourceVersion in the applied configuration is a precondition.
  const appliedRv = appliedMeta['resourceVersion'];
  const existingRv = (presented['metadata'] as JsonObject)['resourceVersion'];
  if (typeof appliedRv === 'string' && appliedRv !== '' && appliedRv !== existingRv)
    throw conflict(refOf(type, name), staleObjectMessage);
  const merged = applyWithLastApplied(clone(presented), clone(configuration), applyOptions);
  return { replace: merged, managedFieldsDone: true };
}

/**
 * kube-apiserver's 415 for a PATCH body of a media type the resource does not take, listing
 * those it does (1.30: no strategic merge patch for custom resources, no CBOR).
 */
export function unsupportedPatchType(type: ResourceType): ApiError {
  const accepted = [
    'application/json-patch+json',
    'application/merge-patch+json',
    ...(type.crdName === undefined ? ['application/strategic-merge-patch+json'] : []),
    'application/apply-patch+yaml',
  ];
  return new ApiError(
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/** Applies a patch to the object as served; server-side apply creates the object when missing. */
export function patchedObject(input: PatchInput): PatchedObject {
  if (input.patchType === 'apply') return applied(input);
  const { type, name, presented, patchType, patch } = input;
  // Custom resources take no strategic merge patch (checked before the object is read).
  if (patchType === 'strategic' && type.crdName !== undefined) throw unsupportedPatchType(type);
  if (!presented) throw notFound(refOf(type, name));
  let result: JsonValue;
  if (patchType === 'json') result = applyJsonPatch(clone(presented), patch);
  else if (!isJsonObject(patch)) throw badRequest('the patch must be a JSON object');
  else if (patchType === 'merge') result = writableCopy(applyMergePatch(presented, patch));
  else {
    result = applyStrategicMergePatch(clone(presented), patch, input.rules());
  }
  if (!isJsonObject(result)) throw badRequest('the patched object is not a JSON object');
  const resultMeta = metadataOf(result);
  if (resultMeta['name'] !== undefined && resultMeta['name'] !== name) {
    throw badRequest(
      `the name of the object (${text(resultMeta['name'])}) does not match the name on the URL (${name})`,
    );
  }
  checkTypeMeta(type, result);
  return { replace: result, managedFieldsDone: false };
}

/** The answer to a failed patch: 400/422/415 for a bad patch, 409 listing apply's conflicts. */
export function patchFailure(error: unknown): unknown {
  if (error instanceof PatchError) {
    return new ApiError(error.reason, error.message, undefined, { cause: error });
  }
  if (error instanceof ApplyConflictError) {
    // The message and causes name each owner as kube-apiserver does (`"x" using v1` for updaters).
    return new ApiError('Conflict', error.message, { causes: error.causes }, { cause: error });
  }
  return error;
}
