// The executor: performs a function's intended writes, leader-safe and idempotent.
// - update/updateStatus carry the resourceVersion they were decided on; 409 Conflict becomes
//   StaleDecisionError ("re-read and decide again"), never a retry of the same body.
// - create uses a deterministic name; AlreadyExists is success once the existing object is
//   shown to be ours (same owner), so a repeated create after a crash is harmless.
// - apply is server-side apply with the function's field manager.
// - delete of an object already gone is success; preconditions guard against deleting a
//   newer incarnation.
// - event records a core/v1 Event with a deterministic name (events.ts): a repeat counts up.
import type { KubeClient, KubeObject, ObjectRef, PatchType } from './client.js';
import { isAlreadyExists, isConflict } from './errors.js';
import { recordEvent } from './events.js';

/** A write found the world changed since the snapshot (409 Conflict): re-read and decide again. */
export class StaleDecisionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StaleDecisionError';
  }
}

/** One intended write. */
export type Write =
  | { op: 'create'; object: KubeObject }
  | { op: 'update'; object: KubeObject }
  | { op: 'updateStatus'; object: KubeObject }
  | { op: 'apply'; object: KubeObject; force?: boolean }
  | {
      op: 'patch';
      ref: ObjectRef;
      type: Exclude<PatchType, 'apply'>;
      patch: unknown;
      subresource?: string;
    }
  /** A core/v1 Event from coreEvent(): created, or its count bumped when recorded before. */
  | { op: 'event'; object: KubeObject }
  | {
      op: 'delete';
      ref: ObjectRef;
      preconditions?: { uid?: string; resourceVersion?: string };
      propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
    };

/**
 * Hears of each write performed and the resourceVersion it left (own-writes.ts); `made` is false
 * for a create that found the object there already (the version is then the existing one's).
 */
export type WriteObserver = (write: Write, version: string | undefined, made: boolean) => void;

/** A create found an object of that name that belongs to someone else. */
export class OwnershipConflictError extends Error {
  /** A person must resolve this (rename or remove the other object); retrying cannot help. */
  readonly retryable = false;
  constructor(
    readonly ref: ObjectRef,
    readonly reason: string,
  ) {
    super(
      `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name ?? ''} exists and is not ours: ${reason}`,
    );
    this.name = 'OwnershipConflictError';
  }
}

/**
 * Whether `existing` belongs to the same owner as `intended`: the same controller owner
 * reference, or the same olm.owner/olm.owner.namespace/olm.owner.kind labels. Objects without
 * any owner marking are ours only if `intended` has none either.
 */
export function sameOwner(intended: KubeObject, existing: KubeObject): string | undefined {
  const ownerLabels = ['olm.owner', 'olm.owner.namespace', 'olm.owner.kind'];
  const wantLabels = ownerLabels.map((l) => intended.metadata.labels?.[l]);
  const haveLabels = ownerLabels.map((l) => existing.metadata.labels?.[l]);
  const wantRefs = (intended.metadata.ownerReferences ?? []).map((r) => r.uid);
  const haveRefs = new Set((existing.metadata.ownerReferences ?? []).map((r) => r.uid));
  if (wantLabels.some((v) => v !== undefined) && wantLabels.some((v, i) => v !== haveLabels[i])) {
    return `owner labels ${JSON.stringify(haveLabels)} differ from ${JSON.stringify(wantLabels)}`;
  }
  if (wantRefs.length > 0 && !wantRefs.some((uid) => haveRefs.has(uid))) {
    return `owner references ${JSON.stringify([...haveRefs])} do not include ${JSON.stringify(wantRefs)}`;
  }
  return undefined;
}

function refOf(object: KubeObject): ObjectRef {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    namespace: object.metadata.namespace,
    name: object.metadata.name,
  };
}

/**
 * Performs `writes` in order through `client`, as field manager `fieldManager`; `observe` (if
 * given) hears of each write done and the resourceVersion it left (own-writes.ts).
 */
export async function executeWrites(
  client: KubeClient,
  writes: readonly Write[],
  fieldManager: string,
  observe?: WriteObserver,
): Promise<void> {
  for (const write of writes) await executeWrite(client, write, fieldManager, observe);
}

/**
 * Performs one write. It answers with the written object's metadata (for a create of an object
 * that is ours already, the existing object's): a later write of the same pass may point at its
 * uid, and `observe` hears of the resourceVersion it left.
 */
export async function executeWrite(
  client: KubeClient,
  write: Write,
  fieldManager: string,
  observe?: WriteObserver,
): Promise<Pick<KubeObject, 'metadata'> | undefined> {
  try {
    const { answer, made } = await executeOne(client, write, fieldManager);
    observe?.(write, answer?.metadata.resourceVersion, made);
    return answer;
  } catch (error) {
    if (isConflict(error)) {
      throw new StaleDecisionError(`${write.op} of ${describe(write)}: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** A write for logs: `op Kind ns/name`. */
export const describeWrite = (write: Write): string => `${write.op} ${describe(write)}`;

function describe(write: Write): string {
  const ref = 'object' in write ? refOf(write.object) : write.ref;
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name ?? ''}`;
}

type Outcome = { answer: Pick<KubeObject, 'metadata'> | undefined; made: boolean };

const made = (answer: Pick<KubeObject, 'metadata'> | undefined): Outcome => ({
  answer,
  made: true,
});

// The metadata the write left (undefined for deletions and Events), and whether it made it.
async function executeOne(
  client: KubeClient,
  write: Write,
  fieldManager: string,
): Promise<Outcome> {
  // Nothing here reads the written object back: its metadata is answer enough.
  const answer = 'metadata';
  switch (write.op) {
    case 'create':
      try {
        return made(await client.create(write.object, { fieldManager, answer }));
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        const existing = await client.get(refOf(write.object));
        if (existing === undefined)
          throw new StaleDecisionError(`create of ${describe(write)}: it vanished`, {
            cause: error,
          });
        const problem = sameOwner(write.object, existing);
        if (problem !== undefined) throw new OwnershipConflictError(refOf(write.object), problem);
        return { answer: existing, made: false };
      }
    case 'update':
      return made(await client.update(write.object, { fieldManager, answer }));
    case 'updateStatus':
      return made(await client.updateStatus(write.object, { fieldManager, answer }));
    case 'apply':
      return made(
        await client.patch(refOf(write.object), 'apply', write.object, {
          fieldManager,
          force: write.force ?? false,
          answer,
        }),
      );
    case 'patch':
      return made(
        await client.patch(write.ref, write.type, write.patch, {
          fieldManager,
          answer,
          ...(write.subresource === undefined ? {} : { subresource: write.subresource }),
        }),
      );
    case 'event':
      await recordEvent(client, write.object, fieldManager);
      return made(undefined);
    case 'delete':
      await client.delete(write.ref, {
        ...(write.preconditions === undefined ? {} : { preconditions: write.preconditions }),
        ...(write.propagationPolicy === undefined
          ? {}
          : { propagationPolicy: write.propagationPolicy }),
      });
      return made(undefined);
  }
}
