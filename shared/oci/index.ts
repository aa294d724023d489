// The registry client's public entry point.
export { RegistryClient } from './client.js';
export { OciError, OciErrorCode, isOciError } from './errors.js';
export { credentialsFromDockerConfigs, firstCredential, registryOfConfigKey } from './auth.js';
export { parseMirrorRules } from './mirrors.js';
export {
  formatImageReference,
  isLoopbackRegistry,
  parseImageReference,
  type ImageReference,
} from './reference.js';
export { readTar, writeTar, type TarEntry } from './tar.js';
export {
  MediaType,
  defaultPullLimits,
  type CredentialLookup,
  type MirrorRule,
  type Platform,
  type PulledImage,
  type PullLimits,
  type PullOptions,
  type RegistryClientOptions,
  type RegistryCredential,
} from './types.js';
