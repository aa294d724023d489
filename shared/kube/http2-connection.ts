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
  /** The Retry-After header, when the server sent one (429, 503). */
  retryAfter?: string | undefined;
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

/** An answer (not a watch) taking longer than this is given up as lost. */
const answerTimeoutMs = 60_000;

/**
 * While streams are open, the connection is checked every `pingEveryMs` with a PING, and closed
 * (failing them) if the PING is not answered in `pingTimeoutMs`, as client-go's HTTP/2 health
 * check does: a watch on a connection that died silently would otherwise wait forever.
 */
export interface Http2HealthCheck {
  /** How often a connection with streams open is checked. */
  pingEveryMs: number;
  /** How long a PING may go unanswered before the connection is given up. */
  pingTimeoutMs: number;
}

const defaultHealthCheck: Http2HealthCheck = { pingEveryMs: 30_000, pingTimeoutMs: 15_000 };

interface SessionState {
  session: ClientHttp2Session;
  /** Requests and watches in flight (while there are some, the session keeps the process alive). */
  active: number;
  /** How to fail each of them when the session goes away under them. */
  failers: Set<(error: Error) => void>;
}

export class Http2Connection {
  /** The session and its requests in flight (while there are some, it keeps the process alive). */
  private state: SessionState | undefined;

  constructor(
    private readonly authority: string,
    private readonly tls: SecureClientSessionOptions,
    private readonly health: Http2HealthCheck = defaultHealthCheck,
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
    let fail: (error: Error) => void = () => undefined;
    const settle = (): void => {
      state.failers.delete(fail);
      if (--state.active === 0 && !session.destroyed) session.unref();
    };
    return new Promise<Http2Answer>((resolve, reject) => {
      fail = reject;
      state.failers.add(fail);
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
      let retryAfter: string | undefined;
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        code = Number(h[constants.HTTP2_HEADER_STATUS] ?? 0);
        const after: unknown = h['retry-after'];
        retryAfter = typeof after === 'string' ? after : undefined;
        const warning = h['warning'];
        warnings = warning === undefined ? [] : Array.isArray(warning) ? warning : [warning];
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // A stream of a session that went away ends (or only closes) without an answer: that is a
      // failure, not an empty success, and without the close its caller would wait forever.
      stream.on('end', () => {
        if (code === 0) reject(new Error('the connection went away before an answer'));
        else resolve({ code, text: Buffer.concat(chunks).toString('utf8'), warnings, retryAfter });
      });
      stream.on('close', () => reject(new Error('the stream closed before its answer ended')));
      stream.on('error', (error: Error) =>
        reject(refusesHttp2(error) ? new Http2UnavailableError(error) : error),
      );
      // Nothing else bounds a request: a server that stops answering must not hold its caller
      // (and the work item it serves) forever.
      stream.setTimeout(answerTimeoutMs, () => {
        reject(new Error(`no answer within ${answerTimeoutMs / 1000} s`));
        stream.close(constants.NGHTTP2_CANCEL);
      });
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
    let fail: (error: Error) => void = () => undefined;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      state.failers.delete(fail);
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
      fail = (error) => {
        failure ??= error;
        settle();
        if (streaming) sink.end(failure);
        else reject(error);
      };
      state.failers.add(fail);
      stream.on('close', () => {
        if (settled) return; // failed with its session already
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
    const state: SessionState = { session, active: 0, failers: new Set() };
    const forget = (): void => {
      if (this.state === state) this.state = undefined;
    };
    const { pingEveryMs, pingTimeoutMs } = this.health;
    const health = setInterval(() => {
      if (state.active === 0 || session.destroyed) return;
      const deadline = setTimeout(
        () => session.destroy(new Error('the server did not answer a ping')),
        pingTimeoutMs,
      );
      deadline.unref();
      let sent = false;
      try {
        sent = session.ping((error) => {
          clearTimeout(deadline);
          if (error !== null && !session.destroyed) session.destroy(error);
        });
      } catch {
        // Not connected yet, or closing: the next check looks again.
      }
      if (!sent) clearTimeout(deadline); // e.g. too many pings in flight: the next check retries
    }, pingEveryMs);
    health.unref();
    // Streams of a session that went away do not always hear of it themselves.
    session.on('close', () => {
      clearInterval(health);
      const error = new Error('the connection to the server closed');
      for (const fail of [...state.failers]) fail(error);
    });
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
