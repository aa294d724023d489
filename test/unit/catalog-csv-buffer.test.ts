// Regression: a CSV larger than the scanner's 1 MB buffer was scanned from the old buffer, so a
// bundle inherited fields (spec.skips) of the CSV decoded before it. Runs in its own process so
// the buffer starts at its initial size.
import { join } from 'node:path';
import t from 'tap';
import { loadCatalogDirectory } from '../../shared/catalog/index.js';
import { operatorhubPackages } from '../harness/repo.js';

t.test('catalog csv - a CSV bigger than the scan buffer is read from its own bytes', async (t) => {
  const dir = join(operatorhubPackages, 'stackgres-community');
  const { index } = await loadCatalogDirectory(dir);
  // v1.18.7's CSV (24 KB) skips six stackgres bundles; v1.18.8's (1 MB) skips nothing.
  t.same(index.getBundle('stackgres-community', 'stackgres-community.v1.18.7')?.skips.length, 6);
  t.same(index.getBundle('stackgres-community', 'stackgres-community.v1.18.8')?.skips, []);
});
