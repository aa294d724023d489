// The wire contract of the operator-registry API (api.Registry) and of grpc.health.v1, loaded
// from our .proto files (./proto), with TypeScript shapes of the messages as proto-loader
// presents them (keepCase, defaults: every string and list present, absent messages null).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';

/** A deprecation notice (olm.deprecations). */
export interface ApiDeprecation {
  /** What the catalog says about the deprecation. */
  message: string;
}

/** A channel of a package as GetPackage lists it. */
export interface ApiChannel {
  /** Channel name. */
  name: string;
  /** CSV name of the channel head ('' when the channel has none). */
  csvName: string;
  /** The channel's deprecation, or null. */
  deprecation: ApiDeprecation | null;
}

/** A package as GetPackage answers it. */
export interface ApiPackage {
  /** Package name. */
  name: string;
  /** Its channels. */
  channels: ApiChannel[];
  /** Default channel name ('' when none). */
  defaultChannelName: string;
  /** The package's deprecation, or null. */
  deprecation: ApiDeprecation | null;
}

/** A group/version/kind, with the resource plural when known. */
export interface ApiGroupVersionKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
}

/** A dependency: type olm.gvk or olm.package, value the JSON of its constraint. */
export interface ApiDependency {
  type: string;
  value: string;
}

/** A bundle property: type and the JSON text of its value. */
export interface ApiProperty {
  type: string;
  value: string;
}

/** A bundle in one channel. */
export interface ApiBundle {
  /** CSV (bundle) name. */
  csvName: string;
  /** Package name. */
  packageName: string;
  /** The channel this answer is about. */
  channelName: string;
  /** The ClusterServiceVersion as JSON ('' when omitted). */
  csvJson: string;
  /** Every manifest as JSON (empty when omitted). */
  object: string[];
  /** Bundle image ('' when the bundle has only inline manifests). */
  bundlePath: string;
  /** APIs the bundle provides (olm.gvk properties). */
  providedApis: ApiGroupVersionKind[];
  /** APIs the bundle requires (olm.gvk.required properties). */
  requiredApis: ApiGroupVersionKind[];
  /** Bundle version. */
  version: string;
  /** The channel entry's skipRange ('' when none). */
  skipRange: string;
  /** Dependencies from olm.gvk.required and olm.package.required. */
  dependencies: ApiDependency[];
  /** Properties other than olm.bundle.object and olm.csv.metadata. */
  properties: ApiProperty[];
  /** What the channel entry replaces ('' when nothing). */
  replaces: string;
  /** What the channel entry skips. */
  skips: string[];
  /** The bundle's deprecation, or null. */
  deprecation: ApiDeprecation | null;
}

/** A channel entry: a bundle of a channel and an edge it declares. */
export interface ApiChannelEntry {
  packageName: string;
  channelName: string;
  bundleName: string;
  replaces: string;
}

/** Request of GetPackage. */
export interface GetPackageRequest {
  name: string;
}

/** Request of GetBundle. */
export interface GetBundleRequest {
  pkgName: string;
  channelName: string;
  csvName: string;
}

/** Request of GetBundleForChannel. */
export interface GetBundleInChannelRequest {
  pkgName: string;
  channelName: string;
}

/** Request of GetChannelEntriesThatReplace. */
export interface GetAllReplacementsRequest {
  csvName: string;
}

/** Request of GetBundleThatReplaces. */
export interface GetReplacementRequest {
  csvName: string;
  pkgName: string;
  channelName: string;
}

/** Request of the *Provide* methods (plural is accepted and ignored, as upstream does). */
export interface ProvidersRequest {
  group: string;
  version: string;
  kind: string;
  plural: string;
}

/** Request without fields (ListPackages, ListBundles). */
export type EmptyRequest = Record<string, never>;

/** Serving status of grpc.health.v1. */
export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

/** Request of Health.Check / Health.Watch. */
export interface HealthCheckRequest {
  service: string;
}

/** Answer of Health.Check / Health.Watch. */
export interface HealthCheckResponse {
  status: ServingStatus;
}

/** The methods of api.Registry with their request and response shapes. */
export interface RegistryMethods {
  ListPackages: MethodDefinition<EmptyRequest, { name: string }>;
  GetPackage: MethodDefinition<GetPackageRequest, ApiPackage>;
  GetBundle: MethodDefinition<GetBundleRequest, ApiBundle>;
  GetBundleForChannel: MethodDefinition<GetBundleInChannelRequest, ApiBundle>;
  GetChannelEntriesThatReplace: MethodDefinition<GetAllReplacementsRequest, ApiChannelEntry>;
  GetBundleThatReplaces: MethodDefinition<GetReplacementRequest, ApiBundle>;
  GetChannelEntriesThatProvide: MethodDefinition<ProvidersRequest, ApiChannelEntry>;
  GetLatestChannelEntriesThatProvide: MethodDefinition<ProvidersRequest, ApiChannelEntry>;
  GetDefaultBundleThatProvides: MethodDefinition<ProvidersRequest, ApiBundle>;
  ListBundles: MethodDefinition<EmptyRequest, ApiBundle>;
}

/** The methods of grpc.health.v1.Health. */
export interface HealthMethods {
  Check: MethodDefinition<HealthCheckRequest, HealthCheckResponse>;
  Watch: MethodDefinition<HealthCheckRequest, HealthCheckResponse>;
}

/** Fully qualified name of the registry service (what health checks may name). */
export const registryServiceName = 'api.Registry';

/** The loaded service definitions. */
export interface RegistryProtocol {
  /** api.Registry, as grpc-js Server.addService and the client take it. */
  readonly registry: ServiceDefinition & RegistryMethods;
  /** grpc.health.v1.Health. */
  readonly health: ServiceDefinition & HealthMethods;
}

/**
 * Where the .proto files are: next to this module if a build copied them there, else in the
 * source tree (dist/shared/registry → shared/registry/proto), which the image also ships.
 */
export function protoDirectory(): string {
  const candidates = [
    new URL('./proto/', import.meta.url),
    new URL('../../../shared/registry/proto/', import.meta.url),
  ].map((url) => fileURLToPath(url));
  const found = candidates.find((dir) => existsSync(`${dir}registry.proto`));
  if (found === undefined) {
    throw new Error(
      `registry.proto not found (looked in ${candidates.join(', ')}); the olmq installation is incomplete`,
    );
  }
  return found;
}

let loaded: RegistryProtocol | undefined;

/** The service definitions, loaded once. */
export function registryProtocol(): RegistryProtocol {
  if (loaded !== undefined) return loaded;
  const dir = protoDirectory();
  const definition = loadSync(['registry.proto', 'health.proto'], {
    includeDirs: [dir],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    arrays: true,
  });
  loaded = {
    registry: service<RegistryMethods>(definition, registryServiceName, [
      'ListPackages',
      'GetPackage',
      'GetBundle',
      'GetBundleForChannel',
      'GetChannelEntriesThatReplace',
      'GetBundleThatReplaces',
      'GetChannelEntriesThatProvide',
      'GetLatestChannelEntriesThatProvide',
      'GetDefaultBundleThatProvides',
      'ListBundles',
    ]),
    health: service<HealthMethods>(definition, 'grpc.health.v1.Health', ['Check', 'Watch']),
  };
  return loaded;
}

// proto-loader types definitions loosely; check the service has the methods the .proto
// declares, whose shapes the interfaces above state.
function service<M>(
  definition: PackageDefinition,
  name: string,
  methods: readonly (keyof M & string)[],
): ServiceDefinition & M {
  const found = definition[name] as Record<string, unknown> | undefined;
  const missing = methods.filter((m) => typeof found?.[m] !== 'object');
  if (found === undefined || missing.length > 0) {
    throw new Error(`${name} in ${protoDirectory()} lacks ${missing.join(', ') || 'everything'}`);
  }
  return found as unknown as ServiceDefinition & M;
}
