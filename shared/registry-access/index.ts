// Public entry point of registry access: the operator-wide settings and the pull credentials
// upstream's pods would use, shared by catalog images and bundle images.
export {
  bundleUnpackPod,
  catalogRegistryPod,
  pullCredentials,
  type CatalogSourceRef,
} from './pull-secrets.js';
export {
  registryAccessOf,
  registryAccessSettingsFromEnv,
  registryEnv,
  splitFiles,
} from './settings.js';
export {
  PullSecretError,
  RegistryAccessConfigError,
  type PullingPod,
  type RegistryAccess,
  type RegistryAccessSettings,
} from './types.js';
