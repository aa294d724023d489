// Paths of the repository and the team's shared folder, found from the compiled test file
// (dist/test/...), never from the current directory.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The team's shared folder beside the repository (catalogs, spec). */
export const sharedDir = join(repoRoot, '..', 'shared');

/** The olmq CLI as built. */
export const olmqBin = join(repoRoot, 'dist', 'cli', 'main.js');
