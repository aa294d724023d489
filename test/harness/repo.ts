// Paths of the repository and its catalog fixtures, found from the compiled test file
// (dist/test/...), never from the current directory.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The six real packages `npm start` serves and the tests install (catalogs/LICENSE-NOTICE.md). */
export const smallCatalog = join(repoRoot, 'catalogs', 'example');

/** Single packages of the community catalog some tests read (see LICENSE-NOTICE.md). */
export const operatorhubPackages = join(repoRoot, 'test', 'fixtures', 'catalogs', 'operatorhub');

/** The olmq CLI as built. */
export const olmqBin = join(repoRoot, 'dist', 'cli', 'main.js');
