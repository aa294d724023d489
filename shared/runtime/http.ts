// The operational HTTP endpoint every long-running olmq process serves: /metrics (Prometheus
// text format), /healthz (the process is alive), /readyz (it can do its work: connected to
// NATS, consumers started, ...).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A named readiness check; resolves to an empty string when ready, else the reason. */
export type ReadinessCheck = () => string | Promise<string>;

/** The running endpoint. */
export interface OperationsEndpoint {
  /** http://host:port */
  url: string;
  port: number;
  close(): Promise<void>;
}

// Runs every check; a check that throws is failing with its error message.
function readiness(checks: Record<string, ReadinessCheck>): Promise<(readonly [string, string])[]> {
  return Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        return [name, await check()] as const;
      } catch (error) {
        return [name, error instanceof Error ? error.message : String(error)] as const;
      }
    }),
  );
}

/** Serves /metrics, /healthz and /readyz on `port` (0 = any free port). */
export async function serveOperations(options: {
  port: number;
  host?: string;
  registry: Registry;
  readiness: Record<string, ReadinessCheck>;
}): Promise<OperationsEndpoint> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const reply = (code: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      response.writeHead(code, { 'content-type': type }).end(body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return reply(405, 'method not allowed\n');
    if (path === '/healthz' || path === '/livez') return reply(200, 'ok\n');
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => reply(200, text, options.registry.contentType),
        (error: Error) => reply(500, `metrics failed: ${error.message}\n`),
      );
      return;
    }
    if (path === '/readyz') {
      void readiness(options.readiness).then((results) => {
        const failing = results.filter(([, reason]) => reason !== '');
        const lines = results.map(([name, reason]) =>
          reason === '' ? `[+] ${name} ok` : `[-] ${name} failed: ${reason}`,
        );
        const verdict = failing.length === 0 ? 'ready' : 'not ready';
        reply(failing.length === 0 ? 200 : 503, `${lines.join('\n')}\n${verdict}\n`);
      });
      return;
    }
    reply(404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // scrapers keep connections alive; do not wait for them
      }),
  };
}
