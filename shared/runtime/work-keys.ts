// Typed work keys: each definition declares its key type once, and every trigger, follow-up
// and reconcile goes through it, so no code takes a key apart by position.
import type { WorkItem, WorkKeyType } from './types.js';

/** Words of a work subject that no key type of that queue can have produced. */
export class MalformedWorkKeyError extends Error {
  /** Retrying the same words cannot help. */
  readonly retryable = false;
  constructor(queue: string, words: readonly string[], expected: readonly string[]) {
    super(
      `malformed ${queue} work key [${words.join(', ')}]: expected ${expected.length} words (${expected.join(', ') || 'none'})`,
    );
    this.name = 'MalformedWorkKeyError';
  }
}

/** A key made of named words, e.g. { namespace, name }. */
export type FieldKey<Field extends string> = { readonly [F in Field]: string };

/**
 * The key type of `queue` whose keys are the named `fields`, in this order in the subject, e.g.
 * `workKeyType('install-csv', ['namespace', 'name'])`. No fields: one key per cluster.
 */
export function workKeyType<const Field extends string>(
  queue: string,
  fields: readonly Field[],
): WorkKeyType<FieldKey<Field>> {
  const encode = (key: FieldKey<Field>): readonly string[] => fields.map((f) => key[f]);
  return {
    queue,
    words: fields.length,
    encode,
    decode(words) {
      if (words.length !== fields.length) throw new MalformedWorkKeyError(queue, words, fields);
      return Object.fromEntries(fields.map((f, i) => [f, words[i]])) as FieldKey<Field>;
    },
    of: (key) => ({ queue, key: encode(key) }),
  };
}

/** The key of something one namespace holds, by name: the most common key. */
export type NamespacedName = FieldKey<'namespace' | 'name'>;

/** A work item's key as one readable word, for logs: `ns/name`. */
export const describeKey = (item: Pick<WorkItem, 'key'>): string => item.key.join('/');
