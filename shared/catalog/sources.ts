// Catalogs from where File-Based Catalogs are kept: a directory, or in-memory files (a
// ConfigMap's data), each read and built into an index in one step.
import { readCatalogDirectory } from './fbc-directory.js';
import { buildCatalogIndex, type CatalogBuildResult } from './build.js';
import { parseCatalogText } from './fbc-text.js';

/** Reads a File-Based Catalog directory and builds its index. */
export async function loadCatalogDirectory(root: string): Promise<CatalogBuildResult> {
  return buildCatalogIndex(await readCatalogDirectory(root));
}

/**
 * Builds an index from in-memory files (e.g. a ConfigMap's data: key → text); keys ending in
 * .json/.yaml/.yml fix the syntax, others are detected from their content.
 */
export function buildCatalogFromTexts(files: Readonly<Record<string, string>>): CatalogBuildResult {
  const objects = Object.keys(files)
    .sort()
    .flatMap((name) => {
      const format = name.endsWith('.json')
        ? 'json'
        : name.endsWith('.yaml') || name.endsWith('.yml')
          ? 'yaml'
          : 'auto';
      return parseCatalogText(files[name] ?? '', name, format);
    });
  return buildCatalogIndex(objects);
}
