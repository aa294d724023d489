// Public entry point of the package server: the aggregated API server for
// packages.operators.coreos.com/v1 over the catalog indexes in JetStream (see README.md).
export {
  packagesGroup,
  packagesVersion,
  packagesResource,
  packagesApiVersion,
} from './manifest.js';
export { RequestHeaderConfigError } from './auth.js';
export type { PackageServer, PackageServerOptions, PackageServiceRef } from './types.js';
export { defaultPackageService, registerPackageApi, startPackageServer } from './start.js';
