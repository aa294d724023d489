// Mirror values larger than the server's max payload (a 1 MiB CSV, an InstallPlan carrying its
// CRDs inline). NATS refuses a publish above max_payload (1 MiB by default), so such a value
// goes in chunks to the stream OLMQ_BODIES, one subject per upload (`olmq.body.<key>.<upload>`),
// and the mirror entry holds a small reference to them (header `Olmq-Body`, a JSON payload
// naming the upload's subject, first sequence, size and SHA-256). Readers of the mirror resolve
// a reference where they read an entry (mirror-read.ts, mirror-view.ts, the trigger loop), so
// every function sees the whole object.
//
// Why chunks in a stream of our own and not the object store: deleting an object-store entry
// leaves its metadata behind as a delete marker, one per version of a value that changes; a
// purge by subject leaves nothing, and NATS 2.9 has every operation needed (publish, direct get
// by sequence and next-by-subject, purge by subject).
//
// Garbage: an upload is referenced by exactly one mirror key. Whoever overwrites or deletes the
// key purges its other uploads once the new entry landed (dropBodies), and the watcher sweeps
// uploads no entry references after each list (for a writer that crashed in between).
import { createHash, randomBytes } from 'node:crypto';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { z } from 'zod';
import type { Backbone } from './backbone.js';
import type { BusPipe } from './pipe.js';
import { assets, bodyFilter, bodySubject, mirrorSubject } from './subjects.js';

/** Header marking a mirror entry whose payload is a BodyRef, not the value itself. */
export const bodyHeader = 'Olmq-Body';

/** Room left for headers (message id, parts signature) when deciding whether a value fits. */
export const headerAllowance = 16 * 1024;

/** NATS's default max_payload, assumed when the server did not say. */
export const defaultMaxPayload = 1024 * 1024;

/** What a reference entry's payload says of the value it stands for. */
export const BodyRefSchema = z.object({
  /** The subject of the upload's chunks in OLMQ_BODIES. */
  subject: z.string().startsWith('olmq.body.'),
  /** Stream sequence of the first chunk. */
  seq: z.number().int().positive(),
  /** Size of the whole value in bytes. */
  size: z.number().int().nonnegative(),
  /** SHA-256 of the whole value, hex. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type BodyRef = z.infer<typeof BodyRefSchema>;

/** A referenced value is no longer stored: its key was overwritten or deleted since. */
export class BodyMissingError extends Error {
  constructor(readonly subject: string) {
    super(`the value stored under ${subject} is gone (its key was overwritten or deleted)`);
    this.name = 'BodyMissingError';
  }
}

/** A referenced value came back different from what its reference says (size or digest). */
export class BodyCorruptError extends Error {
  constructor(
    readonly subject: string,
    reason: string,
  ) {
    super(`the value stored under ${subject} is damaged: ${reason}`);
    this.name = 'BodyCorruptError';
  }
}

/** The largest value (payload plus headers) a publish on `nc` may carry inline. */
export function inlineLimit(backbone: Pick<Backbone, 'nc'>): number {
  const max = backbone.nc.info?.max_payload ?? defaultMaxPayload;
  return Math.max(1024, max - headerAllowance);
}

/** `bytes` cut into pieces of at most `size` bytes (one empty piece for an empty value). */
export function chunksOf(bytes: Uint8Array, size: number): Uint8Array[] {
  if (size < 1) throw new RangeError(`chunk size must be positive, got ${size}`);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return chunks.length === 0 ? [bytes] : chunks;
}

/** SHA-256 of `bytes`, hex. */
export const sha256Of = (bytes: Uint8Array): string =>
  createHash('sha256').update(bytes).digest('hex');

/** The reference entry's payload (JSON) for `ref`. */
export const encodeBodyRef = (ref: BodyRef): string => JSON.stringify(ref);

/** Whether a mirror message is a reference (its payload a BodyRef). */
export const isBodyRef = (headers: MsgHdrs | undefined): boolean =>
  headers?.has(bodyHeader) === true;

/** The reference in a reference entry's payload; throws BodyCorruptError if it is not one. */
export function decodeBodyRef(data: Uint8Array): BodyRef {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(data));
  } catch {
    value = undefined;
  }
  const parsed = BodyRefSchema.safeParse(value);
  if (!parsed.success) throw new BodyCorruptError('(unknown)', 'the reference is malformed');
  return parsed.data;
}

/**
 * Stores `bytes` as a new upload for mirror key `key`, in chunks that each fit a publish, and
 * returns the reference to put in the key's entry. The chunks are pipelined on one connection
 * (they land in order); if one fails the upload is purged and the error thrown.
 */
export async function storeBody(
  backbone: Pick<Backbone, 'nc' | 'pipe' | 'jsm'>,
  key: string,
  bytes: Uint8Array,
): Promise<BodyRef> {
  const subject = bodySubject(key, randomBytes(9).toString('hex'));
  const acks = chunksOf(bytes, inlineLimit(backbone)).map((chunk) =>
    backbone.pipe.publish(subject, chunk),
  );
  try {
    const first = await acks[0];
    await Promise.all(acks);
    return { subject, seq: first?.seq ?? 0, size: bytes.length, sha256: sha256Of(bytes) };
  } catch (error) {
    await Promise.allSettled(acks);
    await backbone.jsm.streams.purge(assets.bodyStream, { filter: subject }).catch(() => undefined);
    throw error;
  }
}

interface DirectAnswer {
  seq: number;
  data: Uint8Array;
}

// One message of OLMQ_BODIES by direct get: the one at `seq`, or with `nextBySubject` the first
// of that subject at or after it. Undefined when there is none.
async function directGet(
  pipe: BusPipe,
  request: { seq: number; next_by_subj?: string },
): Promise<DirectAnswer | undefined> {
  const answer = await pipe.request(
    `$JS.API.DIRECT.GET.${assets.bodyStream}`,
    JSON.stringify(request),
  );
  const status = answer.headers?.code ?? 0;
  if (status === 404 || status === 408) return undefined;
  if (status !== 0)
    throw new Error(`reading ${assets.bodyStream}: ${answer.headers?.description ?? status}`);
  return { seq: Number(answer.headers?.get('Nats-Sequence') ?? 0), data: answer.data };
}

/**
 * The value `ref` stands for, read chunk by chunk and checked against its size and digest.
 * Throws BodyMissingError when the upload was purged (its key moved on).
 */
export async function readBody(source: { pipe: BusPipe }, ref: BodyRef): Promise<Uint8Array> {
  const value = new Uint8Array(ref.size);
  let filled = 0;
  let next: { seq: number; next_by_subj?: string } = { seq: ref.seq };
  while (filled < ref.size || filled === 0) {
    const chunk = await directGet(source.pipe, next);
    if (chunk === undefined) throw new BodyMissingError(ref.subject);
    if (next.next_by_subj === undefined && chunk.seq !== ref.seq)
      throw new BodyMissingError(ref.subject);
    if (filled + chunk.data.length > ref.size)
      throw new BodyCorruptError(ref.subject, `more than the ${ref.size} bytes referenced`);
    value.set(chunk.data, filled);
    filled += chunk.data.length;
    if (ref.size === 0) break;
    next = { seq: chunk.seq + 1, next_by_subj: ref.subject };
  }
  if (sha256Of(value) !== ref.sha256)
    throw new BodyCorruptError(ref.subject, 'its SHA-256 differs from the reference');
  return value;
}

// Texts of references read lately, by upload: an upload never changes, so a value read (and
// checked) once is served again without reading or decoding its chunks (a 1 MB CSV is read by
// several functions per change of its status). Bounded by total size.
const cacheBytes = 64 * 1024 * 1024;
const texts = new Map<string, { size: number; text: Promise<string> }>();
let cachedBytes = 0;

function forget(subject: string): void {
  const entry = texts.get(subject);
  if (entry === undefined) return;
  texts.delete(subject);
  cachedBytes -= entry.size;
}

/** The text of the value `ref` stands for (UTF-8), read once per upload and then cached. */
export function readBodyText(source: { pipe: BusPipe }, ref: BodyRef): Promise<string> {
  const cached = texts.get(ref.subject);
  if (cached !== undefined) {
    texts.delete(ref.subject); // most recently used last
    texts.set(ref.subject, cached);
    return cached.text;
  }
  const text = readBody(source, ref).then((bytes) => new TextDecoder().decode(bytes));
  text.catch(() => forget(ref.subject));
  texts.set(ref.subject, { size: ref.size, text });
  cachedBytes += ref.size;
  for (const oldest of texts.keys()) {
    if (cachedBytes <= cacheBytes || texts.size <= 1) break;
    forget(oldest);
  }
  return text;
}

const decoder = new TextDecoder();

/**
 * The value of a mirror message as text: its payload, or the value its reference stands for.
 * Throws BodyMissingError when the referenced upload is gone.
 */
export async function textOf(
  source: { pipe: BusPipe },
  message: { headers?: MsgHdrs | undefined; data: Uint8Array },
): Promise<string> {
  if (!isBodyRef(message.headers)) return decoder.decode(message.data);
  return readBodyText(source, decodeBodyRef(message.data));
}

/**
 * Purges the uploads of mirror key `key`, except `keep` (the one its entry references now):
 * after an overwrite or a deletion of the key has landed. A purge that fails leaves garbage for
 * the watcher's sweep; it is not an error of the write.
 */
export async function dropBodies(
  backbone: Pick<Backbone, 'jsm'>,
  key: string,
  keep?: BodyRef,
): Promise<void> {
  // The server reads a purge "before sequence 1" as no bound at all: it would purge `keep`.
  if (keep !== undefined && keep.seq <= 1) return;
  await backbone.jsm.streams
    .purge(assets.bodyStream, {
      filter: bodyFilter(key),
      // Earlier uploads of the key sit before the kept one's first chunk.
      ...(keep === undefined ? {} : { seq: keep.seq }),
    })
    .catch(() => undefined);
}

/**
 * Puts `text` as the value of mirror key `key`: inline when it fits a publish, else by
 * reference to a new upload. Then purges the key's older uploads (`previous`, the reference
 * the entry held before, if any; all of them when unknown and the value went by reference).
 */
export async function putMirrorValue(
  backbone: Pick<Backbone, 'nc' | 'pipe' | 'jsm' | 'objects'>,
  key: string,
  text: string,
  previous: BodyRef | undefined,
): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= inlineLimit(backbone)) {
    await backbone.objects.put(key, bytes);
    if (previous !== undefined) await dropBodies(backbone, key);
    return;
  }
  const ref = await storeBody(backbone, key, bytes);
  const h = natsHeaders();
  h.set(bodyHeader, '1');
  await backbone.pipe.publish(mirrorSubject(key), encodeBodyRef(ref), { headers: h });
  await dropBodies(backbone, key, ref);
}

/** Deletes mirror key `key` and, when its entry was a reference, the uploads of the key. */
export async function deleteMirrorValue(
  backbone: Pick<Backbone, 'jsm' | 'objects'>,
  key: string,
  previous: BodyRef | undefined,
): Promise<void> {
  await backbone.objects.delete(key);
  if (previous !== undefined) await dropBodies(backbone, key);
}
