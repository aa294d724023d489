// Which parts of a mirrored object a change touched. The watcher, the one writer of the mirror,
// compares each object with the version it published before and names the changed parts in a
// header of the mirror message; a trigger that reads only some parts of a kind (say, the spec
// of Subscriptions) then skips changes to the others (their status, written several times per
// install) without a reconcile. Missing header = unknown = every part changed (first sight of
// an object after a watcher start, deletions, writers other than the watcher).
import { createHash } from 'node:crypto';

/** The parts of an object a trigger can ask for; `other` is every other top-level field. */
export type ObjectPart = 'metadata' | 'spec' | 'status' | 'other';

/** Header of a mirror message: the changed parts, comma-separated, or `none`. */
export const changedPartsHeader = 'Olmq-Changed';

const parts: readonly ObjectPart[] = ['metadata', 'spec', 'status', 'other'];
const digestLength = 10;

function digest(text: string): string {
  return createHash('sha1').update(text).digest('base64').slice(0, digestLength);
}

/**
 * The object's JSON and a signature of its parts (one digest per part). Metadata counts without
 * resourceVersion, which every write changes.
 */
export function serializeByParts(object: Record<string, unknown>): {
  json: string;
  signature: string;
} {
  const fields: string[] = [];
  const other: string[] = [];
  let metadata = '';
  let spec = '';
  let status = '';
  for (const [key, value] of Object.entries(object)) {
    if (value === undefined) continue;
    const json = JSON.stringify(value);
    const field = `${JSON.stringify(key)}:${json}`;
    fields.push(field);
    if (key === 'metadata') {
      const { resourceVersion: _rv, ...rest } = value as Record<string, unknown>;
      metadata = JSON.stringify(rest);
    } else if (key === 'spec') spec = json;
    else if (key === 'status') status = json;
    else other.push(field);
  }
  return {
    json: `{${fields.join(',')}}`,
    signature: [metadata, spec, status, other.join(',')].map(digest).join(''),
  };
}

/** The parts whose digests differ between two signatures of one object. */
export function changedParts(before: string, after: string): ObjectPart[] {
  return parts.filter(
    (_, i) =>
      before.slice(i * digestLength, (i + 1) * digestLength) !==
      after.slice(i * digestLength, (i + 1) * digestLength),
  );
}

/**
 * Whether a change concerns a trigger reading only `wanted`: the header's parts (if any) meet
 * them. Without a header every part may have changed.
 */
export function touchesParts(header: string | undefined, wanted: readonly ObjectPart[]): boolean {
  if (header === undefined) return true;
  return header.split(',').some((part) => wanted.includes(part as ObjectPart));
}
