// Public entry point of bundle images: unpack a bundle from its image (pull, check, store by
// digest in JetStream) and the registry access it needs.
export { BundleUnpacker, type BundleUnpackerOptions, type UnpackSource } from './unpacker.js';
export { bundleOfImage, manifestsLabel, metadataLabel } from './contents.js';
export { bundleBucket, openBundleStore, readUnpackedBundle, storeUnpackedBundle } from './store.js';
export {
  RegistryAccessConfigError,
  bundleImageAccessFromEnv,
  catalogPullCredentials,
  registryAccessOf,
  registryEnv,
  type RegistryAccess,
} from './access.js';
export {
  BundleImageError,
  BundleImageErrorCode,
  UnpackedBundleSchema,
  type BundleImageAccessConfig,
  type UnpackedBundle,
} from './types.js';
