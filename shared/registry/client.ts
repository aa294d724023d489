// Client of the operator-registry gRPC API (registry.proto's Registry service).
// (Placeholder signature so the catalog function can be built in parallel; the registry work
// replaces the body.)
import type { CatalogObject } from '../catalog/index.js';

/** Where a registry answered or failed: the dial target as used. */
export interface RegistryFetchOptions {
  /** host:port of the registry. */
  address: string;
  /** Stops the fetch (e.g. the function is stopping). */
  signal?: AbortSignal;
  /** Gives up connecting after this long. */
  timeoutMs?: number;
}

/** Thrown when the registry cannot be reached or answers with an error. */
export class RegistryUnavailableError extends Error {
  constructor(
    readonly address: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'RegistryUnavailableError';
  }
}

/** Reads the whole catalog a registry serves, as File-Based Catalog objects. */
export function fetchRegistryCatalog(options: RegistryFetchOptions): Promise<CatalogObject[]> {
  return Promise.reject(
    new RegistryUnavailableError(options.address, 'the gRPC registry client is not built yet'),
  );
}
