// A hand-off record: what one function hands another, declared once with its zod schema and
// kept in the object mirror under a pseudo-kind (so the receiving function triggers on it like
// on any mirrored kind). Every put and read goes through the schema: a record another version
// wrote differently is refused on write and skipped (as absent) on read, never cast. A record
// larger than the max payload is stored by reference (../bus/large-values.ts), transparently.
import type { z } from 'zod';
import type { Backbone } from '../bus/backbone.js';
import { deleteMirrorValue, putMirrorValue } from '../bus/large-values.js';
import {
  getMirrored,
  listMirrored,
  readMirrorEntry,
  type MirrorSource,
} from '../bus/mirror-read.js';
import { objectKey } from '../bus/subjects.js';

/** Where one record sits: its cluster, and the namespace and name of what it is about. */
export interface RecordRef {
  cluster: string;
  namespace: string;
  name: string;
}

/** Checked access to the records of one kind. */
export interface HandOffRecordType<T> {
  /** The pseudo-kind the records are mirrored as (what triggers name). */
  readonly kind: string;
  /** Writes `record` (checked against the schema); one equal to the current record is not rewritten. */
  put(backbone: Backbone, ref: RecordRef, record: T): Promise<void>;
  /** The record, or undefined when there is none or it does not match the schema. */
  read(mirror: MirrorSource, ref: RecordRef): Promise<T | undefined>;
  /** The records of one namespace (every namespace when undefined) that match the schema. */
  list(mirror: MirrorSource, cluster: string, namespace?: string): Promise<T[]>;
  /** Removes a record (absent already is fine). */
  delete(backbone: Backbone, ref: RecordRef): Promise<void>;
}

// The JSON value of an entry, or undefined when it is not JSON (then it is rewritten).
function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Declares the hand-off records of `kind`, checked by `schema`. */
export function handOffRecordType<Schema extends z.ZodType>(
  kind: string,
  schema: Schema,
): HandOffRecordType<z.infer<Schema>> {
  type T = z.infer<Schema>;
  const keyOf = (ref: RecordRef): string => objectKey({ ...ref, kind });
  const check = (value: unknown): T | undefined => {
    const parsed = schema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  };
  return {
    kind,
    async put(backbone, ref, record) {
      // In the schema's field order: a record built with its fields in another order is still
      // the same record, and is not rewritten (which would wake every reader for nothing).
      const wanted = JSON.stringify(schema.parse(record));
      const key = keyOf(ref);
      const current = await readMirrorEntry(backbone, key);
      if (current !== undefined && JSON.stringify(check(parse(current.text))) === wanted) return;
      await putMirrorValue(backbone, key, wanted, current?.ref);
    },
    async read(mirror, ref) {
      return check(await getMirrored<unknown>(mirror, { ...ref, kind }));
    },
    async list(mirror, cluster, namespace) {
      const values = await listMirrored<unknown>(mirror, { cluster, kind, namespace });
      return values.flatMap((value) => {
        const record = check(value);
        return record === undefined ? [] : [record];
      });
    },
    async delete(backbone, ref) {
      const key = keyOf(ref);
      const current = await readMirrorEntry(backbone, key).catch(() => undefined);
      await deleteMirrorValue(backbone, key, current?.ref);
    },
  };
}
