// The NATS connection of a long-running olmq process (`olmq up`, `olmq run`, `olmq watcher`,
// `olmq packageserver`): a server list, credentials and TLS; it reconnects forever to any server
// of the list, logging each state change, and remembers a permission the server refused so the
// process's /readyz and its logs name the subject and the user.
import { readFileSync } from 'node:fs';
import {
  AuthorizationError,
  PermissionViolationError,
  UserAuthenticationExpiredError,
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';
import type { Logger } from 'pino';

/** Where NATS is and who olmq is to it. At most one of user, token, nkey seed, creds. */
export interface NatsConnectionSettings {
  /** Server URLs (nats://, tls://); the client picks one and fails over to the others. */
  servers: readonly string[];
  /** User name, with `password`. */
  user?: string | undefined;
  password?: string | undefined;
  /** Authentication token. */
  token?: string | undefined;
  /** File holding an nkey seed (SU...). Re-read at every (re)connect. */
  nkeySeedFile?: string | undefined;
  /** A .creds file (user JWT and nkey seed). Re-read at every (re)connect, so rotation works. */
  credsFile?: string | undefined;
  /** CA bundle that signs the servers' certificates; setting it turns TLS on. */
  tlsCaFile?: string | undefined;
  /** Client certificate and key (PEM) for servers that verify clients. */
  tlsCertFile?: string | undefined;
  tlsKeyFile?: string | undefined;
  /**
   * Replies come to subjects below this (default `_INBOX`), so a server can let each component
   * subscribe to its own replies only (see shared/bus/permissions.ts).
   */
  inboxPrefix?: string | undefined;
}

/** NATS refused the connection or could not be reached; retrying with the same settings fails again. */
export class NatsConnectError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'NatsConnectError';
  }
}

/** Who this connection authenticates as, in words for logs and errors. */
export function natsIdentity(settings: NatsConnectionSettings): string {
  if (settings.user !== undefined) return `user "${settings.user}"`;
  if (settings.credsFile !== undefined) return `the user of ${settings.credsFile}`;
  if (settings.nkeySeedFile !== undefined) return `the nkey of ${settings.nkeySeedFile}`;
  if (settings.token !== undefined) return 'the token user';
  return 'the anonymous user';
}

function authenticatorOf(settings: NatsConnectionSettings): Authenticator | undefined {
  const { credsFile, nkeySeedFile } = settings;
  if (credsFile !== undefined) return credsAuthenticator(() => readFileSync(credsFile));
  if (nkeySeedFile !== undefined)
    return nkeyAuthenticator(() =>
      new TextEncoder().encode(readFileSync(nkeySeedFile, 'utf8').trim()),
    );
  if (settings.token !== undefined) return tokenAuthenticator(settings.token);
  if (settings.user !== undefined)
    return usernamePasswordAuthenticator(settings.user, settings.password ?? '');
  return undefined;
}

function connectOptions(settings: NatsConnectionSettings, name: string): NodeConnectionOptions {
  const authenticator = authenticatorOf(settings);
  const tls =
    settings.tlsCaFile === undefined && settings.tlsCertFile === undefined
      ? undefined
      : {
          ...(settings.tlsCaFile === undefined ? {} : { caFile: settings.tlsCaFile }),
          ...(settings.tlsCertFile === undefined ? {} : { certFile: settings.tlsCertFile }),
          ...(settings.tlsKeyFile === undefined ? {} : { keyFile: settings.tlsKeyFile }),
        };
  return {
    servers: [...settings.servers],
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    // No stack trace captured per request: it costs more than the request at high rates, and
    // our errors say what failed without it.
    noAsyncTraces: true,
    ...(settings.inboxPrefix === undefined ? {} : { inboxPrefix: settings.inboxPrefix }),
    ...(authenticator === undefined ? {} : { authenticator }),
    ...(tls === undefined ? {} : { tls }),
  };
}

// The last permission a server refused, per connection (for /readyz).
const refusals = new WeakMap<NatsConnection, string>();

/**
 * Why `nc` cannot serve: "" when it can, else the connection is closed or the server refused
 * a permission (naming the subject and the user).
 */
export function natsProblem(nc: NatsConnection): string {
  if (nc.isClosed()) return 'connection closed';
  return refusals.get(nc) ?? '';
}

/** The sentence olmq says about a refused permission. */
export function describeRefusal(error: PermissionViolationError, who: string): string {
  return `NATS denies ${who} permission to ${error.operation} "${error.subject}" (see the component's permissions in k8s/nats-auth.conf)`;
}

/**
 * The refusal in `error` or its causes, if NATS refused a subject to this connection's user
 * (function hosts and JetStream calls wrap it).
 */
export function permissionRefusalIn(error: unknown): PermissionViolationError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof PermissionViolationError) return e;
    const parsed = PermissionViolationError.parse(e.message);
    if (parsed !== null) return parsed;
  }
  return undefined;
}

/**
 * Connects to NATS (a URL, or full settings); the connection then reconnects forever to the
 * servers of the list, logging each state change. Throws NatsConnectError when no server of
 * the list accepts the credentials or none is reachable.
 */
export async function connectNats(
  target: string | NatsConnectionSettings,
  name: string,
  log: Logger,
): Promise<NatsConnection> {
  const settings: NatsConnectionSettings =
    typeof target === 'string' ? { servers: target.split(',') } : target;
  const who = natsIdentity(settings);
  let nc: NatsConnection;
  try {
    nc = await connect(connectOptions(settings, name));
  } catch (error) {
    if (error instanceof AuthorizationError || error instanceof UserAuthenticationExpiredError)
      throw new NatsConnectError(
        `NATS at ${settings.servers.join(',')} refused ${who}: ${error.message}`,
        { cause: error },
      );
    const reason = error instanceof Error ? error.message : String(error);
    throw new NatsConnectError(
      `cannot connect to NATS at ${settings.servers.join(',')}: ${reason}`,
      { cause: error },
    );
  }
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect')
        log.warn({ nats: status.type, server: status.server }, `NATS ${status.type}`);
      else if (status.type === 'error' && status.error instanceof PermissionViolationError) {
        const message = describeRefusal(status.error, who);
        refusals.set(nc, message);
        log.error(
          { nats: 'permission', subject: status.error.subject, operation: status.error.operation },
          message,
        );
      } else if (status.type === 'error')
        log.error({ nats: 'error', err: status.error }, `NATS error: ${status.error.message}`);
    }
  })();
  return nc;
}
