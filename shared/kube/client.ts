// A lean client of one cluster's API for the objects olmq reads and writes: keep-alive HTTPS
// with the kubeconfig's credentials, a token-bucket rate limit (a good API citizen), resource
// discovery cached per group-version, typed errors, and request metrics by verb and code.
import { Agent, request, type AgentOptions, type RequestOptions } from 'node:https';
import { request as plainRequest, Agent as PlainAgent } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Counter } from 'prom-client';
import { KubeApiError, isNotFound, kubeApiError } from './errors.js';
import { statusCodes } from './status.js';
import { StringDecoder } from 'node:string_decoder';
import {
  Http2Connection,
  Http2UnavailableError,
  type StreamSink,
  type StreamedAnswer,
} from './http2-connection.js';
import { parseWarningHeader, type WarningHandler } from './warnings.js';

/** The fields of any Kubernetes object olmq relies on. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: {
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
      controller?: boolean;
      blockOwnerDeletion?: boolean;
    }[];
    finalizers?: string[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** Names one object (or, without name, a collection). */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name?: string | undefined;
}

/** A served resource, as discovery describes it. */
export interface ResourceInfo {
  /** Plural resource name in URLs, e.g. "clusterserviceversions". */
  plural: string;
  namespaced: boolean;
}

/** Options of a KubeClient. */
export interface KubeClientOptions {
  /** Sustained requests per second. */
  qps: number;
  /** Requests allowed in a burst above qps. */
  burst: number;
  /** User-Agent, e.g. "olmq-install/0.1.0". */
  userAgent: string;
  /** Counter labelled cluster, verb, code for every request. */
  requests?: Counter<'cluster' | 'verb' | 'code'>;
  /** Act as this user (Impersonate-User), e.g. system:serviceaccount:ns:sa for scoped installs. */
  impersonate?: string;
  /** Receives the warnings (HTTP `Warning` headers) of every answer; see withWarningHandler. */
  onWarning?: WarningHandler;
}

/** Default KubeClientOptions. */
export const defaultKubeClientOptions: KubeClientOptions = {
  qps: 200,
  burst: 400,
  userAgent: 'olmq',
};

/** How a PATCH body is to be read. */
export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

const patchContentTypes: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Query of a create, update or status update. */
export interface WriteQuery {
  fieldManager?: string;
}

/** Query of a patch. */
export interface PatchQuery extends WriteQuery {
  force?: boolean;
  subresource?: string;
}

/**
 * Asks for the written object's metadata alone, as kube-apiserver answers any request that
 * accepts PartialObjectMetadata: for writers that read nothing else of the answer, serialising,
 * sending and parsing the whole object again costs more than the write itself.
 */
export interface MetadataAnswer {
  answer: 'metadata';
}

/** The answer of a write made with MetadataAnswer. */
export interface PartialObjectMetadata {
  apiVersion: string;
  kind: 'PartialObjectMetadata';
  metadata: KubeObject['metadata'];
}

// What client-go's metadata client sends; plain JSON last, for servers that offer no other.
const metadataAccept =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** One event of a watch; ERROR carries a Status (410 Gone: the resourceVersion is too old). */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
}

/** A running watch. */
export interface WatchStream {
  /** Resolves when the watch ends normally (the server's timeout, or stop()); rejects if it broke off. */
  ended: Promise<void>;
  stop(): void;
}

/** A list answer. */
export interface ObjectList<T> {
  items: T[];
  resourceVersion: string;
  continue?: string;
}

// Spends tokens at `qps` with room for `burst`; callers wait for a token.
class TokenBucket {
  private tokens: number;
  private last = Date.now();
  constructor(
    private readonly qps: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }
  async take(): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await new Promise((resolve) =>
        setTimeout(resolve, Math.ceil(((1 - this.tokens) / this.qps) * 1000)),
      );
    }
  }
}

// What views of one client (withWarningHandler) share: connections, rate limit, discovery.
// HTTPS servers are spoken to over HTTP/2 (`http2`) unless they turn out not to speak it.
interface Connection {
  agent: Agent | PlainAgent;
  http2: Http2Connection | undefined;
  bucket: TokenBucket;
  discovery: Map<string, Promise<Map<string, ResourceInfo>>>;
}

/** The API of one cluster. */
export class KubeClient {
  private readonly server: URL;
  private readonly connection: Connection;

  private constructor(
    readonly cluster: string,
    private readonly base: RequestOptions,
    private readonly options: KubeClientOptions,
    shared?: Connection,
  ) {
    this.server = new URL(
      `${base.protocol ?? 'https:'}//${base.hostname ?? 'localhost'}:${base.port ?? 443}`,
    );
    const https = this.server.protocol === 'https:';
    this.connection = shared ?? {
      agent: https
        ? new Agent({ keepAlive: true, maxSockets: 64, ...tlsOf(base) })
        : new PlainAgent({ keepAlive: true, maxSockets: 64 }),
      http2: https ? new Http2Connection(this.server.origin, tlsOf(base)) : undefined,
      bucket: new TokenBucket(options.qps, options.burst),
      discovery: new Map<string, Promise<Map<string, ResourceInfo>>>(),
    };
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
    await kubeConfig.applyToHTTPSOptions(base);
    return new KubeClient(cluster, base, { ...defaultKubeClientOptions, ...options });
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
      this.connection,
    );
  }

  /** Closes idle connections. */
  close(): void {
    this.connection.agent.destroy();
    this.connection.http2?.close();
  }

  /** Where objects of apiVersion/kind live, from discovery (cached; refreshed once on a miss). */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const lookup = async (refresh: boolean): Promise<ResourceInfo | undefined> => {
      if (refresh) this.connection.discovery.delete(apiVersion);
      let entry = this.connection.discovery.get(apiVersion);
      if (entry === undefined) {
        entry = this.discover(apiVersion);
        this.connection.discovery.set(apiVersion, entry);
        entry.catch(() => this.connection.discovery.delete(apiVersion));
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
    const { code, text } = await this.exchange('GET', await this.pathOf(ref), 'get');
    if (code === statusCodes.NotFound) return undefined;
    if (code >= 400) throw kubeApiError(this.cluster, code, text);
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
    await this.connection.bucket.take();
    const params = new URLSearchParams({ watch: 'true' });
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const path = `${await this.pathOf({ ...ref, name: undefined })}?${params.toString()}`;
    let endWatch: (error?: Error) => void = () => undefined;
    const ended = new Promise<void>((resolve, reject) => {
      endWatch = (error) => (error === undefined ? resolve() : reject(error));
    });
    ended.catch(() => undefined); // the caller may only stop() it
    // Events are lines of JSON; a chunk may end inside a line (or inside a character).
    const decoder = new StringDecoder('utf8');
    let rest = '';
    // Set once the watch is open: a broken line must stop it.
    const stream = { close: (): void => undefined };
    let broken: Error | undefined;
    const sink: StreamSink = {
      data: (chunk) => {
        if (broken !== undefined) return;
        const text = rest + decoder.write(chunk);
        let start = 0;
        try {
          for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
            const line = text.slice(start, nl);
            start = nl + 1;
            if (line.length > 1) onEvent(JSON.parse(line) as WatchEvent);
          }
        } catch (error) {
          // A line that is not an event: this watch cannot be trusted further.
          broken = error instanceof Error ? error : new Error(String(error));
          stream.close();
          return;
        }
        rest = text.slice(start);
      },
      end: (error) => endWatch(broken ?? error),
    };
    const headers = this.headersFor(undefined, 'application/json');
    const answer = await this.openStream('GET', path, headers, sink).catch((error: Error) => {
      this.options.requests?.inc({ cluster: this.cluster, verb: 'watch', code: 'error' });
      throw new KubeApiError(
        this.cluster,
        0,
        'ServiceUnavailable',
        `GET ${path}: ${error.message}`,
        {},
        { cause: error },
      );
    });
    this.options.requests?.inc({ cluster: this.cluster, verb: 'watch', code: String(answer.code) });
    if (answer.code >= 400) throw kubeApiError(this.cluster, answer.code, answer.text);
    stream.close = () => answer.close();
    if (broken !== undefined) answer.close(); // broken before it could be closed
    return { ended, stop: () => answer.close() };
  }

  private openStream(
    method: string,
    path: string,
    headers: Record<string, string | number>,
    sink: StreamSink,
  ): Promise<StreamedAnswer> {
    return this.overHttp2OrHttp1(
      (http2) => http2.stream(method, path, headers, sink),
      () => this.streamHttp1(method, path, headers, sink),
    );
  }

  // HTTP/2 while the server offers it; HTTP/1.1 from its first ALPN refusal on.
  private async overHttp2OrHttp1<T>(
    viaHttp2: (http2: Http2Connection) => Promise<T>,
    viaHttp1: () => Promise<T>,
  ): Promise<T> {
    const http2 = this.connection.http2;
    if (http2 === undefined) return viaHttp1();
    try {
      return await viaHttp2(http2);
    } catch (error) {
      if (!(error instanceof Http2UnavailableError)) throw error;
      this.connection.http2 = undefined;
      return viaHttp1();
    }
  }

  private streamHttp1(
    method: string,
    path: string,
    headers: Record<string, string | number>,
    sink: StreamSink,
  ): Promise<StreamedAnswer> {
    const send = this.server.protocol === 'https:' ? request : plainRequest;
    return new Promise((resolve, reject) => {
      let closed = false;
      const req = send(
        { ...this.base, agent: this.connection.agent, method, path, headers },
        (res) => {
          const code = res.statusCode ?? 0;
          const close = (): void => {
            closed = true;
            req.destroy();
          };
          if (code < 200 || code >= 300) {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({ code, text: Buffer.concat(chunks).toString('utf8'), close }),
            );
            res.on('error', reject);
            return;
          }
          resolve({ code, text: '', close });
          let failure: Error | undefined;
          res.on('data', (chunk: Buffer) => sink.data(chunk));
          res.on('error', (error) => (failure = error));
          res.on('close', () =>
            sink.end(
              closed || res.complete
                ? undefined
                : (failure ?? new Error('the watch connection closed')),
            ),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  private headersFor(
    payload: string | undefined,
    contentType: string,
    accept = 'application/json',
  ): Record<string, string | number> {
    const headers: Record<string, string | number> = {
      ...(this.base.headers as Record<string, string>),
      accept,
      'user-agent': this.options.userAgent,
    };
    if (payload !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = Buffer.byteLength(payload);
    }
    if (this.options.impersonate !== undefined)
      headers['impersonate-user'] = this.options.impersonate;
    return headers;
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
    const { code, text } = await this.exchange(method, path, verb, body, contentType, accept);
    if (code >= 400) throw kubeApiError(this.cluster, code, text);
    return text === '' ? undefined : JSON.parse(text);
  }

  // One request: its status code and body text (error answers included), counted and with its
  // warnings handed on.
  private async exchange(
    method: string,
    path: string,
    verb: string,
    body?: unknown,
    contentType = 'application/json',
    accept = 'application/json',
  ): Promise<{ code: number; text: string }> {
    await this.connection.bucket.take();
    const payload =
      body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers = this.headersFor(payload, contentType, accept);
    const { code, text, warnings } = await this.send(method, path, headers, payload).catch(
      (error: Error) => {
        this.options.requests?.inc({ cluster: this.cluster, verb, code: 'error' });
        throw new KubeApiError(
          this.cluster,
          0,
          'ServiceUnavailable',
          `${method} ${path}: ${error.message}`,
          {},
          { cause: error },
        );
      },
    );
    const onWarning = this.options.onWarning;
    if (onWarning !== undefined) {
      for (const value of warnings)
        for (const warning of parseWarningHeader(value)) onWarning(warning);
    }
    this.options.requests?.inc({ cluster: this.cluster, verb, code: String(code) });
    return { code, text };
  }

  private async send(
    method: string,
    path: string,
    headers: Record<string, string | number>,
    payload: string | undefined,
  ): Promise<{ code: number; text: string; warnings: string[] }> {
    return this.overHttp2OrHttp1(
      (http2) => http2.request(method, path, headers, payload),
      () => this.sendHttp1(method, path, headers, payload),
    );
  }

  private sendHttp1(
    method: string,
    path: string,
    headers: Record<string, string | number>,
    payload: string | undefined,
  ): Promise<{ code: number; text: string; warnings: string[] }> {
    const send = this.server.protocol === 'https:' ? request : plainRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        { ...this.base, agent: this.connection.agent, method, path, headers },
        (res) => {
          const warnings = res.headersDistinct['warning'] ?? [];
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              code: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString('utf8'),
              warnings,
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }
}

function tlsOf(base: RequestOptions): AgentOptions {
  const { ca, cert, key, rejectUnauthorized, servername } = base;
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    ...(servername === undefined ? {} : { servername }),
  };
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
