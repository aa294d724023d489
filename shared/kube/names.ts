// Hashed object names as upstream OLM makes them.
import { createHash } from 'node:crypto';
import { canonicalJson } from './json.js';

/** Go's big.Int.Text(62) of a byte string. */
export function base62(bytes: Buffer): string {
  const digits = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
  let n = BigInt(`0x${bytes.toString('hex') || '0'}`);
  if (n === 0n) return '0';
  let out = '';
  while (n > 0n) {
    out = (digits[Number(n % 62n)] ?? '') + out;
    n /= 62n;
  }
  return out;
}

/** base62 of sha224 over `text` (upstream's hash in generated RBAC names and labels). */
export function sha224Base62(text: string): string {
  return base62(createHash('sha224').update(text).digest());
}

/** FNV-1a 32-bit of `text` (UTF-8). */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** kube's rand.SafeEncodeString: each byte to a character no word can be spelled with. */
export function safeEncodeString(text: string): string {
  const alphanums = 'bcdfghjklmnpqrstvwxz2456789';
  return [...Buffer.from(text, 'utf8')].map((b) => alphanums[b % alphanums.length]).join('');
}

/**
 * Upstream's generateName for a CSV's RBAC: `<base>-<hash>`, the hash the safe-encoded decimal
 * FNV-1a 32 of `value` (of its canonical JSON here; upstream hashes Go's printed form, which is
 * not reproduced), the base shortened so the name keeps within 63 characters.
 */
export function generatedRbacName(base: string, value: unknown): string {
  const hash = safeEncodeString(String(fnv32a(canonicalJson(value))));
  return `${base.slice(0, 63 - hash.length - 1)}-${hash}`;
}
