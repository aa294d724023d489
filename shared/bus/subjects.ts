// Subjects and keys of olmq's JetStream layout. Every subject and key starts with `olmq` and
// carries the cluster id. Kubernetes names may contain dots (and, for RBAC objects, colons),
// which NATS reserves, so each name becomes one reversible token.
//
//   olmq.obj.<cluster>.<kind>.<namespace>.<name>      object mirror (KV bucket olmq_objects)
//   olmq.obj.<cluster>.=names.<kind>.<namespace>       names of a kind in a namespace (same bucket)
//   olmq.obj.<cluster>.=indexed.<kind>.-               the watcher keeps the names of this kind
//   olmq.work.<function>.<cluster>.<key tokens...>    work items (stream OLMQ_WORK)
//   olmq.dead.<function>.<cluster>.<key tokens...>    dead-lettered work (stream OLMQ_DEAD)

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

/** The key whose presence says the watcher keeps namesKey entries for `kind` in `cluster`. */
export function indexedKey(cluster: string, kind: string): string {
  return [encodeToken(cluster), indexedToken, encodeToken(kind), clusterScope].join('.');
}

/** The filter matching every namesKey of `kind` in `cluster`. */
export function namesFilter(cluster: string, kind: string): string {
  return [encodeToken(cluster), namesToken, encodeToken(kind), '*'].join('.');
}

/**
 * What one unit of work is about, as words: e.g. ["Subscription", "ns1", "my-sub"] for an
 * object, ["namespace", "ns1"] for a namespace-wide resolution.
 */
export type WorkKey = readonly string[];

/** The subject of a work item for `fn` in `cluster`. */
export function workSubject(fn: string, cluster: string, key: WorkKey): string {
  return ['olmq.work', encodeToken(fn), encodeToken(cluster), ...key.map(encodeToken)].join('.');
}

/** The dead-letter subject of a work item. */
export function deadLetterSubject(fn: string, cluster: string, key: WorkKey): string {
  return ['olmq.dead', encodeToken(fn), encodeToken(cluster), ...key.map(encodeToken)].join('.');
}

/** Reverses workSubject (and deadLetterSubject). */
export function parseWorkSubject(subject: string): { fn: string; cluster: string; key: WorkKey } {
  const parts = subject.split('.');
  if (parts.length < 5 || parts[0] !== 'olmq' || (parts[1] !== 'work' && parts[1] !== 'dead')) {
    throw new Error(`malformed work subject "${subject}"`);
  }
  const [, , fn, cluster, ...key] = parts as [string, string, string, string, ...string[]];
  return { fn: decodeToken(fn), cluster: decodeToken(cluster), key: key.map(decodeToken) };
}
