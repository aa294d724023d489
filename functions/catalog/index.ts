// The catalog function: CatalogSources into catalog indexes (see README.md).
export {
  catalogFieldManager,
  catalogSourceKey,
  catalogSyncBucket,
  createFunction,
  startCatalogFunction,
} from './definition.js';
export type { CatalogFunctionOptions, RegistryCatalogFetcher, SourceKind } from './definition.js';
