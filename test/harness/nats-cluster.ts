// Test fixture: three real nats-servers clustered on loopback (JetStream, temp store dirs, client
// ports chosen by the servers, route ports found free just before), stopped and cleaned up at
// the test's teardown. Servers can be SIGKILLed and restarted on the same ports and stores.
import { createServer } from 'node:net';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Test } from 'tap';
import { startNatsServer, type NatsServer } from '../../shared/bus/nats-server.js';
import { waitFor } from './wait.js';

/** What a fixture needs of a test: somewhere to register its cleanup (a bench passes its own). */
type Teardowns = Pick<Test, 'teardown'>;

/** A running 3-node cluster. */
export interface NatsCluster {
  /** The servers, by index; a killed one stays here until restarted. */
  readonly servers: readonly NatsServer[];
  /** Every client URL, comma-separated (what --nats-url takes). */
  readonly urls: string;
  /** SIGKILLs server `i` (its store is kept). */
  kill(i: number): Promise<void>;
  /** Starts server `i` again on its ports and store, and waits until it serves JetStream. */
  restart(i: number): Promise<void>;
  /** Resolves once JetStream answers through server `i` (a meta leader is elected). */
  jetStreamReady(i: number, timeoutMs?: number): Promise<void>;
}

/** A TCP port nothing listens on right now (the route ports must be known before start). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a 3-node cluster for `t`. */
export async function natsClusterFor(t: Teardowns): Promise<NatsCluster> {
  const routePorts = [await freePort(), await freePort(), await freePort()];
  const routes = routePorts.map((p) => `nats-route://127.0.0.1:${p}`);
  const argsOf = (i: number): string[] => [
    '-n',
    `olmq-n${i}`,
    '--cluster_name',
    'olmq',
    '--cluster',
    `nats://127.0.0.1:${routePorts[i] ?? 0}`,
    '--routes',
    routes.filter((_, j) => j !== i).join(','),
  ];
  const servers: NatsServer[] = await Promise.all(
    [0, 1, 2].map((i) => startNatsServer({ extraArgs: argsOf(i), startTimeoutMs: 20_000 })),
  );
  t.teardown(() => Promise.all(servers.map((s) => s.stop())));
  const jetStreamReady = async (i: number, timeoutMs = 30_000): Promise<void> => {
    const server = servers[i];
    if (server === undefined) throw new Error(`no server ${i}`);
    const nc = await connect({ servers: server.url });
    try {
      await waitFor(
        `JetStream through ${server.url}`,
        async () => {
          const jsm = await jetstreamManager(nc, { timeout: 2_000 });
          return (await jsm.getAccountInfo()) !== undefined;
        },
        timeoutMs,
        200,
      );
    } finally {
      await nc.close();
    }
  };
  await Promise.all([0, 1, 2].map((i) => jetStreamReady(i)));
  return {
    servers,
    urls: servers.map((s) => s.url).join(','),
    async kill(i) {
      await servers[i]?.kill();
    },
    async restart(i) {
      const server = servers[i];
      if (server === undefined) throw new Error(`no server ${i}`);
      servers[i] = await server.restart();
      await jetStreamReady(i);
    },
    jetStreamReady,
  };
}
