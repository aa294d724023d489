// What a trigger remembers of the objects it looked at, so that a change leaving every part it
// reads as it was starts no work (see Trigger.parts).

/**
 * What a trigger remembers of the last message of each object it looked at (mapped to work
 * keys, not skipped), by mirror subject: the digests of the parts it asked about. What a change
 * touches is judged against it, so only content this replica has looked at can be skipped.
 * Bounded: the oldest entries go first, and an object without one counts as changed in every
 * part.
 */
export class LastSeen {
  private readonly entries = new Map<string, { seq: number; parts: string }>();

  constructor(private readonly limit: number) {}

  get(subject: string): { seq: number; parts: string } | undefined {
    return this.entries.get(subject);
  }

  /** Whether message `seq` of `subject` has the `parts` remembered of an older one. */
  same(subject: string, seq: number, parts: string): boolean {
    const entry = this.entries.get(subject);
    return entry !== undefined && entry.seq < seq && entry.parts === parts;
  }

  /** Records a message looked at (pickParts); an older one (redelivered) does not replace a newer. */
  look(subject: string, seq: number, parts: string | undefined): void {
    const current = this.entries.get(subject);
    if (current !== undefined && current.seq > seq) return;
    this.entries.delete(subject);
    if (parts === undefined) return;
    this.entries.set(subject, { seq, parts });
    if (this.entries.size > this.limit) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
