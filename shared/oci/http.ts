// One HTTP exchange with a registry over node:http(s): bodies read with a size cap (the
// connection is dropped as soon as it is passed), redirects followed (blob storage), TLS with
// extra CAs, and plain HTTP only for loopback registries, as container runtimes allow.
import http from 'node:http';
import https from 'node:https';
import { rootCertificates } from 'node:tls';
import { OciError } from './errors.js';

/** An answer with its body read. */
export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: string;
}

/** One request. */
export interface HttpRequest {
  method: 'GET' | 'HEAD' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Largest body accepted; beyond it the request fails with OverLimit naming `what`. */
  maxBytes: number;
  /** What is fetched, for messages ("manifest quay.io/x:1"). */
  what: string;
  timeoutMs: number;
  ca: string[] | undefined;
}

const maxRedirects = 5;

/** Sends a request, following redirects; transport failures are Unreachable. */
export async function exchange(request: HttpRequest): Promise<HttpAnswer> {
  let url = new URL(request.url);
  let headers = request.headers;
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const answer = await once({ ...request, url: url.href, headers });
    const location = answer.headers.location;
    if (answer.status < 300 || answer.status >= 400 || location === undefined) return answer;
    const next = new URL(location, url);
    // Credentials are for the registry, never for the storage it redirects to.
    if (next.host !== url.host) {
      headers = Object.fromEntries(
        Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'),
      );
    }
    url = next;
  }
  throw new OciError('BadResponse', `${request.what}: more than ${maxRedirects} redirects`);
}

function once(request: HttpRequest): Promise<HttpAnswer> {
  const url = new URL(request.url);
  const secure = url.protocol === 'https:';
  const options: https.RequestOptions = {
    method: request.method,
    headers: request.headers,
    timeout: request.timeoutMs,
  };
  // Extra CAs add to Node's bundled roots rather than replacing them.
  if (secure && request.ca !== undefined && request.ca.length > 0) {
    options.ca = [...rootCertificates, ...request.ca];
  }
  return new Promise<HttpAnswer>((resolve, reject) => {
    const fail = (error: Error) => reject(error);
    const req = (secure ? https : http).request(url, options, (res) => {
      const status = res.statusCode ?? 0;
      const declared = Number(res.headers['content-length'] ?? NaN);
      const overLimit = () =>
        new OciError(
          'OverLimit',
          `${request.what} is larger than the limit of ${request.maxBytes} bytes`,
        );
      if (status < 300 && Number.isFinite(declared) && declared > request.maxBytes) {
        res.destroy();
        fail(overLimit());
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // Error bodies are only kept for their first bytes (the error code).
        if (status >= 300 && size > 64 * 1024) return;
        if (size > request.maxBytes) {
          res.destroy();
          fail(overLimit());
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({ status, headers: res.headers, body: Buffer.concat(chunks), url: url.href }),
      );
      res.on('error', (error) => fail(unreachable(request, error)));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${request.timeoutMs} ms`)));
    req.on('error', (error) => fail(unreachable(request, error)));
    req.end(request.body);
  });
}

/** Whether a transport error means the server speaks plain HTTP where TLS was expected. */
export function isPlainHttpAnswer(error: unknown): boolean {
  const cause = error instanceof OciError ? error.cause : error;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return (
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    code === 'EPROTO' ||
    (cause instanceof Error && /wrong version number|packet length too long/.test(cause.message))
  );
}

function unreachable(request: HttpRequest, error: Error): OciError {
  const code = (error as { code?: unknown }).code;
  const why =
    typeof code === 'string' && !error.message.includes(code)
      ? `${code} ${error.message}`
      : error.message;
  return new OciError(
    'Unreachable',
    `${request.what}: cannot reach ${new URL(request.url).host}: ${why}`,
    {
      cause: error,
    },
  );
}
