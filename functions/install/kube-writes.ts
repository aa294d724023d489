// How the install reconcilers write besides executeWrites: under one field manager, and status
// writes whose conflict means "re-read and decide again".
import type {
  KubeClient,
  KubeObject,
  ObjectRef,
  PartialObjectMetadata,
  WriteQuery,
} from '../../shared/kube/client.js';
import { isConflict } from '../../shared/kube/errors.js';
import { StaleDecisionError } from '../../shared/runtime/function-host.js';

/** Field manager of the install function's writes. */
export const installFieldManager = 'olmq-install';

/** The reference of an object, to delete or patch it. */
export function refOf(object: KubeObject): ObjectRef {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    namespace: object.metadata.namespace,
    name: object.metadata.name,
  };
}

/**
 * The annotations of an update of `existing` to `intended` (the intended ones win), as a
 * metadata fragment: none when both have none, so an update never adds the empty map upstream
 * never writes.
 */
export function mergedAnnotations(
  existing: KubeObject,
  intended: KubeObject,
): { annotations?: Record<string, string> } {
  const annotations = { ...existing.metadata.annotations, ...intended.metadata.annotations };
  return Object.keys(annotations).length === 0 ? {} : { annotations };
}

type OwnerReference = NonNullable<KubeObject['metadata']['ownerReferences']>[number];

/** A controller owner reference to `owner` (not blocking its deletion). */
export function controllerRef(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: false,
  };
}

/**
 * Writes `object`'s status (conditional on its resourceVersion); a 409 becomes
 * StaleDecisionError `<what> status: …`, so the host decides again on fresh reads. Returns the
 * resourceVersion written.
 */
export async function updateStatusOrStale(
  client: KubeClient,
  object: KubeObject,
  what: string,
  query?: WriteQuery,
): Promise<string | undefined> {
  try {
    const written = (await client.updateStatus(object, { ...query, answer: 'metadata' })) as
      PartialObjectMetadata | undefined;
    return written?.metadata.resourceVersion;
  } catch (error) {
    if (isConflict(error)) {
      throw new StaleDecisionError(`${what} status: ${error.message}`, { cause: error });
    }
    throw error;
  }
}
