// Subjects, keys and asset names of olmq's JetStream layout: this file describes and builds
// every subject olmq uses, so no other file writes one by hand. Every olmq subject and key
// starts with `olmq` (or is a KV/JetStream API subject of an olmq asset) and carries the
// cluster id. Kubernetes names may contain dots (and, for RBAC objects, colons), which NATS
// reserves, so each name becomes one reversible token.
//
//   $KV.olmq_objects.<cluster>.<kind>.<namespace>.<name>   object mirror (KV bucket olmq_objects)
//   $KV.olmq_objects.<cluster>.=names.<kind>.<namespace>   names of a kind in a namespace (same bucket)
//   $KV.olmq_objects.<cluster>.=indexed.<kind>.-           the watcher keeps the names of this kind
//   $KV.olmq_objects.<cluster>.=epoch                      the active watcher's Lease epoch (fencing.ts)
//   olmq.work.<queue>.<cluster>.<key tokens...>            work items (stream OLMQ_WORK)
//   olmq.dead.<queue>.<cluster>.<key tokens...>            dead-lettered work (stream OLMQ_DEAD)
//   $KV.olmq_leases.<queue>.<cluster>.<key tokens...>      who works a key (KV bucket olmq_leases)
//   $KV.olmq_attempts.<queue>.<cluster>.<key tokens...>    a key's consecutive failures (olmq_attempts)
//   olmq.body.<mirror key tokens...>.<upload>             chunks of a mirror value too large to
//                                                          publish whole (stream OLMQ_BODIES)
//
// A queue is what one function definition reconciles (one work-key type), e.g. `resolve` or
// `rbac-namespace`; its lease and attempts keys are the work subject after `olmq.work.`.

/** Names of olmq's JetStream streams and KV buckets. */
export const assets = {
  objects: 'olmq_objects',
  leases: 'olmq_leases',
  attempts: 'olmq_attempts',
  workStream: 'OLMQ_WORK',
  deadStream: 'OLMQ_DEAD',
  bodyStream: 'OLMQ_BODIES',
} as const;

/** The stream behind a KV bucket. */
export const kvStream = (bucket: string): string => `KV_${bucket}`;

/** The stream of the object mirror (its change feed). */
export const mirrorStream = kvStream(assets.objects);

/** What every subject of the object mirror starts with. */
export const mirrorSubjectPrefix = `$KV.${assets.objects}.`;

/** The subject of a mirror key (objectKey, namesKey, indexedKey). */
export const mirrorSubject = (key: string): string => mirrorSubjectPrefix + key;

/**
 * The filter of every mirrored object of `kind` in every namespace of `cluster`, or of every
 * cluster when none is given.
 */
export const mirrorKindFilter = (kind: string, cluster?: string): string =>
  mirrorSubject(`${cluster === undefined ? '*' : encodeToken(cluster)}.${encodeToken(kind)}.*.*`);

/** Every subject of the bodies stream. */
export const bodySubjects = 'olmq.body.>';

/** The subject of the chunks of one upload (a token of [a-zA-Z0-9]) of mirror key `key`. */
export const bodySubject = (key: string, upload: string): string => `olmq.body.${key}.${upload}`;

/** The filter of every upload of mirror key `key`. */
export const bodyFilter = (key: string): string => `olmq.body.${key}.*`;

/** Reverses bodySubject. */
export function parseBodySubject(subject: string): { key: string; upload: string } {
  const parts = subject.split('.');
  if (parts.length < 4 || parts[0] !== 'olmq' || parts[1] !== 'body')
    throw new Error(`malformed body subject "${subject}"`);
  return { key: parts.slice(2, -1).join('.'), upload: parts[parts.length - 1] ?? '' };
}

/** Every work subject. */
export const workSubjects = 'olmq.work.>';

/** Every dead-letter subject. */
export const deadLetterSubjects = 'olmq.dead.>';

/**
 * The filter of one queue's work items: of one cluster when given, else of every cluster. A
 * queue whose keys have no words has one subject per cluster, which `>` would not match.
 */
export function workFilter(queue: string, cluster?: string, wordless = false): string {
  if (cluster === undefined) return `olmq.work.${encodeToken(queue)}.>`;
  const subject = workSubject(queue, cluster, []);
  return wordless ? subject : `${subject}.>`;
}

const workPrefix = 'olmq.work.';

/**
 * The key of a work item in olmq_leases and olmq_attempts: its subject after `olmq.work.`
 * (`<queue>.<cluster>.<key tokens>`), so one key names one queue's item of one cluster.
 */
export function workItemKey(workSubjectText: string): string {
  if (!workSubjectText.startsWith(workPrefix))
    throw new Error(`malformed work subject "${workSubjectText}"`);
  return workSubjectText.slice(workPrefix.length);
}

/** The filter of one queue's keys in olmq_leases and olmq_attempts. */
export const workItemKeyFilter = (queue: string): string => `${encodeToken(queue)}.>`;

/** The subject of a lease entry. */
export const leaseSubject = (itemKey: string): string => `$KV.${assets.leases}.${itemKey}`;

/** The JetStream API subject that reads the last message of `subject` in `stream` directly. */
export const directGetLastSubject = (stream: string, subject: string): string =>
  `$JS.API.DIRECT.GET.${stream}.${subject}`;

/** The JetStream API subject that deletes one message of `stream` by sequence. */
export const streamMessageDeleteSubject = (stream: string): string =>
  `$JS.API.STREAM.MSG.DELETE.${stream}`;

/** Token standing for "no namespace" (cluster-scoped objects); never a valid namespace name. */
export const clusterScope = '-';

/**
 * Encodes text as one NATS token valid in subjects and KV keys ([-_=a-zA-Z0-9]): `.` becomes
 * `_` (the common case stays readable), any other character outside [a-zA-Z0-9-] becomes
 * `=XX` (UTF-8 bytes in hex). Empty text is `=`.
 */
export function encodeToken(text: string): string {
  if (text === '') return '=';
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[a-zA-Z0-9-]/.test(c)) out += c;
    else if (c === '.') out += '_';
    else out += `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Reverses encodeToken. Throws on text encodeToken cannot have produced. */
export function decodeToken(token: string): string {
  if (token === '=') return '';
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    const c = token[i] ?? '';
    if (c === '_') bytes.push(0x2e);
    else if (c === '=') {
      const hex = token.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) throw new Error(`malformed token "${token}"`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (/[a-zA-Z0-9-]/.test(c)) bytes.push(c.charCodeAt(0));
    else throw new Error(`malformed token "${token}"`);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Identifies one Kubernetes object in one cluster. */
export interface ObjectRef {
  cluster: string;
  kind: string;
  /** "" for cluster-scoped objects. */
  namespace: string;
  name: string;
}

/** The mirror key of an object: `<cluster>.<kind>.<namespace|->.<name>` (encoded tokens). */
export function objectKey(ref: ObjectRef): string {
  const ns = ref.namespace === '' ? clusterScope : encodeToken(ref.namespace);
  return [encodeToken(ref.cluster), encodeToken(ref.kind), ns, encodeToken(ref.name)].join('.');
}

/** Reverses objectKey. */
export function parseObjectKey(key: string): ObjectRef {
  const parts = key.split('.');
  if (parts.length !== 4) throw new Error(`malformed object key "${key}"`);
  const [cluster, kind, ns, name] = parts as [string, string, string, string];
  return {
    cluster: decodeToken(cluster),
    kind: decodeToken(kind),
    namespace: ns === clusterScope ? '' : decodeToken(ns),
    name: decodeToken(name),
  };
}

// The second token of the name index's keys. encodeToken writes `=` only before two hex digits,
// so no encoded kind reads like these, and the mirror's 4-token kind filters never match them.
const namesToken = '=names';
const indexedToken = '=indexed';

/**
 * The key of the names of the mirrored `kind` objects in one namespace (a JSON array), kept by
 * the watcher so that listing a namespace costs one read, not a scan of every key (NATS 2.9
 * has no subject index).
 */
export function namesKey(cluster: string, kind: string, namespace: string): string {
  return [encodeToken(cluster), namesToken, encodeToken(kind), encodeToken(namespace)].join('.');
}

/**
 * The value of a namesKey entry whose namespace holds too many names to list: readers list
 * that namespace by its keys instead.
 */
export const tooManyNames = '{"tooMany":true}';

/** The filter of every namesKey entry, of every cluster, kind and namespace. */
export const allNamesFilter = mirrorSubject(['*', namesToken, '*', '*'].join('.'));

/** The key whose presence says the watcher keeps namesKey entries for `kind` in `cluster`. */
export function indexedKey(cluster: string, kind: string): string {
  return [encodeToken(cluster), indexedToken, encodeToken(kind), clusterScope].join('.');
}

const epochToken = '=epoch';

/**
 * The key recording the Lease epoch of the cluster's active watcher: mirror writes of a lower
 * epoch come from a deposed watcher and are refused (fencing.ts). Two tokens, so no object
 * key filter (four tokens) matches it.
 */
export const epochKey = (cluster: string): string => `${encodeToken(cluster)}.${epochToken}`;

/** The filter of the clusters' epoch keys. */
export const epochKeys = `*.${epochToken}`;

/** The filter matching every namesKey of `kind` in `cluster`. */
export function namesFilter(cluster: string, kind: string): string {
  return [encodeToken(cluster), namesToken, encodeToken(kind), '*'].join('.');
}

/**
 * What one unit of work is about, as words: e.g. ["Subscription", "ns1", "my-sub"] for an
 * object, ["namespace", "ns1"] for a namespace-wide resolution.
 */
export type WorkKey = readonly string[];

/** The subject of a work item of queue `fn` in `cluster`. */
export function workSubject(fn: string, cluster: string, key: WorkKey): string {
  return ['olmq.work', encodeToken(fn), encodeToken(cluster), ...key.map(encodeToken)].join('.');
}

/** The dead-letter subject of a work item. */
export function deadLetterSubject(fn: string, cluster: string, key: WorkKey): string {
  return ['olmq.dead', encodeToken(fn), encodeToken(cluster), ...key.map(encodeToken)].join('.');
}

// The first key token of a trigger's dead letters: encodeToken writes `=` only before two hex
// digits, so no work key's first word reads like it.
const triggerToken = '=trigger';

/** The dead-letter subject of a change of `ref` that `fn`'s trigger could not map to work. */
export function triggerDeadLetterSubject(fn: string, ref: ObjectRef): string {
  const ns = ref.namespace === '' ? clusterScope : encodeToken(ref.namespace);
  return ['olmq.dead', encodeToken(fn), encodeToken(ref.cluster), triggerToken]
    .concat([encodeToken(ref.kind), ns, encodeToken(ref.name)])
    .join('.');
}

/**
 * The filter of dead letters: of one function and cluster when given, and of one work key
 * (its words, all of them) when given.
 */
export function deadLetterFilter(match: { fn?: string; cluster?: string; key?: WorkKey }): string {
  const head = [
    'olmq.dead',
    match.fn === undefined ? '*' : encodeToken(match.fn),
    match.cluster === undefined ? '*' : encodeToken(match.cluster),
  ];
  return [...head, ...(match.key === undefined ? ['>'] : match.key.map(encodeToken))].join('.');
}

/** The cluster a dead-letter subject names. */
export function clusterOfDeadLetterSubject(subject: string): string {
  return decodeToken(subject.split('.')[3] ?? '=');
}

/** Reverses workSubject (and deadLetterSubject). */
export function parseWorkSubject(subject: string): { fn: string; cluster: string; key: WorkKey } {
  const parts = subject.split('.');
  // Four parts at least: a key may have no words (one key per cluster, e.g. a cluster-wide sweep).
  if (parts.length < 4 || parts[0] !== 'olmq' || (parts[1] !== 'work' && parts[1] !== 'dead')) {
    throw new Error(`malformed work subject "${subject}"`);
  }
  const [, , fn, cluster, ...key] = parts as [string, string, string, string, ...string[]];
  return { fn: decodeToken(fn), cluster: decodeToken(cluster), key: key.map(decodeToken) };
}

/**
 * What olmq uses a subject it sends on for (for counting messages by purpose): a KV operation
 * header tells a lease release from a lease write.
 */
export function subjectPurpose(subject: string, kvOperation?: string): string {
  const kvPrefix = (bucket: string): string => `$KV.${bucket}.`;
  if (subject.startsWith('olmq.work.')) return 'work item publish';
  if (subject.startsWith('olmq.dead.')) return 'dead letter publish';
  if (subject.startsWith('olmq.body.')) return 'body chunk publish';
  if (subject.startsWith(kvPrefix(assets.objects))) return 'mirror write';
  if (subject.startsWith(kvPrefix(assets.leases)))
    return kvOperation === 'DEL' || kvOperation === 'PURGE' ? 'lease release' : 'lease write';
  if (subject.startsWith(kvPrefix(assets.attempts))) return 'attempts write';
  if (subject.startsWith('$JS.ACK.')) return 'ack';
  if (subject.startsWith('$JS.API.CONSUMER.MSG.NEXT.')) return 'pull';
  if (subject.startsWith(streamMessageDeleteSubject(kvStream(assets.leases))))
    return 'lease release';
  for (const [bucket, name] of [
    [assets.objects, 'mirror read'],
    [assets.leases, 'lease read'],
    [assets.attempts, 'attempts read'],
  ] as const) {
    if (subject.includes(`.${kvStream(bucket)}`) && subject.includes('.GET.')) return name;
  }
  return `other ${subject.split('.').slice(0, 4).join('.')}`;
}
