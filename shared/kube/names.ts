// Hashed object names as upstream OLM makes them.
import { createHash } from 'node:crypto';

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
