// Test fixture: a real nats-server with JetStream on a free port and a temp store dir,
// stopped and cleaned up when the test ends.
import type { Test } from 'tap';
import {
  startNatsServer,
  type NatsServer,
  type NatsServerOptions,
} from '../../shared/bus/nats-server.js';

/** Starts a nats-server for test `t`; it is stopped (and its store removed) at t's teardown. */
export async function natsServerFor(t: Test, options: NatsServerOptions = {}): Promise<NatsServer> {
  let server = await startNatsServer(options);
  const restart = server.restart.bind(server);
  // Track restarts so teardown stops whichever process is current.
  const tracked: NatsServer = {
    get url() {
      return server.url;
    },
    get port() {
      return server.port;
    },
    get monitorUrl() {
      return server.monitorUrl;
    },
    get storeDir() {
      return server.storeDir;
    },
    get pid() {
      return server.pid;
    },
    stop: () => server.stop(),
    kill: () => server.kill(),
    async restart() {
      server = await restart();
      return tracked;
    },
  };
  t.teardown(() => server.stop());
  return tracked;
}
