// The content digest of a catalog: sha256 over the sorted hashes of its objects, so the same
// objects give the same digest whatever files they are spread over and in whatever order.
import { createHash } from 'node:crypto';
import type { CatalogObject } from './fbc-text.js';

/** sha256 content digest ("sha256:<hex>") of a catalog's objects. */
export function catalogDigest(objects: readonly CatalogObject[]): string {
  const hashes = objects.map((o) => o.hash).sort();
  const hash = createHash('sha256');
  for (const h of hashes) hash.update(h).update('\n');
  return `sha256:${hash.digest('hex')}`;
}
