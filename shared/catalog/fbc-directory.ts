// Reads a File-Based Catalog directory: every .json/.yaml/.yml file below the root, except
// what `.indexignore` files exclude. The only I/O of the catalog model.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { formatOfFile, parseCatalogText, type CatalogObject } from './fbc-text.js';
import { compileIgnoreRules, type IgnoreRules } from './index-ignore.js';
import { CatalogUnreadableError } from './problems.js';

const ignoreFileName = '.indexignore';

/** Files read ahead of the one being parsed. */
const readAhead = 8;

interface ScopedRules {
  readonly dir: string;
  readonly rules: IgnoreRules;
}

/** Reads every catalog object below `root`; origins are paths relative to `root`. */
export async function readCatalogDirectory(root: string): Promise<CatalogObject[]> {
  const files: string[] = [];
  await collectFiles(root, [], files);
  files.sort();
  const objects: CatalogObject[] = [];
  // Reads run a few files ahead of parsing, so the disk and the parser overlap; objects still
  // come out in file order.
  const read = (file: string): Promise<string> =>
    readFile(file, 'utf8').catch((error: unknown) => {
      throw new CatalogUnreadableError(file, { cause: error });
    });
  const ahead = new Map(files.slice(0, readAhead).map((file, i) => [i, read(file)]));
  for (const [i, file] of files.entries()) {
    const next = files[i + readAhead];
    if (next !== undefined) ahead.set(i + readAhead, read(next));
    const text = await (ahead.get(i) ?? read(file));
    ahead.delete(i);
    const format = formatOfFile(file) ?? 'auto';
    for (const object of parseCatalogText(text, relative(root, file), format)) objects.push(object);
  }
  return objects;
}

async function collectFiles(
  dir: string,
  inherited: readonly ScopedRules[],
  out: string[],
): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    throw new CatalogUnreadableError(dir, { cause: error });
  }
  let scopes = inherited;
  if (entries.some((e) => e.name === ignoreFileName && e.isFile())) {
    const path = join(dir, ignoreFileName);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new CatalogUnreadableError(path, { cause: error });
    }
    scopes = [...inherited, { dir, rules: compileIgnoreRules(text) }];
  }
  const subdirectories: Promise<void>[] = [];
  for (const entry of entries) {
    if (entry.name === ignoreFileName) continue;
    const path = join(dir, entry.name);
    const isDirectory = entry.isDirectory();
    const ignored = scopes.some((s) =>
      s.rules.ignores(relative(s.dir, path).split('\\').join('/'), isDirectory),
    );
    if (ignored) continue;
    // Folders are listed concurrently; the caller sorts the files.
    if (isDirectory) subdirectories.push(collectFiles(path, scopes, out));
    else if (entry.isFile() && formatOfFile(entry.name) !== undefined) out.push(path);
  }
  await Promise.all(subdirectories);
}
