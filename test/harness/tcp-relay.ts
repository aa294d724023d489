// Test fixture: a TCP relay in front of a server that can go silent, as a peer does whose
// network died without a FIN or RST: connections stay open, but nothing gets through any more.
// TLS passes through it untouched.
import { createConnection, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/** A relay on a random local port. */
export interface TcpRelay {
  port: number;
  /** From now on, bytes in either direction (and new connections) are swallowed. */
  goSilent(): void;
}

/** Relays 127.0.0.1:<random port> to 127.0.0.1:`targetPort`; closed at t's teardown. */
export async function relayTo(t: Test, targetPort: number): Promise<TcpRelay> {
  let silent = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined); // the other side is closed with it
  };
  const server = createServer((client) => {
    track(client);
    if (silent) {
      client.resume(); // accepted, read and never answered
      return;
    }
    const upstream = createConnection(targetPort, '127.0.0.1');
    track(upstream);
    client.on('data', (chunk: Buffer) => silent || upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => silent || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    port: (server.address() as AddressInfo).port,
    goSilent: () => (silent = true),
  };
}
