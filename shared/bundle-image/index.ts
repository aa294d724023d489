// Public entry point of bundle images: unpack a bundle from its image (pull, check, store by
// digest in JetStream) and the pull credentials of a bundle's CatalogSource.
export { BundleUnpacker, type BundleUnpackerOptions, type UnpackSource } from './unpacker.js';
export { bundleOfImage, manifestsLabel, metadataLabel } from './contents.js';
export { bundleBucket, openBundleStore, readUnpackedBundle, storeUnpackedBundle } from './store.js';
export { catalogPullCredentials } from './access.js';
export {
  BundleImageError,
  BundleImageErrorCode,
  UnpackedBundleSchema,
  type UnpackedBundle,
} from './types.js';
