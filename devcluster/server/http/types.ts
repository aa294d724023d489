// Contract types of the HTTP front end: what it is built with, the parsed request every verb's
// handler receives, and the hook aggregated APIs plug into.
import type { Logger } from 'pino';
import type { ApiCore } from '../../api/core.js';
import type {
  AuthenticationContext,
  RbacSource,
  RequestAttributes,
  UserInfo,
} from '../../auth/index.js';
import type { ResourceType } from '../../resources/types.js';
import type { WatchHub } from '../../storage/watch.js';
import type { ApiRequest, ApiResponse } from '../transport.js';

/** What the HTTP front end needs. */
export interface FrontEndOptions {
  core: ApiCore;
  hub: WatchHub;
  rbac: RbacSource;
  kubernetesVersion: string;
  /** host:port clients reach the server at. */
  serverAddress: () => string;
  authContext: () => AuthenticationContext;
  signingKeyPem: string;
  logger: Logger;
  bookmarkIntervalMs: number;
  /** Serves aggregated APIs (APIServices with a service) before the local routes. */
  aggregator?: AggregatedApis;
  /** Injected faults, looked up for every authenticated resource request. */
  faults?: RequestFaults;
  /** The fault hooks' admin endpoint under /devcluster/ (system:masters only). */
  faultAdmin?: FaultAdmin;
}

/** What the fault admin endpoint answers: a status code and a JSON body. */
export interface FaultAdminAnswer {
  code: number;
  body: unknown;
}

/** The fault hooks' admin endpoint as the router sees it. */
export interface FaultAdmin {
  /** Answers a request under /devcluster/ (the body parsed as JSON, undefined when empty). */
  answer(method: string, path: string, body: unknown): FaultAdminAnswer;
}

/** What an injected fault does to a request it matches. */
export type FaultAction =
  /** Answers with this error (429 TooManyRequests, 500 InternalError, 503 ServiceUnavailable). */
  | { kind: 'answer'; code: 429 | 500 | 503; retryAfterSeconds?: number }
  /** Serves the request after this long. */
  | { kind: 'delay'; ms: number }
  /** Closes the request's connection (every request and watch on it fails). */
  | { kind: 'drop' }
  /** Watches only: accepted (200) but nothing is ever sent, not even bookmarks. */
  | { kind: 'stall' };

/** The request a fault rule is matched against. */
export interface FaultedRequest {
  verb: ResourceVerb;
  group: string;
  resource: string;
  namespace: string;
  userAgent: string;
}

/** Fault injection as the router sees it. */
export interface RequestFaults {
  /** The action of the first live rule matching the request (counting the hit), if any. */
  actionFor(request: FaultedRequest): FaultAction | undefined;
  /** Keeps a stalled watch's answer until the fault hooks let it go. */
  hold(res: ApiResponse): void;
}

/** A parsed /api or /apis resource path. */
export interface ResourcePath {
  group: string;
  version: string;
  namespace: string | undefined;
  resource: string;
  name: string | undefined;
  subresource: string;
  watchPath: boolean;
}

/** The authorizer verbs of resource requests; "" for methods that have none. */
export type ResourceVerb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | '';

/** One authorized request for a served resource: what every verb's handler works from. */
export interface ResourceRequest {
  req: ApiRequest;
  res: ApiResponse;
  path: ResourcePath;
  query: URLSearchParams;
  /** The effective user (after impersonation). */
  user: UserInfo;
  type: ResourceType;
  /** The path's namespace, "" when it has none. */
  namespace: string;
  /** The path's object name, "" for collections. */
  name: string;
  /** What the front end was built with (the core, watches, RBAC, keys). */
  server: FrontEndOptions;
}

/** Answers one verb of resource requests. */
export type ResourceHandler = (request: ResourceRequest) => void | Promise<void>;

/** What the aggregation hook gets from the router. */
export interface AggregationRequest {
  req: ApiRequest;
  res: ApiResponse;
  /** The request path and query, as the router split them. */
  pathname: string;
  query: URLSearchParams;
  user: UserInfo;
  /** Throws Forbidden when the user may not do this. */
  authorize: (attributes: RequestAttributes) => void;
}

/** API aggregation as the router sees it. */
export interface AggregatedApis {
  /**
   * Answers the request if aggregation concerns it; undefined, synchronously and cheaply, for
   * requests the router serves itself.
   */
  serve(request: AggregationRequest): Promise<void> | undefined;
}
