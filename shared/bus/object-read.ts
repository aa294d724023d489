// Reading a whole object from a JetStream object store without waiting for ever. nats.js reads
// an object's chunks through a push consumer that has no deadline: when the stream's leader
// dies mid-read, or a chunk is missing, the read never ends and holds its reconcile (and the
// work key) for good. Here a read that brings no chunk for `stallMs` is abandoned with a
// timeout, which the function host treats as NATS unavailable and retries.
import type { ObjectStore } from '@nats-io/obj';
import { BusRequestError } from './pipe.js';

/** How long an object read may go without a chunk before it is abandoned. */
export const objectReadStallMs = 15_000;

/** The object's bytes, or null when there is no such object. */
export async function readObject(
  store: ObjectStore,
  name: string,
  stallMs = objectReadStallMs,
): Promise<Uint8Array | null> {
  const found = await store.get(name);
  if (found === null) return null;
  // Settled either way, so a read abandoned below leaves no unhandled rejection behind.
  const ended: Promise<Error | null> = found.error.then(
    (error) => error ?? null, // nats.js resolves undefined on success
    (error: unknown) =>
      error instanceof Error ? error : new Error(`reading object ${name} failed`),
  );
  const reader = found.data.getReader();
  const chunks: Uint8Array[] = [];
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new BusRequestError(
              `reading object ${name} stalled: no data for ${stallMs} ms`,
              'timeout',
            ),
          ),
        stallMs,
      );
    });
    try {
      const { done, value } = await Promise.race([reader.read(), stalled]);
      if (done) break;
      if (value.length > 0) chunks.push(value);
    } catch (error) {
      // Cancelling stops the consumer nats.js opened for the read.
      void reader.cancel().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
  // A digest mismatch is reported on `error` after the stream ends.
  const failure = await ended;
  if (failure !== null) throw failure;
  return Buffer.concat(chunks);
}
