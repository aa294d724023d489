// What the front end sees of a request and its response, whichever protocol the client chose:
// kubectl and client-go negotiate HTTP/2 (ALPN h2), @kubernetes/client-node speaks HTTP/1.1.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { TLSSocket } from 'node:tls';

/** A request, as node:http or node:http2's compatibility API presents it. */
export type ApiRequest = IncomingMessage | Http2ServerRequest;

/** A response, as node:http or node:http2's compatibility API presents it. */
export type ApiResponse = ServerResponse | Http2ServerResponse;

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

/**
 * Every header with each of its values kept apart (node:http's `headersDistinct`): repeated
 * Impersonate-Group values must not be joined, as values may contain ", ". HTTP/2 pseudo-headers
 * (`:path`, ...) are left out.
 */
export function distinctHeaders(req: ApiRequest): Record<string, string[]> {
  if ('headersDistinct' in req) return req.headersDistinct as Record<string, string[]>;
  const headers: Record<string, string[]> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    if (name.startsWith(':')) continue;
    (headers[name] ??= []).push(raw[i + 1] ?? '');
  }
  return headers;
}

/**
 * Sends the response head now, before any body (a watch, a proxied stream). HTTP/2's writeHead
 * sends the HEADERS frame itself; HTTP/1.1 would hold the head back for the first body chunk.
 */
export function flushHead(res: ApiResponse): void {
  if (!('stream' in res)) res.flushHeaders();
}

/**
 * The connection a request came over, for what is cached per connection (its client
 * certificate's identity): the HTTP/2 session, or the HTTP/1.1 socket. Not `req.socket`, which
 * under HTTP/2 is a new proxy object for every stream.
 */
export function connectionOf(req: ApiRequest): object {
  return 'stream' in req ? (req.stream.session ?? req.socket) : req.socket;
}

/** The TLS socket a request came over. */
export function tlsSocketOf(req: ApiRequest): TLSSocket {
  const socket = 'stream' in req ? (req.stream.session?.socket ?? req.socket) : req.socket;
  return socket as TLSSocket;
}
