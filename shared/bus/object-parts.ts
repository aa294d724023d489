// Which parts of a mirrored object a change touched. The watcher, the one writer of the mirror,
// compares each object with the version it published before and names the changed parts in a
// header of the mirror message; a trigger that reads only some parts of a kind (say, the spec
// of Subscriptions) then skips changes to the others (their status, written several times per
// install) without a reconcile. Missing header = unknown = every part changed (first sight of
// an object after a watcher start, deletions, writers other than the watcher).
import { createHash } from 'node:crypto';

/**
 * The parts of an object a trigger can ask for: its metadata, spec and status, one top-level
 * field of the status (`status.phase`), and `other` for every other top-level field.
 */
export type ObjectPart = 'metadata' | 'spec' | 'status' | 'other' | `status.${string}`;

/** Header of a mirror message: the changed parts, comma-separated, or `none`. */
export const changedPartsHeader = 'Olmq-Changed';

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
      const { resourceVersion: _rv, ...rest } = value as Record<string, unknown>;
      digests.push(`metadata=${digest(JSON.stringify(rest))}`);
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

function digestsOf(signature: string): Map<string, string> {
  return new Map(
    signature.split(' ').map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), pair.slice(at + 1)] as const;
    }),
  );
}

/** The parts whose digests differ between two signatures of one object. */
export function changedParts(before: string, after: string): ObjectPart[] {
  const was = digestsOf(before);
  const now = digestsOf(after);
  const parts = new Set([...was.keys(), ...now.keys()]);
  return [...parts].filter((part) => was.get(part) !== now.get(part)) as ObjectPart[];
}

/**
 * Whether a change concerns a trigger reading only `wanted`: the header's parts (if any) meet
 * them. Without a header every part may have changed; a status change naming none of its fields
 * (an older watcher) may have changed any of them.
 */
export function touchesParts(header: string | undefined, wanted: readonly ObjectPart[]): boolean {
  if (header === undefined) return true;
  const changed = header.split(',');
  if (changed.some((part) => wanted.includes(part as ObjectPart))) return true;
  const statusFields = wanted.some((part) => part.startsWith('status.'));
  return (
    statusFields &&
    changed.includes('status') &&
    !changed.some((part) => part.startsWith('status.'))
  );
}
