// Reading the install rooms' snapshots from the watcher's mirror instead of listing the API, and
// writing safely what was decided on mirrored objects.
// - The mirror holds only olm.managed Deployments and ServiceAccounts, and may lag this
//   function's own writes by a moment: the objects a decision names (a strategy's deployments,
//   the service accounts it runs as) that the mirror lacks are read from the API, until the
//   API answers one absent: then not again before the mirror shows it or a pass creates it.
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
 * Objects the API last answered absent, and the mirror has not shown since: while so, the
 * mirror's absence stands and they are not read again (a strategy's deployments are named at
 * every pass until the one that creates them). Showing in the mirror forgets one, so an object
 * that leaves the mirror later (its olm.managed label removed) is read from the API again.
 */
export class KnownAbsent {
  private readonly keys = new Set<string>();

  /** @param limit How many are remembered; past it the oldest are read again. */
  constructor(private readonly limit = 10_000) {}

  static key(where: { cluster: string; namespace: string }, kind: string, name: string): string {
    return [where.cluster, where.namespace, kind, name].join('\u0000');
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    this.keys.add(key);
    for (const oldest of this.keys) {
      if (this.keys.size <= this.limit) break;
      this.keys.delete(oldest);
    }
  }

  forget(key: string): void {
    this.keys.delete(key);
  }
}

/**
 * The namespace's objects of `kind` from the mirror, plus those named in `needed` that the
 * mirror lacks but the API has (not mirrored, or not mirrored yet), but for those `absent`
 * knows the API lacks.
 */
export async function mirroredWithNeeded<T extends KubeObject>(
  mirror: MirrorSource,
  client: KubeClient,
  where: { cluster: string; namespace: string },
  kind: MirroredKind,
  needed: { names: Iterable<string>; absent: KnownAbsent },
): Promise<T[]> {
  const { absent } = needed;
  const keyOf = (name: string): string => KnownAbsent.key(where, kind.kind, name);
  const mirrored = await listMirrored<T>(mirror, { ...where, kind: kind.kind });
  const have = new Set(mirrored.map((o) => o.metadata.name));
  const wanted = [...new Set(needed.names)].filter((name) => name !== '');
  for (const name of wanted) if (have.has(name)) absent.forget(keyOf(name));
  const missing = wanted.filter((name) => !have.has(name) && !absent.has(keyOf(name)));
  const fetched = await Promise.all(
    missing.map(async (name) => {
      const object = await client.get<T>({ ...kind, namespace: where.namespace, name });
      if (object === undefined) absent.add(keyOf(name));
      return object;
    }),
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
