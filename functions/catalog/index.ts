// The catalog function: CatalogSources into catalog indexes (see README.md).
export {
  catalogFieldManager,
  catalogSyncBucket,
  createFunction,
  startCatalogFunction,
} from './definition.js';
export type { CatalogFunctionOptions, RegistryCatalogFetcher, SourceKind } from './definition.js';
export { catalogSourceKey } from './keys.js';
