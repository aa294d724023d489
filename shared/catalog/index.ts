// Public entry point of the catalog model: parse File-Based Catalogs, build the immutable
// index, digest it, store and load it, and query it. Internals (the CSV scanner, draft
// structures) stay private to this folder.

export { parseCatalogText, formatOfFile } from './fbc-text.js';
export type { CatalogObject, CatalogTextFormat } from './fbc-text.js';
export { readCatalogDirectory } from './fbc-directory.js';
export { buildCatalogIndex } from './build.js';
export type { CatalogBuildResult } from './build.js';
export { catalogDigest } from './digest.js';
export {
  serializeCatalogIndex,
  loadCatalogIndex,
  serializeCatalogContent,
  loadCatalogContent,
} from './serialize.js';
export { CatalogIndex, allBundleProperties, skipRangeOptions } from './model.js';
export type {
  CatalogApi,
  CatalogBundle,
  CatalogChannel,
  CatalogChannelEntry,
  CatalogDependency,
  CatalogIndexData,
  CatalogInstallMode,
  CatalogPackage,
  CatalogProperty,
  InstalledBundle,
  UpgradeCandidate,
  UpgradeEdge,
  UpgradeVia,
} from './model.js';
export { decodeBundleObject, decodeBundleManifests } from './bundle-content.js';
export type {
  BundleContent,
  BundleManifests,
  BundleObject,
  CatalogContent,
} from './bundle-content.js';
export {
  PackageObjectSchema,
  ChannelObjectSchema,
  BundleObjectSchema,
  DeprecationsObjectSchema,
  PropertySchema,
} from './fbc-schema.js';
export type {
  PackageObject,
  ChannelObject,
  BundleObject as FbcBundleObject,
  DeprecationsObject,
  Property,
} from './fbc-schema.js';
export {
  CatalogWarningCode,
  CatalogErrorCode,
  CatalogError,
  CatalogMalformedError,
  CatalogUnreadableError,
  SerializedIndexError,
} from './problems.js';
export type { CatalogWarning } from './problems.js';

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
