// The TLS listener: each connection goes to the server of the protocol it negotiated (ALPN) —
// HTTP/2 for clients that offer it (kubectl and client-go, as with kube-apiserver), HTTP/1.1 for
// the others (@kubernetes/client-node) — and both hand their requests to one request listener as
// exchanges (transport.ts): HTTP/2 requests are served on their streams, HTTP/1.1 ones by node:http.
import { createServer as createHttp1Server, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { ClusterCertificates } from '../auth/index.js';
import { Http1Exchange, Http2Exchange, type ApiRequest, type ApiResponse } from './transport.js';

/** Where and how to listen. */
export interface ListenOptions {
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  certificates: ClusterCertificates;
  /** Serves every request, whatever its protocol. */
  listener: (req: ApiRequest, res: ApiResponse) => void;
}

/** A listening server. */
export interface Listening {
  port: number;
  /** Stops listening and ends every connection (HTTP/2 sessions and idle keep-alives alike). */
  close(): Promise<void>;
}

/** The raw header list of an HTTP/2 request, or one made from its headers should node not give it. */
function rawHeadersOf(raw: unknown, headers: IncomingHttpHeaders): readonly string[] {
  if (Array.isArray(raw) && raw.every((item) => typeof item === 'string')) return raw;
  const list: string[] = [];
  for (const [name, value] of Object.entries(headers))
    for (const item of Array.isArray(value) ? value : [value ?? '']) list.push(name, item);
  return list;
}

/** Listens on host:port with the cluster's serving certificate; resolves once listening. */
export async function listen(options: ListenOptions): Promise<Listening> {
  const { certificates, listener } = options;
  const http2 = createHttp2Server({
    // Watches replaying a long history queue more than the default 10 MB per connection.
    maxSessionMemory: 256,
  });
  // Node passes the raw headers after the flags (not in its type declarations): repeated
  // headers stay apart there.
  http2.on('stream', (stream, headers, _flags, ...more: unknown[]) => {
    const exchange = new Http2Exchange(stream, headers, rawHeadersOf(more[0], headers));
    listener(exchange, exchange);
  });
  const http1 = createHttp1Server((req, res) => {
    const exchange = new Http1Exchange(req, res);
    listener(exchange, exchange);
  });
  // Kept so close() can end them: HTTP/2 sessions and idle HTTP/1.1 keep-alive connections alike.
  const connections = new Set<TLSSocket>();
  const server = createTlsServer(
    {
      key: certificates.serverKeyPem,
      cert: certificates.serverCertPem,
      ca: certificates.caCertPem,
      requestCert: true,
      rejectUnauthorized: false,
      ALPNProtocols: ['h2', 'http/1.1'],
    },
    (socket) => {
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
      if (socket.alpnProtocol === 'h2') http2.emit('connection', socket);
      else http1.emit('connection', socket);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of connections) socket.destroy();
      });
      // Never listening itself, node:http's server still has its connection bookkeeping to stop.
      http1.close(() => undefined);
    },
  };
}
