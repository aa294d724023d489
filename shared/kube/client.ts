// A lean client of one cluster's API for the objects olmq reads and writes: keep-alive HTTPS
// with the kubeconfig's credentials, a token-bucket rate limit (a good API citizen), resource
// discovery cached per group-version, typed errors, and request metrics by verb and code.
// The wire is ./transport.ts, watches ./watch-stream.ts, the shapes exchanged ./objects.ts.
import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigCredentials, withoutCredentials } from './credentials.js';
import { KubeApiError, isNotFound, kubeApiError } from './errors.js';
import type {
  KubeObject,
  MetadataAnswer,
  ObjectList,
  ObjectRef,
  PartialObjectMetadata,
  PatchQuery,
  PatchType,
  ResourceInfo,
  WatchEvent,
  WatchStream,
  WriteQuery,
} from './objects.js';
import { statusCodes } from './status.js';
import {
  ClusterTransport,
  defaultKubeClientOptions,
  type Connection,
  type KubeClientOptions,
} from './transport.js';
import type { WarningHandler } from './warnings.js';
import { openWatch } from './watch-stream.js';

export type {
  KubeObject,
  MetadataAnswer,
  ObjectList,
  ObjectRef,
  PartialObjectMetadata,
  PatchQuery,
  PatchType,
  ResourceInfo,
  WatchEvent,
  WatchStream,
  WriteQuery,
} from './objects.js';
export { defaultKubeClientOptions, type KubeClientOptions } from './transport.js';

const patchContentTypes: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

// What client-go's metadata client sends; plain JSON last, for servers that offer no other.
const metadataAccept =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** The API of one cluster. */
export class KubeClient {
  private readonly transport: ClusterTransport;

  private constructor(
    readonly cluster: string,
    private readonly base: RequestOptions,
    private readonly options: KubeClientOptions,
    shared?: Connection,
  ) {
    this.transport = new ClusterTransport(cluster, base, options, shared);
  }

  /** A client of the current context's cluster of `kubeConfig`. */
  static async fromKubeConfig(
    cluster: string,
    kubeConfig: KubeConfig,
    options: Partial<KubeClientOptions> = {},
  ): Promise<KubeClient> {
    const current = kubeConfig.getCurrentCluster();
    if (current === null)
      throw new Error(`kubeconfig for cluster "${cluster}" has no current cluster`);
    const url = new URL(current.server);
    const base: RequestOptions = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
      headers: {},
    };
    // TLS settings from the kubeconfig; credentials per request, so rotated ones are picked up.
    await withoutCredentials(kubeConfig).applyToHTTPSOptions(base);
    return new KubeClient(cluster, base, {
      ...defaultKubeClientOptions,
      credentials: kubeConfigCredentials(kubeConfig),
      ...options,
    });
  }

  /** A client from explicit connection material (PEM strings), without a KubeConfig. */
  static fromConnection(
    cluster: string,
    connection: { server: string; ca?: string; cert?: string; key?: string; token?: string },
    options: Partial<KubeClientOptions> = {},
  ): KubeClient {
    const url = new URL(connection.server);
    const base: RequestOptions = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
      headers:
        connection.token === undefined ? {} : { authorization: `Bearer ${connection.token}` },
      ...(connection.ca === undefined ? {} : { ca: connection.ca }),
      ...(connection.cert === undefined ? {} : { cert: connection.cert }),
      ...(connection.key === undefined ? {} : { key: connection.key }),
    };
    return new KubeClient(cluster, base, { ...defaultKubeClientOptions, ...options });
  }

  /** The same cluster, acting as `user` (Impersonate-User). */
  impersonating(user: string): KubeClient {
    return new KubeClient(this.cluster, this.base, { ...this.options, impersonate: user });
  }

  /**
   * The same client (connections, rate limit and discovery shared) handing every warning of its
   * answers to `handler` — e.g. to attribute warnings to the InstallPlan step that caused them.
   * Cheap: make one per unit of work. close() on the view closes the shared connections.
   */
  withWarningHandler(handler: WarningHandler): KubeClient {
    return new KubeClient(
      this.cluster,
      this.base,
      { ...this.options, onWarning: handler },
      this.transport.connection,
    );
  }

  /** Closes idle connections. */
  close(): void {
    this.transport.close();
  }

  /**
   * Requests fail at their first transient error from now on instead of retrying: the process is
   * shutting down, and work that fails is redelivered to a replica that can still reach the API.
   */
  endRetries(): void {
    this.transport.endRetries();
  }

  /** Where objects of apiVersion/kind live, from discovery (cached; refreshed once on a miss). */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const lookup = async (refresh: boolean): Promise<ResourceInfo | undefined> => {
      if (refresh) this.transport.connection.discovery.delete(apiVersion);
      let entry = this.transport.connection.discovery.get(apiVersion);
      if (entry === undefined) {
        entry = this.discover(apiVersion);
        this.transport.connection.discovery.set(apiVersion, entry);
        entry.catch(() => this.transport.connection.discovery.delete(apiVersion));
      }
      return (await entry).get(kind);
    };
    const found = (await lookup(false)) ?? (await lookup(true));
    if (found === undefined) {
      throw new KubeApiError(
        this.cluster,
        statusCodes.NotFound,
        'NotFound',
        `the server doesn't have a resource type for kind "${kind}" in ${apiVersion}`,
        { kind },
      );
    }
    return found;
  }

  private async discover(apiVersion: string): Promise<Map<string, ResourceInfo>> {
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const byKind = new Map<string, ResourceInfo>();
    let list: { resources?: { name: string; kind: string; namespaced: boolean }[] };
    try {
      list = (await this.request('GET', path, 'discover')) as typeof list;
    } catch (error) {
      if (isNotFound(error)) return byKind;
      throw error;
    }
    for (const r of list.resources ?? []) {
      if (!r.name.includes('/')) byKind.set(r.kind, { plural: r.name, namespaced: r.namespaced });
    }
    return byKind;
  }
  /** The URL path of an object or collection. */
  async pathOf(ref: ObjectRef, subresource?: string): Promise<string> {
    const info = await this.resource(ref.apiVersion, ref.kind);
    const root = ref.apiVersion.includes('/')
      ? `/apis/${ref.apiVersion}`
      : `/api/${ref.apiVersion}`;
    const ns =
      info.namespaced && ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
    const name = ref.name === undefined ? '' : `/${encodeURIComponent(ref.name)}`;
    return `${root}${ns}/${info.plural}${name}${subresource === undefined ? '' : `/${subresource}`}`;
  }

  /** Reads an object; undefined when it does not exist. */
  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    // A missing object is a common answer (a function looking for what it may create): it is
    // not made into an error first.
    const { code, text, retryAfter } = await this.transport.exchange(
      'GET',
      await this.pathOf(ref),
      'get',
    );
    if (code === statusCodes.NotFound) return undefined;
    if (code >= 400) throw kubeApiError(this.cluster, code, text, retryAfter);
    return JSON.parse(text) as T;
  }

  /** Lists objects of a kind (in one namespace, or all). */
  async list<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    query: {
      labelSelector?: string;
      fieldSelector?: string;
      limit?: number;
      continue?: string;
    } = {},
  ): Promise<ObjectList<T>> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.size === 0 ? '' : `?${params.toString()}`;
    const body = (await this.request(
      'GET',
      `${await this.pathOf({ ...ref, name: undefined })}${qs}`,
      'list',
    )) as {
      items: T[];
      metadata: { resourceVersion: string; continue?: string };
    };
    const kind = ref.kind;
    const items = body.items.map((item) => ({ ...item, apiVersion: ref.apiVersion, kind }));
    return {
      items,
      resourceVersion: body.metadata.resourceVersion,
      ...(body.metadata.continue ? { continue: body.metadata.continue } : {}),
    };
  }

  /** Creates an object. */
  create<T extends KubeObject>(object: T, query?: WriteQuery): Promise<T>;
  create(object: KubeObject, query: WriteQuery & MetadataAnswer): Promise<PartialObjectMetadata>;
  async create(object: KubeObject, query: WriteQuery & Partial<MetadataAnswer> = {}) {
    const path = await this.pathOf({
      ...object,
      namespace: object.metadata.namespace,
      name: undefined,
    });
    return this.write('POST', path, 'create', object, query);
  }

  /** Replaces an object; conditional on metadata.resourceVersion when set (409 if stale). */
  update<T extends KubeObject>(object: T, query?: WriteQuery): Promise<T>;
  update(object: KubeObject, query: WriteQuery & MetadataAnswer): Promise<PartialObjectMetadata>;
  async update(object: KubeObject, query: WriteQuery & Partial<MetadataAnswer> = {}) {
    return this.write('PUT', await this.pathOf(refOf(object)), 'update', object, query);
  }

  /** Replaces an object's status; conditional on metadata.resourceVersion when set. */
  updateStatus<T extends KubeObject>(object: T, query?: WriteQuery): Promise<T>;
  updateStatus(
    object: KubeObject,
    query: WriteQuery & MetadataAnswer,
  ): Promise<PartialObjectMetadata>;
  async updateStatus(object: KubeObject, query: WriteQuery & Partial<MetadataAnswer> = {}) {
    return this.write('PUT', await this.pathOf(refOf(object), 'status'), 'update', object, query);
  }

  /** Patches an object (apply = server-side apply with fieldManager, required). */
  patch<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    type: PatchType,
    body: unknown,
    query?: PatchQuery,
  ): Promise<T>;
  patch(
    ref: ObjectRef,
    type: PatchType,
    body: unknown,
    query: PatchQuery & MetadataAnswer,
  ): Promise<PartialObjectMetadata>;
  async patch(
    ref: ObjectRef,
    type: PatchType,
    body: unknown,
    query: PatchQuery & Partial<MetadataAnswer> = {},
  ) {
    const { subresource, ...rest } = query;
    const path = await this.pathOf(ref, subresource);
    const payload = type === 'apply' ? JSON.stringify(body) : body; // JSON is valid YAML
    return this.write('PATCH', path, 'patch', payload, rest, patchContentTypes[type]);
  }

  private write(
    method: string,
    path: string,
    verb: string,
    body: unknown,
    query: Omit<PatchQuery, 'subresource'> & Partial<MetadataAnswer>,
    contentType?: string,
  ): Promise<unknown> {
    const { answer, ...rest } = query;
    return this.request(
      method,
      withQuery(path, rest),
      verb,
      body,
      contentType,
      answer === 'metadata' ? metadataAccept : 'application/json',
    );
  }

  /** Deletes an object; false when it was already gone. */
  async delete(
    ref: ObjectRef,
    options: {
      propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
      preconditions?: { uid?: string; resourceVersion?: string };
    } = {},
  ): Promise<boolean> {
    try {
      await this.request('DELETE', await this.pathOf(ref), 'delete', {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        ...options,
      });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /**
   * Watches a kind (in one namespace, or all) from `resourceVersion`, handing each event to
   * `onEvent` as its line arrives. Resolves once the server accepted the watch; throws
   * KubeApiError when it refused it (410 Gone: list again).
   */
  async watch(
    ref: ObjectRef,
    query: {
      resourceVersion?: string;
      labelSelector?: string;
      allowWatchBookmarks?: boolean;
      timeoutSeconds?: number;
    },
    onEvent: (event: WatchEvent) => void,
  ): Promise<WatchStream> {
    await this.transport.take();
    const params = new URLSearchParams({ watch: 'true' });
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const path = `${await this.pathOf({ ...ref, name: undefined })}?${params.toString()}`;
    return openWatch(this.transport, path, onEvent);
  }

  /** One request with JSON in and out; throws KubeApiError on an error answer. */
  async request(
    method: string,
    path: string,
    verb: string,
    body?: unknown,
    contentType = 'application/json',
    accept = 'application/json',
  ): Promise<unknown> {
    const { code, text, retryAfter } = await this.transport.exchange(
      method,
      path,
      verb,
      body,
      contentType,
      accept,
    );
    if (code >= 400) throw kubeApiError(this.cluster, code, text, retryAfter);
    return text === '' ? undefined : JSON.parse(text);
  }
}

function refOf(object: KubeObject): ObjectRef {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    namespace: object.metadata.namespace,
    name: object.metadata.name,
  };
}

function withQuery(path: string, query: Record<string, string | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  return params.size === 0 ? path : `${path}?${params.toString()}`;
}
