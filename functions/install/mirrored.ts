// Reading the install rooms' snapshots from the watcher's mirror instead of listing the API, and
// writing safely what was decided on mirrored objects.
// - The mirror holds only olm.managed Deployments and ServiceAccounts, and may lag this
//   function's own writes by a moment: the objects a decision names (a strategy's deployments,
//   the service accounts it runs as) that the mirror lacks are read from the API.
// - The watcher trims the kubectl last-applied annotation and managedFields: an update built
//   from a mirrored object is rebased on the API object it was decided on (same
//   resourceVersion, else the decision is stale) so that nothing trimmed is wiped.
import { OlmAnnotation } from '../../shared/api/codes.js';
import { listMirrored, type MirrorSource } from '../../shared/bus/mirror-read.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { StaleDecisionError, type Write } from '../../shared/kube/executor.js';
import { refOf } from './kube-writes.js';

/** A kind of the namespace to read from the mirror. */
export interface MirroredKind {
  apiVersion: string;
  kind: string;
}

/**
 * The namespace's objects of `kind` from the mirror, plus those named in `needed` that the
 * mirror lacks but the API has (not mirrored, or not mirrored yet).
 */
export async function mirroredWithNeeded<T extends KubeObject>(
  mirror: MirrorSource,
  client: KubeClient,
  where: { cluster: string; namespace: string },
  kind: MirroredKind,
  needed: Iterable<string>,
): Promise<T[]> {
  const mirrored = await listMirrored<T>(mirror, { ...where, kind: kind.kind });
  const have = new Set(mirrored.map((o) => o.metadata.name));
  const missing = [...new Set(needed)].filter((name) => name !== '' && !have.has(name));
  const fetched = await Promise.all(
    missing.map((name) => client.get<T>({ ...kind, namespace: where.namespace, name })),
  );
  return [...mirrored, ...fetched.filter((o): o is Awaited<T> => o !== undefined)];
}

const lastApplied = OlmAnnotation.LastAppliedConfiguration;

/**
 * `write` made safe to send when the decision read its object from the mirror: an update is
 * rebased on the API object at the resourceVersion decided on, with what the watcher trims
 * put back. Other writes are returned as they are.
 */
export async function rebasedOnApi(client: KubeClient, write: Write): Promise<Write> {
  if (write.op !== 'update') return write;
  const decided = write.object;
  const current = await client.get(refOf(decided));
  if (
    current === undefined ||
    current.metadata.resourceVersion !== decided.metadata.resourceVersion
  )
    throw new StaleDecisionError(
      `update of ${decided.kind} ${decided.metadata.namespace ?? ''}/${decided.metadata.name ?? ''}: changed since it was read from the mirror`,
    );
  const applied = current.metadata.annotations?.[lastApplied];
  if (applied === undefined || decided.metadata.annotations?.[lastApplied] !== undefined)
    return write;
  return {
    op: 'update',
    object: {
      ...decided,
      metadata: {
        ...decided.metadata,
        annotations: { ...decided.metadata.annotations, [lastApplied]: applied },
      },
    },
  };
}
