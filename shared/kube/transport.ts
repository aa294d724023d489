// The wire to one cluster's API: keep-alive HTTPS over HTTP/2 while the server speaks it
// (HTTP/1.1 from its first refusal on), a token-bucket rate limit (a good API citizen), request
// headers, and per request its metrics by verb and code and its warnings handed on.
import { Agent, request, type AgentOptions, type RequestOptions } from 'node:https';
import { request as plainRequest, Agent as PlainAgent } from 'node:http';
import { setMaxListeners } from 'node:events';
import type { Counter } from 'prom-client';
import type { AuthMaterial, Credentials } from './credentials.js';
import { KubeApiError, retryAfterMs } from './errors.js';
import {
  Http2Connection,
  Http2UnavailableError,
  type StreamSink,
  type StreamedAnswer,
} from './http2-connection.js';
import type { ResourceInfo } from './objects.js';
import { parseWarningHeader, type WarningHandler } from './warnings.js';

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
  /**
   * Where each request's credentials come from (a 401 refreshes them and retries once); absent,
   * the connection's own headers and certificate are used as given.
   */
  credentials?: Credentials;
  /**
   * How long a request is tried again while the API is unreachable or shedding load (no answer,
   * 429, 502–504, a 500 with Retry-After), waiting as Retry-After asks; 0 tries once.
   */
  transientRetryWindowMs: number;
  /** The first wait between such tries (doubling, with jitter, up to 5 s) when no Retry-After says. */
  transientBackoffMs: number;
}

/** Default KubeClientOptions. */
export const defaultKubeClientOptions: KubeClientOptions = {
  qps: 200,
  burst: 400,
  userAgent: 'olmq',
  transientRetryWindowMs: 30_000,
  transientBackoffMs: 200,
};

/** Whether an answer (or its absence, code 0) is worth the same request again shortly. */
function worthRetrying(code: number, retryAfter: string | undefined): boolean {
  return (
    code === 0 ||
    code === 429 ||
    code === 502 ||
    code === 503 ||
    code === 504 ||
    (code === 500 && retryAfter !== undefined)
  );
}

/** The controller endRetries() aborts: every request retrying at that moment listens to it. */
function retriesController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** Waits `ms`, or less when `signal` aborts first. */
const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

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

/**
 * What views of one client (withWarningHandler) share: connections, rate limit, discovery.
 * HTTPS servers are spoken to over HTTP/2 (`http2`) unless they turn out not to speak it.
 */
export interface Connection {
  agent: Agent | PlainAgent;
  http2: Http2Connection | undefined;
  /** The client certificate and key the connections were made with (rebuilt when they change). */
  clientCertificate: string;
  bucket: TokenBucket;
  discovery: Map<string, Promise<Map<string, ResourceInfo>>>;
}

/** Requests to one cluster's API server, over a connection of its own or a shared one. */
export class ClusterTransport {
  readonly server: URL;
  readonly connection: Connection;
  /** Aborted by endRetries() and close(): a shutdown must not wait out the retry window. */
  readonly #retriesEnded = retriesController();

  constructor(
    readonly cluster: string,
    readonly base: RequestOptions,
    readonly options: KubeClientOptions,
    shared?: Connection,
  ) {
    this.server = new URL(
      `${base.protocol ?? 'https:'}//${base.hostname ?? 'localhost'}:${base.port ?? 443}`,
    );
    this.connection = shared ?? {
      ...this.connect(tlsOf(base)),
      clientCertificate: certificateOf(base),
      bucket: new TokenBucket(options.qps, options.burst),
      discovery: new Map<string, Promise<Map<string, ResourceInfo>>>(),
    };
  }

  private connect(tls: AgentOptions): Pick<Connection, 'agent' | 'http2'> {
    const https = this.server.protocol === 'https:';
    return {
      agent: https
        ? new Agent({ keepAlive: true, maxSockets: 64, ...tls })
        : new PlainAgent({ keepAlive: true, maxSockets: 64 }),
      http2: https ? new Http2Connection(this.server.origin, tls) : undefined,
    };
  }

  /** Closes idle connections. */
  /** From now on a request fails at its first transient error, and waiting retries end now. */
  endRetries(): void {
    this.#retriesEnded.abort();
  }

  close(): void {
    this.#retriesEnded.abort();
    this.connection.agent.destroy();
    this.connection.http2?.close();
  }

  /**
   * The credentials for the next request: its Authorization header, and the connections
   * remade when the client certificate changed (in-flight requests finish on the old ones).
   */
  async authenticate(): Promise<string | undefined> {
    const credentials = this.options.credentials;
    if (credentials === undefined) return undefined;
    const material = await credentials.current();
    this.useCertificate(material);
    return material.authorization;
  }

  private useCertificate(material: AuthMaterial): void {
    if (material.cert === undefined || material.key === undefined) return;
    const fingerprint = `${material.cert}\n${material.key}`;
    const connection = this.connection;
    if (fingerprint === connection.clientCertificate) return;
    const http1 = connection.http2 === undefined && connection.agent instanceof Agent;
    const old = { agent: connection.agent, http2: connection.http2 };
    const fresh = this.connect({ ...tlsOf(this.base), cert: material.cert, key: material.key });
    connection.agent = fresh.agent;
    // A server found to speak only HTTP/1.1 stays so.
    connection.http2 = http1 ? undefined : fresh.http2;
    connection.clientCertificate = fingerprint;
    old.http2?.close();
    // Idle sockets go now; busy ones when their answer is in.
    old.agent.destroy();
  }

  /** Waits for a token of the rate limit. */
  take(): Promise<void> {
    return this.connection.bucket.take();
  }

  /** Counts one request by verb and answer code ('error' when there was no answer). */
  count(verb: string, code: string): void {
    this.options.requests?.inc({ cluster: this.cluster, verb, code });
  }

  /** Sends a request whose 2xx body goes to `sink` as it arrives (a 401 refreshes credentials and retries once). */
  async openStream(
    method: string,
    path: string,
    headers: Record<string, string | number>,
    sink: StreamSink,
  ): Promise<StreamedAnswer> {
    const open = async (): Promise<StreamedAnswer> => {
      const authorization = await this.authenticate();
      const sent = authorization === undefined ? headers : { ...headers, authorization };
      return this.overHttp2OrHttp1(
        (http2) => http2.stream(method, path, sent, sink),
        () => this.streamHttp1(method, path, sent, sink),
      );
    };
    const answer = await open();
    if (answer.code !== 401 || !(await this.refreshCredentials())) return answer;
    return open();
  }

  // After a 401: whether fresh credentials differ from those refused (then one retry may help).
  private async refreshCredentials(): Promise<boolean> {
    return (await this.options.credentials?.refresh()) ?? false;
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

  /** The request headers: credentials, accept, user agent, impersonation, the body's type. */
  headersFor(
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

  /**
   * One request: its status code and body text (error answers included), counted and with its
   * warnings handed on.
   */
  async exchange(
    method: string,
    path: string,
    verb: string,
    body?: unknown,
    contentType = 'application/json',
    accept = 'application/json',
  ): Promise<{ code: number; text: string; retryAfter?: string | undefined }> {
    const payload =
      body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers = this.headersFor(payload, contentType, accept);
    const deadline = Date.now() + this.options.transientRetryWindowMs;
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      await this.connection.bucket.take();
      let answer: {
        code: number;
        text: string;
        warnings: string[];
        retryAfter?: string | undefined;
      };
      let failure: Error | undefined;
      try {
        const authorization = await this.authenticate();
        const sent = authorization === undefined ? headers : { ...headers, authorization };
        answer = await this.send(method, path, sent, payload);
      } catch (error) {
        failure = error as Error;
        answer = { code: 0, text: '', warnings: [] };
        this.count(verb, 'error');
      }
      if (failure === undefined) {
        this.count(verb, String(answer.code));
        const onWarning = this.options.onWarning;
        if (onWarning !== undefined) {
          for (const value of answer.warnings)
            for (const warning of parseWarningHeader(value)) onWarning(warning);
        }
      }
      // A 401 may be a credential rotated since we read it: read again and retry once.
      if (answer.code === 401 && !refreshed) {
        refreshed = true;
        if (await this.refreshCredentials()) continue;
      }
      if (worthRetrying(answer.code, answer.retryAfter)) {
        const wait =
          retryAfterMs(answer.retryAfter) ??
          Math.min(5_000, this.options.transientBackoffMs * 2 ** (attempt - 1)) *
            (0.5 + Math.random() / 2);
        if (Date.now() + wait < deadline && !this.#retriesEnded.signal.aborted) {
          await sleep(wait, this.#retriesEnded.signal);
          if (!this.#retriesEnded.signal.aborted) continue;
        }
      }
      if (failure !== undefined) {
        throw new KubeApiError(
          this.cluster,
          0,
          'ServiceUnavailable',
          `${method} ${path}: ${failure.message}`,
          {},
          { cause: failure },
        );
      }
      return { code: answer.code, text: answer.text, retryAfter: answer.retryAfter };
    }
  }

  private async send(
    method: string,
    path: string,
    headers: Record<string, string | number>,
    payload: string | undefined,
  ): Promise<{ code: number; text: string; warnings: string[]; retryAfter?: string | undefined }> {
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
  ): Promise<{ code: number; text: string; warnings: string[]; retryAfter?: string | undefined }> {
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
              retryAfter: res.headers['retry-after'],
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

function certificateOf(base: RequestOptions): string {
  const text = (v: unknown): string =>
    v === undefined
      ? ''
      : typeof v === 'string'
        ? v
        : Buffer.isBuffer(v)
          ? v.toString()
          : JSON.stringify(v);
  return `${text(base.cert)}\n${text(base.key)}`;
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
