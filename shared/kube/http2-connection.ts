// One HTTP/2 connection to an API server, as client-go keeps one: every request of a client is
// a stream on it. Per request it costs about half the CPU of HTTPS/1.1 on both ends, which is
// most of what a function's reconcile spends. Servers that do not speak h2 are detected when
// connecting (Http2UnavailableError); the client then stays on HTTP/1.1.
import {
  connect,
  constants,
  type ClientHttp2Session,
  type SecureClientSessionOptions,
} from 'node:http2';

/** The server did not agree to HTTP/2 (no ALPN h2), so nothing was sent. */
export class Http2UnavailableError extends Error {
  constructor(cause: unknown) {
    super('the server does not speak HTTP/2', { cause });
    this.name = 'Http2UnavailableError';
  }
}

/** An answer: status code, body text and the values of its Warning headers. */
export interface Http2Answer {
  code: number;
  text: string;
  warnings: string[];
}

/** Where a streamed answer's body goes. */
export interface StreamSink {
  data(chunk: Buffer): void;
  /** The body ended: normally (or closed by us), or broken off with `error`. */
  end(error?: Error): void;
}

/** A streamed answer: its status code; the body text when it is not a 2xx; a way to stop it. */
export interface StreamedAnswer {
  code: number;
  text: string;
  close(): void;
}

/** The TLS handshake failed because the server offers no h2 (ALPN): it speaks HTTP/1.1 only. */
function refusesHttp2(error: Error): boolean {
  const code = (e: unknown): unknown => (e as { code?: unknown } | undefined)?.code;
  return [code(error), code(error.cause)].includes('ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL');
}

/** Idle connections close after this long (a new one opens on the next request). */
const idleMs = 90_000;

export class Http2Connection {
  /** The session and its requests in flight (while there are some, it keeps the process alive). */
  private state: { session: ClientHttp2Session; active: number } | undefined;

  constructor(
    private readonly authority: string,
    private readonly tls: SecureClientSessionOptions,
  ) {}

  request(
    method: string,
    path: string,
    headers: Record<string, string | number>,
    payload: string | undefined,
  ): Promise<Http2Answer> {
    const state = this.current();
    const { session } = state;
    if (state.active++ === 0) session.ref();
    const settle = (): void => {
      if (--state.active === 0 && !session.destroyed) session.unref();
    };
    return new Promise<Http2Answer>((resolve, reject) => {
      const stream = session.request(
        {
          [constants.HTTP2_HEADER_METHOD]: method,
          [constants.HTTP2_HEADER_PATH]: path,
          ...headers,
        },
        { endStream: payload === undefined },
      );
      let code = 0;
      let warnings: string[] = [];
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        code = Number(h[constants.HTTP2_HEADER_STATUS] ?? 0);
        const warning = h['warning'];
        warnings = warning === undefined ? [] : Array.isArray(warning) ? warning : [warning];
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // A stream of a session that went away ends (or only closes) without an answer: that is a
      // failure, not an empty success, and without the close its caller would wait forever.
      stream.on('end', () => {
        if (code === 0) reject(new Error('the connection went away before an answer'));
        else resolve({ code, text: Buffer.concat(chunks).toString('utf8'), warnings });
      });
      stream.on('close', () => reject(new Error('the stream closed before its answer ended')));
      stream.on('error', (error: Error) =>
        reject(refusesHttp2(error) ? new Http2UnavailableError(error) : error),
      );
      if (payload !== undefined) stream.end(payload);
    }).finally(settle);
  }

  /**
   * A request whose answer is read as it comes (a watch): resolves once the headers arrive. A
   * 2xx answer's body goes to `sink` chunk by chunk, and `sink.end` is told when it ends (with
   * the error if it broke off); another answer's body is read whole into `text`.
   */
  stream(
    method: string,
    path: string,
    headers: Record<string, string | number>,
    sink: StreamSink,
  ): Promise<StreamedAnswer> {
    const state = this.current();
    const { session } = state;
    if (state.active++ === 0) session.ref();
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      if (--state.active === 0 && !session.destroyed) session.unref();
    };
    return new Promise<StreamedAnswer>((resolve, reject) => {
      const stream = session.request(
        {
          [constants.HTTP2_HEADER_METHOD]: method,
          [constants.HTTP2_HEADER_PATH]: path,
          ...headers,
        },
        { endStream: true },
      );
      const close = (): void => {
        if (!stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
      };
      let streaming = false;
      let code = 0;
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        code = Number(h[constants.HTTP2_HEADER_STATUS] ?? 0);
        if (code >= 200 && code < 300) {
          streaming = true;
          resolve({ code, text: '', close });
        }
      });
      stream.on('data', (chunk: Buffer) => (streaming ? sink.data(chunk) : chunks.push(chunk)));
      stream.on('end', () => {
        if (streaming) return;
        if (code === 0) reject(new Error('the connection went away before an answer'));
        else resolve({ code, text: Buffer.concat(chunks).toString('utf8'), close });
      });
      let failure: Error | undefined;
      stream.on('close', () => {
        settle();
        if (!streaming) return reject(new Error('the stream closed before an answer'));
        const reset = stream.rstCode;
        if (
          failure === undefined &&
          reset !== constants.NGHTTP2_NO_ERROR &&
          reset !== constants.NGHTTP2_CANCEL
        )
          failure = new Error(`the server reset the stream (code ${reset})`);
        sink.end(failure);
      });
      stream.on('error', (error: Error) => {
        if (streaming) failure = error;
        else reject(refusesHttp2(error) ? new Http2UnavailableError(error) : error);
      });
    });
  }

  close(): void {
    this.state?.session.close();
    this.state = undefined;
  }

  private current(): NonNullable<Http2Connection['state']> {
    const live = this.state;
    if (live !== undefined && !live.session.closed && !live.session.destroyed) return live;
    const session = connect(this.authority, { ...this.tls, ALPNProtocols: ['h2'] });
    const state = { session, active: 0 };
    const forget = (): void => {
      if (this.state === state) this.state = undefined;
    };
    session.on('error', forget); // each stream reports the failure to its caller
    session.on('goaway', forget);
    session.on('close', forget);
    // Idle means no frames for idleMs; a quiet watch is not idle.
    session.setTimeout(idleMs, () => {
      if (state.active === 0) session.close();
    });
    session.unref(); // idle, the connection does not keep the process alive
    this.state = state;
    return state;
  }
}
