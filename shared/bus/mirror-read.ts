// Reading the watcher's object mirror (KV olmq_objects) by kind, namespace and name: what
// functions load their snapshots from instead of listing the API.
//
// Listing does not use KV keys(): on NATS 2.9 its end-of-listing signal (a pending count of 0)
// is sometimes never sent while the mirror is being written, and it then waits for a 30 s idle
// heartbeat. Instead the stream names the matching subjects (one request), and the listing
// ends once each of them has been read: by point reads when they are few, else by one
// ordered scan of their latest messages.
//
// Asking the stream for matching subjects costs the server a pass over every subject on NATS
// 2.9, so a namespace's objects of a kind the watcher indexes are found through its name index
// instead (namesKey): one read, then point reads. The watcher writes a name into the index
// before the object's first put and removes it after the deletion, so the index never misses
// an object a reconcile was triggered by; names of objects not (or no longer) there are skipped.
//
// An entry may hold a reference to a value too large to publish whole (large-values.ts): every
// read here returns the value itself. An entry written by a deposed watcher (fencing.ts) is not
// returned: the read fails with FencedEntryError (retry: the active watcher repairs it).
import { DeliverPolicy } from '@nats-io/jetstream';
import type { Msg } from '@nats-io/transport-node';
import type { Backbone } from './backbone.js';
import { FencedEntryError, isFenced, reportFenced } from './fencing.js';
import {
  BodyMissingError,
  decodeBodyRef,
  isBodyRef,
  readBodyText,
  type BodyRef,
} from './large-values.js';
import { isDeletion, type MirrorSource } from './mirror-view.js';
import { currentNameIndex, type NameIndexEntry } from './name-index-view.js';
import type { BusPipe } from './pipe.js';
import {
  clusterScope,
  decodeToken,
  encodeToken,
  directGetLastSubject,
  indexedKey,
  mirrorSubject,
  mirrorStream,
  mirrorSubjectPrefix,
  namesFilter,
  namesKey,
  objectKey,
} from './subjects.js';

export { isDeletion, type MirrorSource };

/** One mirrored object: its mirror revision and the object as mirrored. */
export interface Mirrored<T> {
  revision: number;
  object: T;
}

/** The mirror's stream, and the prefix its subjects put before an object key. */
export { mirrorStream, mirrorSubjectPrefix as subjectPrefix };

/** A mirror entry could not be read (not absent: the read itself failed). */
export class MirrorReadError extends Error {
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`reading ${key} from the mirror: ${reason}`);
    this.name = 'MirrorReadError';
  }
}

/** A live mirror entry's value (JSON text), and its reference if it was too large to inline. */
export interface MirrorEntry {
  text: string;
  ref: BodyRef | undefined;
}

const decoder = new TextDecoder();

// The latest message of a live mirror entry as stored (a reference unresolved), or undefined
// when the key is absent, deleted or empty. A direct get through the backbone's pipe: the hot
// path of most loads, and a third the cost of the KV client's get, which sets up a timer, a
// muxed request and an error object per read.
async function readRaw(
  mirror: Pick<Backbone, 'pipe'>,
  key: string,
  fence = true,
): Promise<Msg | undefined> {
  const answer = await mirror.pipe.request(directGetLastSubject(mirrorStream, mirrorSubject(key)));
  const status = answer.headers?.code ?? 0;
  if (status === 404) return undefined;
  if (status !== 0)
    throw new MirrorReadError(key, answer.headers?.description ?? `status ${status}`);
  if (fence) await refuseFenced(mirror, key, answer.headers);
  if (isDeletion(answer.headers?.get('KV-Operation')) || answer.data.length === 0) return undefined;
  return answer;
}

// Throws FencedEntryError for an entry a deposed watcher wrote.
async function refuseFenced(
  mirror: Pick<Backbone, 'pipe'>,
  key: string,
  headers: Msg['headers'],
): Promise<void> {
  const cluster = decodeToken(key.split('.')[0] ?? '=');
  const fenced = await isFenced(mirror, cluster, headers);
  if (fenced === undefined) return;
  reportFenced({ cluster, reader: 'read' });
  throw new FencedEntryError(key, fenced.epoch, fenced.recorded);
}

/** The value of a live mirror entry, or undefined when the key is absent, deleted or empty. */
export async function readMirrorEntry(
  mirror: Pick<Backbone, 'pipe'>,
  key: string,
  fence = true,
): Promise<MirrorEntry | undefined> {
  // A reference whose value is gone means the key moved on meanwhile: read it again.
  for (let attempt = 1; ; attempt++) {
    const answer = await readRaw(mirror, key, fence);
    if (answer === undefined) return undefined;
    if (!isBodyRef(answer.headers)) return { text: decoder.decode(answer.data), ref: undefined };
    try {
      const ref = decodeBodyRef(answer.data);
      return { text: await readBodyText(mirror, ref), ref };
    } catch (error) {
      if (!(error instanceof BodyMissingError) || attempt >= 3)
        throw new MirrorReadError(key, (error as Error).message);
    }
  }
}

/**
 * The reference a mirror entry holds, or undefined when it holds its value inline or is absent
 * or deleted: which upload of the key is live, for garbage collection. Reads no upload.
 */
export async function mirroredBodyRef(
  mirror: Pick<Backbone, 'pipe'>,
  key: string,
): Promise<BodyRef | undefined> {
  const answer = await readRaw(mirror, key, false);
  return answer === undefined || !isBodyRef(answer.headers)
    ? undefined
    : decodeBodyRef(answer.data);
}

async function readEntry(
  mirror: Pick<Backbone, 'pipe'>,
  key: string,
  fence = true,
): Promise<string | undefined> {
  return (await readMirrorEntry(mirror, key, fence))?.text;
}

/** The value of a JSON text. */
const parse = <T>(text: string): T => JSON.parse(text) as T;

/** The mirrored object, or undefined when it is absent (never mirrored or deleted). */
export async function getMirrored<T>(
  mirror: Pick<Backbone, 'pipe' | 'copy'>,
  ref: { cluster: string; kind: string; namespace: string; name: string },
): Promise<T | undefined> {
  const key = objectKey(ref);
  const kept = mirror.copy?.text(key);
  if (kept !== undefined) return kept === null ? undefined : parse<T>(kept);
  const value = await readEntry(mirror, key);
  return value === undefined ? undefined : parse<T>(value);
}

/** Up to this many matching keys are read one by one; more are scanned. */
const pointReadLimit = 32;

/** A live (not deleted) mirror entry: its key and, when asked for, its value. */
interface LiveEntry {
  key: string;
  value: string | undefined;
}

/**
 * The live entries whose keys match `filter` (KV wildcards), with values if `withValues`;
 * values a deposed watcher wrote fail the listing unless `fence` is false.
 */
async function liveEntries(
  mirror: MirrorSource,
  filter: string,
  withValues: boolean,
  fence = withValues,
): Promise<LiveEntry[]> {
  const info = await mirror.jsm.streams.info(mirrorStream, {
    subjects_filter: mirrorSubjectPrefix + filter,
  });
  const keys = Object.keys(info.state.subjects ?? {}).map((s) =>
    s.slice(mirrorSubjectPrefix.length),
  );
  if (keys.length === 0) return [];
  if (keys.length <= pointReadLimit) {
    // Keys alone need no value: a reference's upload is not read.
    const entries = await Promise.all(
      keys.map((key) => (withValues ? readEntry(mirror, key, fence) : readRaw(mirror, key, false))),
    );
    return keys.flatMap((key, i) => {
      const entry = entries[i];
      return entry === undefined
        ? []
        : [{ key, value: typeof entry === 'string' ? entry : undefined }];
    });
  }
  const remaining = new Set(keys);
  const live = new Map<string, string | undefined>();
  // Keys whose entry is a reference, resolved once the scan is over.
  const referenced = new Set<string>();
  const consumer = await mirror.js.consumers.get(mirrorStream, {
    filter_subjects: mirrorSubjectPrefix + filter,
    // The bucket keeps one message per key: every message is the latest of its key, and NATS
    // 2.9 sets up such a consumer more cheaply than a last-per-subject one.
    deliver_policy: DeliverPolicy.All,
    headers_only: !withValues,
  });
  const messages = await consumer.consume();
  try {
    for await (const m of messages) {
      const key = m.subject.slice(mirrorSubjectPrefix.length);
      referenced.delete(key);
      if (fence) await refuseFenced(mirror, key, m.headers);
      if (isDeletion(m.headers?.get('KV-Operation'))) live.delete(key);
      else {
        const reference = withValues && isBodyRef(m.headers);
        live.set(key, withValues && !reference ? decoder.decode(m.data) : undefined);
        if (reference) referenced.add(key);
      }
      remaining.delete(key);
      // Every subject named has been read (pending 0 alone is not trusted on NATS 2.9).
      if (remaining.size === 0) break;
    }
  } finally {
    messages.stop();
  }
  await Promise.all(
    [...referenced].map(async (key) => {
      const value = await readEntry(mirror, key, fence);
      if (value === undefined) live.delete(key);
      else live.set(key, value);
    }),
  );
  return [...live].map(([key, value]) => ({ key, value }));
}

/** The keys of the live mirror entries matching `filter` (KV wildcards). */
export async function mirroredKeys(mirror: MirrorSource, filter: string): Promise<string[]> {
  return (await liveEntries(mirror, filter, false)).map((entry) => entry.key);
}

// Pipes (by handle) and `cluster.kind` pairs whose index is known to be kept: the watcher never
// stops keeping one, so a kind found indexed needs no second look.
const indexedKinds = new WeakMap<BusPipe, Set<string>>();

async function isIndexed(mirror: MirrorSource, cluster: string, kind: string): Promise<boolean> {
  const key = indexedKey(cluster, kind);
  let known = indexedKinds.get(mirror.pipe);
  if (known?.has(key) === true) return true;
  if ((await readEntry(mirror, key)) === undefined) return false;
  if (known === undefined) indexedKinds.set(mirror.pipe, (known = new Set()));
  known.add(key);
  return true;
}

// A name index entry's names, or undefined for one marked as holding too many to list.
const namesIn = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? (value as string[]) : undefined;

/** The names the watcher's index holds for `kind` in `namespace`, or undefined if unindexed. */
async function indexedNames(
  mirror: MirrorSource,
  cluster: string,
  kind: string,
  namespace: string,
): Promise<string[] | undefined> {
  // Whether the kind is indexed first: a kind that is not (cached once it is) costs no view
  // round. Then the names from the connection's live view of the index when it can catch up,
  // else by a read.
  if (!(await isIndexed(mirror, cluster, kind))) return undefined;
  const entry = await currentNameIndex(mirror).then(
    (view): NameIndexEntry => view.entry(cluster, kind, namespace) ?? [],
    (): Promise<NameIndexEntry> =>
      readEntry(mirror, namesKey(cluster, kind, namespace)).then((text) =>
        text === undefined ? [] : (namesIn(parse<unknown>(text)) ?? 'tooMany'),
      ),
  );
  return entry === 'tooMany' ? undefined : entry; // undefined (too many to list): scan
}

/**
 * Every name index entry of `kind` in `cluster`, for the watcher: namespace → names, or
 * undefined for a namespace marked as holding too many to list.
 */
export async function readNameIndex(
  mirror: MirrorSource,
  cluster: string,
  kind: string,
): Promise<Map<string, string[] | undefined>> {
  const out = new Map<string, string[] | undefined>();
  // The watcher takes over the entries of earlier terms, deposed or not, and writes them anew.
  for (const { key, value } of await liveEntries(mirror, namesFilter(cluster, kind), true, false)) {
    const token = key.split('.')[3];
    if (token === undefined || value === undefined || value.length === 0) continue;
    out.set(decodeToken(token), namesIn(parse<unknown>(value)));
  }
  return out;
}

/**
 * The mirrored objects of `kind` in `namespace` ("" for cluster-scoped, undefined for every
 * namespace), optionally only those named `name`.
 */
export async function listMirrored<T>(
  mirror: MirrorSource,
  query: { cluster: string; kind: string; namespace?: string | undefined; name?: string },
): Promise<T[]> {
  const kept = mirror.copy?.entries(query.cluster, query.kind, query.namespace, query.name);
  if (kept !== undefined) return kept.map(({ text }) => parse<T>(text));
  if (query.namespace !== undefined && query.namespace !== '' && query.name === undefined) {
    const { cluster, kind, namespace } = query;
    const names = await indexedNames(mirror, cluster, kind, namespace);
    if (names !== undefined) {
      const found: T[] = [];
      for (const object of await Promise.all(
        names.map((name) => getMirrored<T>(mirror, { cluster, kind, namespace, name })),
      ))
        if (object !== undefined) found.push(object);
      return found;
    }
  }
  const ns =
    query.namespace === undefined
      ? '*'
      : query.namespace === ''
        ? clusterScope
        : encodeToken(query.namespace);
  const name = query.name === undefined ? '*' : encodeToken(query.name);
  const filter = `${encodeToken(query.cluster)}.${encodeToken(query.kind)}.${ns}.${name}`;
  return (await liveEntries(mirror, filter, true)).flatMap(({ value }) =>
    value === undefined || value.length === 0 ? [] : [parse<T>(value)],
  );
}

/** The names (decoded) of the namespaces holding a mirrored `kind` object named `name`. */
export async function namespacesHolding(
  mirror: MirrorSource,
  query: { cluster: string; kind: string; name: string },
): Promise<string[]> {
  const kept = mirror.copy?.entries(query.cluster, query.kind, undefined, query.name);
  if (kept !== undefined) return namespacesOf(kept.map((entry) => entry.key));
  const filter = `${encodeToken(query.cluster)}.${encodeToken(query.kind)}.*.${encodeToken(query.name)}`;
  return namespacesOf(await mirroredKeys(mirror, filter));
}

// The namespaces (decoded) of object keys, cluster-scoped ones left out.
function namespacesOf(keys: readonly string[]): string[] {
  const out: string[] = [];
  for (const key of keys) {
    const ns = key.split('.')[2];
    if (ns !== undefined && ns !== clusterScope) out.push(decodeToken(ns));
  }
  return out;
}

/** The namespaces (decoded, sorted) holding at least one mirrored object of `kind`. */
export async function namespacesWith(
  mirror: MirrorSource,
  query: { cluster: string; kind: string },
): Promise<string[]> {
  const keys =
    mirror.copy?.entries(query.cluster, query.kind)?.map((entry) => entry.key) ??
    (await mirroredKeys(mirror, `${encodeToken(query.cluster)}.${encodeToken(query.kind)}.*.*`));
  return [...new Set(namespacesOf(keys))].sort();
}
