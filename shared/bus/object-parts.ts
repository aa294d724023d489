// Which parts of a mirrored object a change touched. The watcher, the one writer of the mirror,
// puts a signature of the object's parts (a digest per part) in a header of each mirror message.
// A trigger that reads only some parts of a kind (say, the spec of Subscriptions) compares them
// with the signature of the last message of the key it looked at, and skips a change to the
// others (their status, written several times per install) without a reconcile.
//
// Why digests and not "what changed since the previous message": the mirror keeps one message
// per key, so a consumer behind the watcher sees only an object's latest message, and a list of
// what changed since a message it never saw would hide a change in between (a spec edit, then
// a status write). Comparing contents with what this consumer itself last saw cannot.
// Missing header = unknown = every part changed (deletions, writers other than the watcher).
import { createHash } from 'node:crypto';

/**
 * The parts of an object a trigger can ask for: its metadata, spec and status, one top-level
 * field of the status (`status.phase`), `other` for every other top-level field,
 * `components`, the Operator API's component labels, and one part per annotation of
 * separateAnnotations (`annotations.olm.providedAPIs`), all of which `metadata` leaves out.
 */
export type ObjectPart =
  | 'metadata'
  | 'spec'
  | 'status'
  | 'other'
  | 'components'
  | `status.${string}`
  | `annotations.${string}`;

/**
 * Annotations signed apart from `metadata`: written often by one function (the rbac function
 * keeps an OperatorGroup's olm.providedAPIs, once or twice per install) and read by it alone,
 * so a change of them wakes no trigger asking for `metadata` only.
 */
export const separateAnnotations: readonly string[] = ['olm.providedAPIs'];

/**
 * Labels with this prefix say which Operators an object is a component of (shared/api's
 * OlmLabelPrefix.Operator). The operator function alone writes and reads them, and labels a
 * dozen objects per install: apart from `metadata`, a change of them alone wakes only it.
 */
export const componentLabelPrefix = 'operators.coreos.com/';

/** Every part but `components`: what a trigger that names no parts reads. */
export const partsButComponents: readonly ObjectPart[] = [
  'metadata',
  'spec',
  'status',
  'other',
  ...separateAnnotations.map((key): ObjectPart => `annotations.${key}`),
];

/** Header of a mirror message: the signature of the object's parts (serializeByParts). */
export const partsHeader = 'Olmq-Parts';

const digestLength = 10;

function digest(text: string): string {
  return createHash('sha1').update(text).digest('base64').slice(0, digestLength);
}

/**
 * The object's JSON and a signature of its parts (`part=digest` pairs). Metadata counts without
 * resourceVersion, which every write changes.
 */
export function serializeByParts(object: Record<string, unknown>): {
  json: string;
  signature: string;
} {
  const fields: string[] = [];
  const other: string[] = [];
  const digests: string[] = [];
  for (const [key, value] of Object.entries(object)) {
    if (value === undefined) continue;
    const json = JSON.stringify(value);
    const field = `${JSON.stringify(key)}:${json}`;
    fields.push(field);
    if (key === 'metadata') {
      const {
        resourceVersion: _rv,
        labels,
        annotations,
        ...rest
      } = value as Record<string, unknown>;
      const { own, components } = splitLabels(labels);
      const { kept, apart } = splitAnnotations(annotations);
      // No labels and none left once the component labels are set apart are the same metadata
      // (the first component label of a Subscription with no others is no metadata change).
      const metadata = { ...rest, labels: unlessEmpty(own), annotations: unlessEmpty(kept) };
      digests.push(`metadata=${digest(JSON.stringify(metadata))}`);
      if (components !== undefined) digests.push(`components=${digest(components)}`);
      for (const [k, v] of apart) digests.push(`annotations.${k}=${digest(v)}`);
    } else if (key === 'spec') {
      digests.push(`spec=${digest(json)}`);
    } else if (key === 'status') {
      digests.push(`status=${digest(json)}`);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const [name, v] of Object.entries(value))
          if (v !== undefined) digests.push(`status.${name}=${digest(JSON.stringify(v))}`);
      }
    } else other.push(field);
  }
  digests.push(`other=${digest(other.join(','))}`);
  return { json: `{${fields.join(',')}}`, signature: digests.join(' ') };
}

const unlessEmpty = (map: unknown): unknown =>
  map !== null && typeof map === 'object' && Object.keys(map).length === 0 ? undefined : map;

// An object's labels without the component labels, and those as JSON (undefined: none).
function splitLabels(labels: unknown): { own: unknown; components: string | undefined } {
  if (labels === null || typeof labels !== 'object') return { own: labels, components: undefined };
  const own: Record<string, unknown> = {};
  const components: Record<string, unknown> = {};
  let any = false;
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith(componentLabelPrefix)) {
      components[k] = v;
      any = true;
    } else own[k] = v;
  }
  return { own, components: any ? JSON.stringify(components) : undefined };
}

/**
 * A view of an object a trigger derives itself (a CSV's phase as one decision sees it, say), as
 * remembered next to its parts: `view.<name>=<digest>`. Finer than any part the watcher can
 * know of; no signature ever holds one, so a view not remembered reads as changed.
 */
export function viewEntry(name: string, value: string): string {
  return `view.${name}=${digest(value)}`;
}

/** Whether the view `name` of an object is `value` in what was remembered of it (pickParts). */
export function viewSame(remembered: string | undefined, name: string, value: string): boolean {
  return remembered !== undefined && digestsOf(remembered).get(`view.${name}`) === digest(value);
}

// An object's annotations without separateAnnotations, and those (present ones) as key, value.
function splitAnnotations(annotations: unknown): { kept: unknown; apart: [string, string][] } {
  if (annotations === null || typeof annotations !== 'object')
    return { kept: annotations, apart: [] };
  const values = annotations as Record<string, unknown>;
  if (!separateAnnotations.some((k) => typeof values[k] === 'string'))
    return { kept: annotations, apart: [] };
  const kept: Record<string, unknown> = {};
  const apart: [string, string][] = [];
  for (const [k, v] of Object.entries(values)) {
    if (separateAnnotations.includes(k) && typeof v === 'string') apart.push([k, v]);
    else kept[k] = v;
  }
  return { kept, apart };
}

function digestsOf(signature: string): Map<string, string> {
  const digests = new Map<string, string>();
  for (const pair of signature.split(' ')) {
    const at = pair.indexOf('=');
    if (at > 0) digests.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return digests;
}

/**
 * What a trigger remembers of a signature: the digests of `parts`, an absent part (a status
 * field the object lacks) as empty.
 */
export function pickParts(signature: string, parts: Iterable<ObjectPart>): string {
  const digests = digestsOf(signature);
  return [...new Set(parts)].map((part) => `${part}=${digests.get(part) ?? ''}`).join(' ');
}

/**
 * Whether any of `wanted` may differ between what was remembered of an object (pickParts) and
 * its signature now. A part not remembered, or an unknown signature, may differ.
 */
export function partsDiffer(
  remembered: string | undefined,
  signature: string | undefined,
  wanted: readonly ObjectPart[],
): boolean {
  if (remembered === undefined || signature === undefined) return true;
  const was = digestsOf(remembered);
  const now = digestsOf(signature);
  return wanted.some((part) => was.get(part) !== (now.get(part) ?? ''));
}
