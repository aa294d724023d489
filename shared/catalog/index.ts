// Public entry point of the catalog model: parse File-Based Catalogs, build the immutable
// index, digest it, serialize and load it, and query it (shared/handoff stores it in JetStream). Internals (the CSV scanner, draft
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

export { loadCatalogDirectory, buildCatalogFromTexts } from './sources.js';
