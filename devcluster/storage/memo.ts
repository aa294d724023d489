// Values derived from objects that are never mutated (stored objects), kept on the objects
// themselves: a WeakMap entry costs several times more to add, and in garbage collection, than
// a property, which matters at one or more entries per write.

/**
 * The value `compute` derives from `object`, computed once and then kept on the object under
 * `slot` as a non-enumerable symbol property: invisible to JSON.stringify, Object.keys, spread,
 * structuredClone and deep comparisons, so the object is the same JSON value as before.
 * Only for objects nobody mutates afterwards (a change would leave the value stale).
 */
export function memoized<O extends object, V>(object: O, slot: symbol, compute: (o: O) => V): V {
  const held = (object as Record<symbol, V | undefined>)[slot];
  if (held !== undefined) return held;
  const value = compute(object);
  Object.defineProperty(object, slot, { value });
  return value;
}
