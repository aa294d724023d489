// What functions hand each other through JetStream: catalog indexes (stored by digest, with a
// CatalogIndex record per CatalogSource) and resolutions (a Resolution record per namespace).
export {
  catalogBucket,
  catalogIndexKind,
  catalogIndexRecords,
  CatalogIndexRecordSchema,
  openCatalogStore,
  storeCatalog,
  fetchCatalogIndex,
  fetchCatalogContent,
  CatalogIndexCache,
  CatalogNotStoredError,
  putCatalogIndexRecord,
  deleteCatalogIndexRecord,
  readCatalogIndexRecords,
  readCatalogIndexRecord,
} from './catalog-store.js';
export type { CatalogIndexRecord } from './catalog-store.js';
export { handOffRecordType, type HandOffRecordType, type RecordRef } from './record-type.js';
export { resolutionRecords, resolutionRef } from './resolution.js';
