// Client of the operator-registry gRPC API (api.Registry): reads a whole catalog as File-Based
// Catalog objects, and probes a registry's health (grpc.health.v1) for CatalogSource
// connectionState. Works against olmq's server and upstream's (`opm serve`, registry pods).
import {
  Client,
  credentials,
  Metadata,
  status,
  type ClientReadableStream,
  type ClientUnaryCall,
  type MethodDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import type { CatalogObject } from '../catalog/index.js';
import {
  bundleKey,
  bundleManifestData,
  registryCatalogObjects,
  type BundleManifestData,
} from './catalog-objects.js';
import {
  registryProtocol,
  type ApiBundle,
  type ApiPackage,
  type GetBundleRequest,
  type ServingStatus,
} from './protocol.js';
import { decodeBundleManifestBytes, type BundleManifestBytes } from './wire.js';

/** What a call needs of a method: its path and how to write the request and read the answer. */
type CallMethod<Req, Res> = Pick<
  MethodDefinition<Req, Res>,
  'path' | 'requestSerialize' | 'responseDeserialize'
>;

/** Where a registry answered or failed: the dial target as used. */
export interface RegistryFetchOptions {
  /** host:port of the registry. */
  address: string;
  /** Stops the fetch (e.g. the function is stopping). */
  signal?: AbortSignal;
  /** Gives up connecting after this long (default 10 s). */
  timeoutMs?: number;
  /** Deadline of each call once connected (default 120 s; ListBundles of a big catalog is one call). */
  callTimeoutMs?: number;
  /** Calls in flight at once while reading packages and manifests (default 16). */
  concurrency?: number;
  /**
   * Manifests of bundles with an image, kept between fetches of the same registry (pass the same
   * Map each poll): a bundle whose package, name and image are unchanged is not fetched again.
   * Entries of bundles the registry no longer lists are removed.
   */
  manifestCache?: Map<string, BundleManifestData>;
}

/** Thrown when the registry cannot be reached or answers with an error. */
export class RegistryUnavailableError extends Error {
  /** The gRPC status name of the failed call (e.g. UNAVAILABLE), when a call failed. */
  readonly status: string | undefined;

  constructor(
    readonly address: string,
    message: string,
    options?: ErrorOptions & { status?: string },
  ) {
    super(message, options);
    this.name = 'RegistryUnavailableError';
    this.status = options?.status;
  }
}

const defaultConnectTimeoutMs = 10_000;
const defaultCallTimeoutMs = 120_000;

function statusName(code: number): string {
  return (status as unknown as Record<number, string>)[code] ?? String(code);
}

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === 'number';
}

/** A message a person can act on, for a failed call. */
function failure(
  address: string,
  what: string,
  error: unknown,
  timeoutMs: number,
): RegistryUnavailableError {
  if (!isServiceError(error)) {
    const detail = error instanceof Error ? error.message : String(error);
    return new RegistryUnavailableError(address, `registry ${address}: ${what} failed: ${detail}`, {
      cause: error,
    });
  }
  const name = statusName(error.code);
  const detail = `gRPC ${name}: ${error.details}`;
  let message: string;
  if (error.code === status.UNAVAILABLE) {
    message = `registry ${address} is unavailable (${what}): ${detail}; check that a registry serves gRPC at this host:port and that it is reachable from here`;
  } else if (error.code === status.DEADLINE_EXCEEDED) {
    message = `registry ${address} did not answer ${what} within ${timeoutMs} ms (${detail})`;
  } else if (error.code === status.UNIMPLEMENTED) {
    message = `registry ${address} does not implement ${what} (${detail}); is it an operator-registry (api.Registry) server?`;
  } else {
    message = `registry ${address}: ${what} failed (${detail})`;
  }
  return new RegistryUnavailableError(address, message, { cause: error, status: name });
}

/** The calls of one fetch over one connection, all cancelled together on abort. */
class RegistrySession {
  readonly client: Client;
  readonly #calls = new Set<ClientUnaryCall | ClientReadableStream<unknown>>();
  #aborted = false;

  constructor(
    readonly address: string,
    signal: AbortSignal | undefined,
  ) {
    try {
      this.client = new Client(address, credentials.createInsecure(), {
        // Bundles with big CRDs exceed gRPC's 4 MB default.
        'grpc.max_receive_message_length': -1,
      });
    } catch (error) {
      throw new RegistryUnavailableError(
        address,
        `registry address "${address}" is not a valid host:port (${error instanceof Error ? error.message : String(error)})`,
        { cause: error },
      );
    }
    signal?.addEventListener('abort', () => this.abort(), { once: true });
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  abort(): void {
    this.#aborted = true;
    for (const call of this.#calls) call.cancel();
  }

  close(): void {
    this.client.close();
  }

  unary<Req, Res>(
    method: CallMethod<Req, Res>,
    request: Req,
    what: string,
    timeoutMs: number,
  ): Promise<Res> {
    return new Promise((resolve, reject) => {
      const call = this.client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
        (error, response) => {
          this.#calls.delete(call);
          if (error !== null || response === undefined)
            reject(failure(this.address, what, error, timeoutMs));
          else resolve(response);
        },
      );
      this.#calls.add(call);
    });
  }

  stream<Req, Res>(
    method: CallMethod<Req, Res>,
    request: Req,
    what: string,
    timeoutMs: number,
  ): Promise<Res[]> {
    return new Promise((resolve, reject) => {
      const out: Res[] = [];
      const call = this.client.makeServerStreamRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
      );
      this.#calls.add(call);
      call.on('data', (message: Res) => out.push(message));
      call.on('error', (error) => {
        this.#calls.delete(call);
        reject(failure(this.address, what, error, timeoutMs));
      });
      call.on('end', () => {
        this.#calls.delete(call);
        resolve(out);
      });
    });
  }
}

async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    // After one failure the others stop taking items: the fetch has failed already.
    while (next < items.length && !failed) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Reads the whole catalog a registry serves (ListPackages, GetPackage, ListBundles, and GetBundle
 * for the manifests ListBundles leaves out), as File-Based Catalog objects. Throws
 * RegistryUnavailableError naming the address, the failed call and its gRPC status.
 */
export async function fetchRegistryCatalog(
  options: RegistryFetchOptions,
): Promise<CatalogObject[]> {
  const { address } = options;
  const connectMs = options.timeoutMs ?? defaultConnectTimeoutMs;
  const callMs = options.callTimeoutMs ?? defaultCallTimeoutMs;
  const limit = Math.max(1, options.concurrency ?? 16);
  if (options.signal?.aborted === true) {
    throw new RegistryUnavailableError(
      address,
      `reading the catalog from registry ${address} was aborted`,
      {
        cause: options.signal.reason,
      },
    );
  }
  const methods = registryProtocol().registry;
  const session = new RegistrySession(address, options.signal);
  try {
    // The first call also connects: its deadline is the connect timeout.
    const names = await session.stream(methods.ListPackages, {}, 'ListPackages', connectMs);
    const packages: ApiPackage[] = [];
    await forEachLimited(names, limit, async ({ name }) => {
      packages.push(
        await session.unary(
          methods.GetPackage,
          { name },
          `GetPackage ${JSON.stringify(name)}`,
          callMs,
        ),
      );
    });
    const bundles = await session.stream(methods.ListBundles, {}, 'ListBundles', callMs);

    // ListBundles leaves out the manifests of bundles that have an image; fetch them once per bundle.
    const wanted = new Map<string, ApiBundle>();
    for (const b of bundles) {
      const k = bundleKey(b.packageName, b.csvName);
      if (b.object.length === 0 && b.csvJson === '' && !wanted.has(k)) wanted.set(k, b);
    }
    // Only csvJson and object are read, as bytes: they become base64 without passing through
    // JavaScript strings (see wire.ts).
    const getManifests: CallMethod<GetBundleRequest, BundleManifestBytes> = {
      path: methods.GetBundle.path,
      requestSerialize: methods.GetBundle.requestSerialize,
      responseDeserialize: decodeBundleManifestBytes,
    };
    const cache = options.manifestCache;
    const cacheKey = (b: ApiBundle): string =>
      `${bundleKey(b.packageName, b.csvName)}\u0000${b.bundlePath}`;
    const manifests = new Map<string, BundleManifestData>();
    const toFetch: [string, ApiBundle][] = [];
    for (const [k, b] of wanted) {
      const cached = cache?.get(cacheKey(b));
      if (cached === undefined) toFetch.push([k, b]);
      else manifests.set(k, cached);
    }
    await forEachLimited(toFetch, limit, async ([k, b]) => {
      const bytes = await session.unary(
        getManifests,
        { pkgName: b.packageName, channelName: b.channelName, csvName: b.csvName },
        `GetBundle ${b.packageName}/${b.channelName}/${b.csvName}`,
        callMs,
      );
      const data = bundleManifestData(
        bytes.object.length > 0 ? bytes.object : bytes.csvJson === null ? [] : [bytes.csvJson],
      );
      manifests.set(k, data);
      cache?.set(cacheKey(b), data);
    });
    if (cache !== undefined) {
      const listed = new Set([...wanted.values()].map(cacheKey));
      for (const k of cache.keys()) if (!listed.has(k)) cache.delete(k);
    }
    return registryCatalogObjects(address, { packages, bundles, manifests });
  } catch (error) {
    if (session.aborted) {
      throw new RegistryUnavailableError(
        address,
        `reading the catalog from registry ${address} was aborted`,
        {
          cause: options.signal?.reason ?? error,
        },
      );
    }
    throw error;
  } finally {
    session.close();
  }
}

/** What a health probe of a registry found. */
export interface RegistryProbe {
  /** The connection state as CatalogSource status.connectionState.lastObservedState reports it. */
  readonly state: 'READY' | 'TRANSIENT_FAILURE';
  /** grpc.health.v1 status, 'UNIMPLEMENTED' when the server has no health service, null when unreachable. */
  readonly health: ServingStatus | 'UNIMPLEMENTED' | null;
  /** Whether the registry can serve: connected and SERVING (or no health service to say otherwise). */
  readonly serving: boolean;
  /** One line for a person: what was found, or why it failed. */
  readonly message: string;
}

/** Probes a registry with grpc.health.v1 Check; never throws. */
export async function probeRegistry(address: string, timeoutMs = 5_000): Promise<RegistryProbe> {
  let session: RegistrySession;
  try {
    session = new RegistrySession(address, undefined);
  } catch (error) {
    return {
      state: 'TRANSIENT_FAILURE',
      health: null,
      serving: false,
      message: error instanceof Error ? error.message : String(error),
    };
  }
  try {
    const { status: health } = await session.unary(
      registryProtocol().health.Check,
      { service: '' },
      'Health.Check',
      timeoutMs,
    );
    return {
      state: 'READY',
      health,
      serving: health === 'SERVING',
      message: `registry ${address} is ${health}`,
    };
  } catch (error) {
    const cause = error instanceof RegistryUnavailableError ? error.cause : error;
    if (isServiceError(cause) && cause.code === status.UNIMPLEMENTED) {
      // Connected, but the server offers no health service: nothing says it cannot serve.
      return {
        state: 'READY',
        health: 'UNIMPLEMENTED',
        serving: true,
        message: `registry ${address} is reachable (no grpc.health.v1 service)`,
      };
    }
    const reached =
      isServiceError(cause) &&
      cause.code !== status.UNAVAILABLE &&
      cause.code !== status.DEADLINE_EXCEEDED;
    return {
      state: reached ? 'READY' : 'TRANSIENT_FAILURE',
      health: null,
      serving: false,
      message: error instanceof Error ? error.message : String(error),
    };
  } finally {
    session.close();
  }
}
