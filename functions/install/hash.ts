// The hashes upstream OLM puts into names, labels and annotations.
import { canonicalJson } from '../../shared/kube/json.js';

/** FNV-1a 64-bit of `text` (UTF-8), as lowercase hex without padding (Go's %x). */
export function fnv64aHex(text: string): string {
  // The state as four 16-bit limbs, lowest first (BigInt arithmetic per byte costs a hundred
  // times more: a deployment's hash is taken at every install pass). The prime is 2^40 + 0x1b3.
  let v0 = 0x2325;
  let v1 = 0x8422;
  let v2 = 0x9ce4;
  let v3 = 0xcbf2;
  for (const byte of Buffer.from(text, 'utf8')) {
    v0 ^= byte;
    const r0 = v0 * 0x1b3;
    const r1 = v1 * 0x1b3 + (r0 >>> 16);
    const r2 = v2 * 0x1b3 + (v0 << 8) + (r1 >>> 16);
    const r3 = v3 * 0x1b3 + (v1 << 8) + (r2 >>> 16);
    v0 = r0 & 0xffff;
    v1 = r1 & 0xffff;
    v2 = r2 & 0xffff;
    v3 = r3 & 0xffff;
  }
  const high = v3 * 0x10000 + v2;
  const low = v1 * 0x10000 + v0;
  return high === 0 ? low.toString(16) : high.toString(16) + low.toString(16).padStart(8, '0');
}

export { canonicalJson };

/** Whether two structures are the same JSON (object key order aside). */
export const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);
