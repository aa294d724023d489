// Waiting on a condition with a named deadline, never a fixed sleep.

/** Polls `condition` until it returns a truthy value, or fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  condition: () => T | Promise<T>,
  timeoutMs = 10_000,
  intervalMs = 10,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? ` (last error: ${last.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
