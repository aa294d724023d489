// The kubectl versions the image carries: `kubectl` on PATH is a dispatcher running the
// `kubectl.1.N` beside it that matches the server's /version minor.
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

/** Minor versions of the kubectl binaries beside the `kubectl` on PATH (kubectl.1.N), ascending. */
export function kubectlMinors(): number[] {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const path = join(dir, 'kubectl');
    if (!existsSync(path)) continue;
    return readdirSync(dirname(realpathSync(path)))
      .map((name) => /^kubectl\.1\.(\d+)$/.exec(name)?.[1])
      .filter((minor): minor is string => minor !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }
  return [];
}
