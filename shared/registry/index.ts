// Public entry point of the registry area: the operator-registry gRPC server over a catalog,
// and the client that reads a registry back as File-Based Catalog objects.
export { fetchRegistryCatalog, probeRegistry, RegistryUnavailableError } from './client.js';
export type { RegistryFetchOptions, RegistryProbe } from './client.js';
export type { BundleManifestData } from './catalog-objects.js';
export { loadRegistryCatalog, startRegistryServer } from './server.js';
export type { RegistryServerOptions, RunningRegistryServer } from './server.js';
export { RegistryCatalog, RegistryNotFoundError } from './registry-catalog.js';
export { registryServiceName } from './protocol.js';
