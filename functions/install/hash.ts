// The hashes upstream OLM puts into names, labels and annotations.
const fnvPrime = 0x100000001b3n;
const fnvOffset = 0xcbf29ce484222325n;
const mask64 = 0xffffffffffffffffn;

/** FNV-1a 64-bit of `text` (UTF-8), as lowercase hex without padding (Go's %x). */
export function fnv64aHex(text: string): string {
  let hash = fnvOffset;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= BigInt(byte);
    hash = (hash * fnvPrime) & mask64;
  }
  return hash.toString(16);
}

/** A stable JSON rendering (object keys sorted) for hashing structures. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Whether two structures are the same JSON (object key order aside). */
export const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);
