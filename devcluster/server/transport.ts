// What the front end sees of a request and its answer, whichever protocol the client chose:
// kubectl and client-go negotiate HTTP/2 (ALPN h2), @kubernetes/client-node speaks HTTP/1.1.
// HTTP/2 is served on node's stream API itself: its compatibility layer (a request and a response
// object, a dozen listeners per stream, a separate end-of-stream frame) costs more per request
// than the API server's own work on a small write.
import type {
  IncomingHttpHeaders,
  IncomingMessage,
  OutgoingHttpHeader,
  ServerResponse,
} from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { Readable, Writable } from 'node:stream';
import type { TLSSocket } from 'node:tls';

/** A request, as the front end reads it. */
export interface ApiRequest {
  /** Upper-case method (GET, POST, ...). */
  readonly method: string;
  /** Path and query as sent. */
  readonly url: string;
  /** Headers by lower-case name (HTTP/2 pseudo-headers included under HTTP/2). */
  readonly headers: IncomingHttpHeaders;
  /** The request body as it arrives. */
  readonly body: Readable;
  /**
   * The connection the request came over, for what is cached per connection (its client
   * certificate's identity): the HTTP/2 session, or the HTTP/1.1 socket.
   */
  readonly connection: object;
  /** The TLS socket the request came over. */
  readonly tlsSocket: TLSSocket;
  /**
   * Every header with each of its values kept apart (node:http's `headersDistinct`): repeated
   * Impersonate-Group values must not be joined, as values may contain ", ". HTTP/2
   * pseudo-headers (`:path`, ...) are left out.
   */
  distinctHeaders(): Record<string, string[]>;
  /** Discards the body (the request is answered without reading it). */
  discardBody(): void;
}

/** The answer to a request. */
export interface ApiResponse {
  /** Whether the status and headers are on their way. */
  readonly headersSent: boolean;
  /** Whether the answer has ended. */
  readonly ended: boolean;
  /** Whether the client has gone (a reset HTTP/2 stream, a closed connection): nothing to write to. */
  readonly gone: boolean;
  /** The status code sent, 0 before the head goes out. */
  readonly statusCode: number;
  /** Sets a header every answer to this request carries, whatever its status. */
  setHeader(name: string, value: string | string[]): void;
  /** A header set with setHeader. */
  getHeader(name: string): string | string[] | undefined;
  /** Answers at once: status, headers (lower-case names) and the whole body. */
  send(code: number, headers: ResponseHeaders, body: Buffer | string): void;
  /** Sends status and headers now; the body follows with write and end (watches, proxied answers). */
  start(code: number, headers: ResponseHeaders): void;
  /** Writes body chunks together (one vectored write). */
  write(chunks: readonly Buffer[]): void;
  /** Ends the answer. */
  end(): void;
  /** Where a streamed body (a proxied answer) is piped, after start. */
  readonly writable: Writable;
  /** Called once when the exchange is over: answered, reset or disconnected. */
  onClose(listener: () => void): void;
}

/**
 * Headers that describe one connection rather than the message (RFC 9113 §8.2.2): an HTTP/2
 * message must not carry them, and a proxy never forwards them.
 */
export const connectionSpecificHeaders: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'host',
  'http2-settings',
]);

/** Response headers by lower-case name. */
export type ResponseHeaders = Readonly<Record<string, OutgoingHttpHeader | undefined>>;

/** Headers of the whole request, set before its answer (a deprecated version's Warning). */
type PresetHeaders = Record<string, string | string[]>;

function withPreset(preset: PresetHeaders | undefined, headers: ResponseHeaders) {
  return preset === undefined ? headers : { ...preset, ...headers };
}

// A stream error (a reset, a session torn down) is seen as `gone`; without a listener node
// would throw it.
function ignore(): void {}

/** An HTTP/2 request on its stream. */
export class Http2Exchange implements ApiRequest, ApiResponse {
  readonly method: string;
  readonly url: string;
  private preset: PresetHeaders | undefined;
  statusCode = 0;

  constructor(
    private readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    private readonly rawHeaders: readonly string[],
  ) {
    this.method = String(headers[':method'] ?? 'GET');
    this.url = String(headers[':path'] ?? '/');
    stream.on('error', ignore);
  }

  get body(): Readable {
    return this.stream;
  }

  get connection(): object {
    return this.stream.session ?? this.stream;
  }

  get tlsSocket(): TLSSocket {
    return this.stream.session?.socket as TLSSocket;
  }

  distinctHeaders(): Record<string, string[]> {
    const headers: Record<string, string[]> = {};
    const raw = this.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = (raw[i] ?? '').toLowerCase();
      if (name.startsWith(':')) continue;
      (headers[name] ??= []).push(raw[i + 1] ?? '');
    }
    return headers;
  }

  discardBody(): void {
    this.stream.resume();
  }

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get ended(): boolean {
    return this.stream.writableEnded;
  }

  get gone(): boolean {
    return this.stream.destroyed;
  }

  setHeader(name: string, value: string | string[]): void {
    (this.preset ??= {})[name.toLowerCase()] = value;
  }

  getHeader(name: string): string | string[] | undefined {
    return this.preset?.[name.toLowerCase()];
  }

  send(code: number, headers: ResponseHeaders, body: Buffer | string): void {
    const { stream } = this;
    if (stream.destroyed || stream.closed) return;
    this.statusCode = code;
    // respond() ends the stream itself for HEAD, 204 and 304: no body follows then.
    stream.respond({ ...withPreset(this.preset, headers), ':status': code });
    if (stream.writableEnded) return;
    // The stream ends once the body is written: ended together, the stream closes before the
    // write completes, and node then builds (and drops) an ERR_STREAM_DESTROYED, with its stack
    // trace, for every answer.
    stream.write(body, () => stream.end());
  }

  start(code: number, headers: ResponseHeaders): void {
    const { stream } = this;
    if (stream.destroyed || stream.closed) return;
    this.statusCode = code;
    stream.respond({ ...withPreset(this.preset, headers), ':status': code });
  }

  write(chunks: readonly Buffer[]): void {
    const { stream } = this;
    if (stream.destroyed || stream.writableEnded) return;
    stream.cork();
    for (const chunk of chunks) stream.write(chunk);
    stream.uncork();
  }

  end(): void {
    const { stream } = this;
    if (stream.destroyed || stream.writableEnded) return;
    // An answer that never started (an error after a proxy failed to connect) still needs a head.
    if (!stream.headersSent) {
      this.statusCode = 200;
      stream.respond({ ':status': 200 }, { endStream: true });
    } else stream.end();
  }

  get writable(): Writable {
    return this.stream;
  }

  onClose(listener: () => void): void {
    this.stream.once('close', listener);
  }
}

/** An HTTP/1.1 request and its node:http response. */
export class Http1Exchange implements ApiRequest, ApiResponse {
  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {}

  get method(): string {
    return this.req.method ?? 'GET';
  }

  get url(): string {
    return this.req.url ?? '/';
  }

  get headers(): IncomingHttpHeaders {
    return this.req.headers;
  }

  get body(): Readable {
    return this.req;
  }

  get connection(): object {
    return this.req.socket;
  }

  get tlsSocket(): TLSSocket {
    return this.req.socket as TLSSocket;
  }

  distinctHeaders(): Record<string, string[]> {
    return this.req.headersDistinct as Record<string, string[]>;
  }

  discardBody(): void {
    this.req.resume();
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  get ended(): boolean {
    return this.res.writableEnded;
  }

  get gone(): boolean {
    return this.res.destroyed;
  }

  get statusCode(): number {
    return this.res.headersSent ? this.res.statusCode : 0;
  }

  setHeader(name: string, value: string | string[]): void {
    this.res.setHeader(name, value);
  }

  getHeader(name: string): string | string[] | undefined {
    const value = this.res.getHeader(name);
    return typeof value === 'number' ? String(value) : value;
  }

  send(code: number, headers: ResponseHeaders, body: Buffer | string): void {
    this.res.writeHead(code, headers);
    this.res.end(body);
  }

  start(code: number, headers: ResponseHeaders): void {
    this.res.writeHead(code, headers);
    // Without a body chunk yet, node:http would hold the head back.
    this.res.flushHeaders();
  }

  write(chunks: readonly Buffer[]): void {
    const { res } = this;
    if (res.writableEnded || res.destroyed) return;
    // Corked, the chunks leave in one vectored write, without copying them into one buffer first.
    res.cork();
    for (const chunk of chunks) res.write(chunk);
    res.uncork();
  }

  end(): void {
    this.res.end();
  }

  get writable(): Writable {
    return this.res;
  }

  onClose(listener: () => void): void {
    this.res.once('close', listener);
  }
}
