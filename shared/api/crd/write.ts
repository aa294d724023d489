// `npm run gen:crds`: writes crds/*.yaml from the schemas. Usage: node dist/shared/api/crd/write.js <dir>
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderCrdFiles } from './render.js';

/** Writes every generated CRD into `dir` and removes stale generated files; returns the names written. */
export async function writeCrds(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files = renderCrdFiles();
  const wanted = new Set(files.map((file) => file.fileName));
  for (const existing of await readdir(dir)) {
    if (
      existing.startsWith('operators.coreos.com_') &&
      existing.endsWith('.yaml') &&
      !wanted.has(existing)
    ) {
      await rm(join(dir, existing));
    }
  }
  for (const file of files) await writeFile(join(dir, file.fileName), file.text);
  return files.map((file) => file.fileName);
}

/** Command-line entry: `node dist/shared/api/crd/write.js <dir>`; exit code 2 on bad usage. */
async function main(argv: readonly string[]): Promise<void> {
  const target = argv[2];
  if (target === undefined) {
    process.stderr.write('usage: node dist/shared/api/crd/write.js <output dir>\n');
    process.exitCode = 2;
    return;
  }
  const dir = resolve(target);
  const written = await writeCrds(dir);
  process.stdout.write(`wrote ${String(written.length)} CRDs to ${dir}\n`);
}

// Run only when executed directly, so importing writeCrds has no side effects.
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(resolve(entry)).href) {
  await main(process.argv);
}
