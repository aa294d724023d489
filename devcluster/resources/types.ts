// Contract types of the served kinds: what discovery, OpenAPI, the API core and the handlers
// know of a group/version/resource.
import type { JsonObject } from '../../shared/kube/json.js';
import type { StatusCause } from '../../shared/kube/status.js';

/** How a /scale subresource maps onto the object (CRD spec.subresources.scale). */
export interface ScaleMapping {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** One column of server-side Table output. */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  /** JSONPath for CRD columns; built-ins compute their cell with `cell`. */
  jsonPath?: string;
  cell?: (object: JsonObject, now: number) => string | number;
}

/**
 * A version served from another version's storage (kube's conversion of built-in versions):
 * objects are stored in the storage form and converted on every read, write and watch event.
 */
export interface VersionConversion {
  /** The storage the objects live in: group, resource and version. */
  storage: { group: string; resource: string; version: string };
  /** The stored object as this version presents it. */
  fromStorage: (stored: JsonObject) => JsonObject;
  /** An object of this version in the storage form. */
  toStorage: (object: JsonObject) => JsonObject;
  /** Field selectors of this version, as the stored fields they read. */
  fieldLabels?: Readonly<Record<string, string>>;
}

/** One served group/version/resource with everything discovery, OpenAPI and handlers need. */
export interface ResourceType {
  group: string;
  version: string;
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories: readonly string[];
  verbs: readonly string[];
  /** Whether PUT/PATCH on the main resource ignores status and /status ignores the rest. */
  statusSubresource: boolean;
  scale?: ScaleMapping;
  /** Other subresources served (e.g. "token", "finalize"). */
  extraSubresources: readonly string[];
  /** Whether metadata.generation is maintained (bumped on spec changes). */
  hasGeneration: boolean;
  /** Review kinds (SubjectAccessReview...) are answered on create and never stored. */
  virtual: boolean;
  /** Columns after Name in Table output. */
  columns: readonly PrinterColumn[];
  /** openAPIV3Schema of a CRD version. */
  schema?: JsonObject;
  /** Name of the defining CRD; absent for built-ins. */
  crdName?: string;
  /** The version objects are stored at (CRDs; equals `version` for built-ins). */
  storageVersion: string;
  /** Set when the version is served from another version's storage. */
  conversion?: VersionConversion;
  /** A CRD version marked deprecated: the warning every request for it gets (HTTP 299). */
  deprecationWarning?: string;
}

/** A service IP family. */
export type IPFamily = 'IPv4' | 'IPv6';

/** Cluster IPs handed out per family, skipping those other Services hold. */
export interface ClusterIPAllocator {
  /** The next free IP of the family. */
  next(family: IPFamily): string;
  /** Whether another Service (not `namespace/name`) holds the IP. */
  inUse(ip: string, namespace: string, name: string): boolean;
}

/** What strategies may need from the server. */
export interface StrategyContext {
  /** The families of the service CIDRs, primary first (IPv4 only unless configured). */
  serviceIPFamilies: readonly IPFamily[];
  /** Cluster IPs for Services. */
  clusterIPs: ClusterIPAllocator;
  /** The node ports held by every Service but `namespace/name`. */
  nodePortsInUse(namespace: string, name: string): Set<number>;
}

/** Behaviour of one kind; each hook mutates the fresh object it is given. */
export interface Strategy {
  /**
   * kube's defaulting functions (SetDefaults_*): applied to every body written to the main
   * resource, created or replaced (PUT, patch, apply), before prepareCreate/prepareUpdate.
   */
  defaults?(object: JsonObject): void;
  /** Derives server-set fields; causes found while allocating them fail the create (422). */
  prepareCreate?(object: JsonObject, context: StrategyContext): StatusCause[] | void;
  /** Called for main-resource updates (not /status); causes fail the update (422). */
  prepareUpdate?(
    object: JsonObject,
    old: JsonObject,
    context: StrategyContext,
  ): StatusCause[] | void;
  validate?(object: JsonObject): StatusCause[];
}
