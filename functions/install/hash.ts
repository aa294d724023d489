// The hashes upstream OLM puts into names, labels and annotations.
import { canonicalJson } from '../../shared/kube/json.js';

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

export { canonicalJson };

/** Whether two structures are the same JSON (object key order aside). */
export const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);
