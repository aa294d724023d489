// The operator-registry gRPC server: api.Registry over a RegistryCatalog, plus the standard
// grpc.health.v1 service that grpc_health_probe and Kubernetes gRPC probes call. Upstream OLM
// and olmq's own client talk to it unchanged.
import {
  Server,
  ServerCredentials,
  status,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  type ServiceError,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { readCatalogDirectory, type CatalogWarning } from '../catalog/index.js';
import {
  registryProtocol,
  registryServiceName,
  type HealthCheckRequest,
  type HealthCheckResponse,
  type ServingStatus,
} from './protocol.js';
import { RegistryCatalog, RegistryNotFoundError } from './registry-catalog.js';

/** How to start a registry server. */
export interface RegistryServerOptions {
  /** The catalog to serve. */
  readonly catalog: RegistryCatalog;
  /** Address to listen on (default 0.0.0.0, every IPv4 interface, as upstream's :50051). */
  readonly host?: string;
  /** Port (default 50051; 0 picks a free one). */
  readonly port?: number;
  /** Where calls that fail are logged (debug: every call). */
  readonly logger?: Logger;
}

/** A listening registry server. */
export interface RunningRegistryServer {
  /** host:port it listens on, with the actual port. */
  readonly address: string;
  /** The bound port. */
  readonly port: number;
  /**
   * Stops: health turns NOT_SERVING, new calls are refused, calls in flight may finish within
   * `graceMs` (default 5 s), then the rest are cut.
   */
  stop(graceMs?: number): Promise<void>;
}

/** Reads a File-Based Catalog directory into a registry catalog; throws CatalogError when unusable. */
export async function loadRegistryCatalog(
  dir: string,
): Promise<{ catalog: RegistryCatalog; warnings: readonly CatalogWarning[] }> {
  return RegistryCatalog.fromObjects(await readCatalogDirectory(dir));
}

function toServiceError(error: unknown): Partial<ServiceError> {
  if (error instanceof RegistryNotFoundError)
    return { code: status.NOT_FOUND, details: error.message };
  return {
    code: status.INTERNAL,
    details: error instanceof Error ? error.message : String(error),
  };
}

// Resolves when a stream can take more, or when the client went away.
function drained(call: ServerWritableStream<unknown, unknown>): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('cancelled', done);
      resolve();
    };
    call.once('drain', done);
    call.once('cancelled', done);
  });
}

/** Starts serving; resolves once the port is bound. */
export async function startRegistryServer(
  options: RegistryServerOptions,
): Promise<RunningRegistryServer> {
  const { catalog, logger } = options;
  const host = options.host ?? '0.0.0.0';
  const protocol = registryProtocol();
  // Upstream servers send messages of any size (a bundle with big CRDs passes 4 MB).
  const server = new Server({ 'grpc.max_send_message_length': -1 });

  const unary =
    <Req, Res>(method: string, answer: (request: Req) => Res) =>
    (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
      try {
        const response = answer(call.request);
        logger?.debug({ method, request: call.request }, 'registry call');
        callback(null, response);
      } catch (error) {
        logger?.debug({ method, request: call.request, err: error }, 'registry call failed');
        callback(toServiceError(error));
      }
    };

  // Streams honour backpressure: a big ListBundles is written as the client reads it.
  const stream =
    <Req, Res>(method: string, answers: (request: Req) => Iterable<Res>) =>
    (call: ServerWritableStream<Req, Res>): void => {
      void (async () => {
        try {
          for (const message of answers(call.request)) {
            if (call.cancelled) return;
            if (!call.write(message)) await drained(call);
          }
          logger?.debug({ method, request: call.request }, 'registry call');
          call.end();
        } catch (error) {
          logger?.debug({ method, request: call.request, err: error }, 'registry call failed');
          call.emit('error', toServiceError(error));
        }
      })();
    };

  const registry: UntypedServiceImplementation = {
    ListPackages: stream('ListPackages', () => catalog.packageNames().map((name) => ({ name }))),
    GetPackage: unary('GetPackage', (r: { name: string }) => catalog.getPackage(r.name)),
    GetBundle: unary('GetBundle', (r: { pkgName: string; channelName: string; csvName: string }) =>
      catalog.getBundle(r.pkgName, r.channelName, r.csvName),
    ),
    GetBundleForChannel: unary(
      'GetBundleForChannel',
      (r: { pkgName: string; channelName: string }) =>
        catalog.getBundleForChannel(r.pkgName, r.channelName),
    ),
    GetChannelEntriesThatReplace: stream('GetChannelEntriesThatReplace', (r: { csvName: string }) =>
      catalog.entriesThatReplace(r.csvName),
    ),
    GetBundleThatReplaces: unary(
      'GetBundleThatReplaces',
      (r: { csvName: string; pkgName: string; channelName: string }) =>
        catalog.bundleThatReplaces(r.csvName, r.pkgName, r.channelName),
    ),
    GetChannelEntriesThatProvide: stream(
      'GetChannelEntriesThatProvide',
      (r: { group: string; version: string; kind: string }) =>
        catalog.entriesThatProvide(r.group, r.version, r.kind),
    ),
    GetLatestChannelEntriesThatProvide: stream(
      'GetLatestChannelEntriesThatProvide',
      (r: { group: string; version: string; kind: string }) =>
        catalog.latestEntriesThatProvide(r.group, r.version, r.kind),
    ),
    GetDefaultBundleThatProvides: unary(
      'GetDefaultBundleThatProvides',
      (r: { group: string; version: string; kind: string }) =>
        catalog.defaultBundleThatProvides(r.group, r.version, r.kind),
    ),
    ListBundles: stream('ListBundles', () => catalog.listBundles()),
  };
  server.addService(protocol.registry, registry);

  // Health: SERVING for the server as a whole and for api.Registry until stop() begins.
  let serving: ServingStatus = 'SERVING';
  const watchers = new Set<ServerWritableStream<HealthCheckRequest, HealthCheckResponse>>();
  const known = (service: string): boolean => service === '' || service === registryServiceName;
  server.addService(protocol.health, {
    Check: (
      call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
      callback: sendUnaryData<HealthCheckResponse>,
    ) => {
      if (!known(call.request.service)) {
        callback({ code: status.NOT_FOUND, details: `unknown service ${call.request.service}` });
        return;
      }
      callback(null, { status: serving });
    },
    Watch: (call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) => {
      if (!known(call.request.service)) {
        call.write({ status: 'SERVICE_UNKNOWN' });
        return;
      }
      call.write({ status: serving });
      watchers.add(call);
      call.on('cancelled', () => watchers.delete(call));
    },
  } satisfies UntypedServiceImplementation);

  const port = await new Promise<number>((resolve, reject) => {
    // IPv6 literals need brackets in a gRPC target.
    const target = host.includes(':') ? `[${host}]` : host;
    server.bindAsync(
      `${target}:${options.port ?? 50051}`,
      ServerCredentials.createInsecure(),
      (error, bound) => (error === null ? resolve(bound) : reject(error)),
    );
  });

  let stopping: Promise<void> | undefined;
  return {
    address: `${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    stop(graceMs = 5_000): Promise<void> {
      stopping ??= new Promise<void>((resolve) => {
        serving = 'NOT_SERVING';
        // Watch streams never end by themselves: tell them and close them, or shutdown would wait.
        for (const call of watchers) {
          call.write({ status: serving });
          call.end();
        }
        watchers.clear();
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return stopping;
    },
  };
}
