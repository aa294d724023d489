// The NATS connection of a long-running olmq process (`olmq up`, `olmq run`, `olmq watcher`,
// `olmq packageserver`): it reconnects forever, logging each state change.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';

/** Connects to NATS; the connection then reconnects forever, logging each state change. */
export async function connectNats(url: string, name: string, log: Logger): Promise<NatsConnection> {
  const nc = await connect({
    servers: url,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    // No stack trace captured per request: it costs more than the request at high rates, and
    // our errors say what failed without it.
    noAsyncTraces: true,
  });
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect')
        log.warn({ nats: status.type }, `NATS ${status.type}`);
    }
  })();
  return nc;
}
