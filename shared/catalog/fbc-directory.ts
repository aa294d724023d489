// Reads a File-Based Catalog directory: every .json/.yaml/.yml file below the root, except
// what `.indexignore` files exclude. The only I/O of the catalog model.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { formatOfFile, parseCatalogText, type CatalogObject } from './fbc-text.js';
import { compileIgnoreRules, type IgnoreRules } from './index-ignore.js';
import { CatalogUnreadableError } from './problems.js';

const ignoreFileName = '.indexignore';

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
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new CatalogUnreadableError(file, { cause: error });
    }
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
  for (const entry of entries) {
    if (entry.name === ignoreFileName) continue;
    const path = join(dir, entry.name);
    const isDirectory = entry.isDirectory();
    const ignored = scopes.some((s) =>
      s.rules.ignores(relative(s.dir, path).split('\\').join('/'), isDirectory),
    );
    if (ignored) continue;
    if (isDirectory) await collectFiles(path, scopes, out);
    else if (entry.isFile() && formatOfFile(entry.name) !== undefined) out.push(path);
  }
}
