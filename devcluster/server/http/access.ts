// Who is asking and whether they may: each request is authenticated (client certificate, bearer
// token, impersonation) and every action authorized by RBAC, as kube-apiserver does it.
import type { TLSSocket } from 'node:tls';
import {
  authenticate,
  authorize,
  forbiddenStatus,
  type AuthenticationContext,
  type AuthenticationResult,
  type RbacSource,
  type RequestAttributes,
} from '../../auth/index.js';
import { ApiError } from '../../api/errors.js';
import type { ApiRequest } from '../transport.js';

/** Throws 403 Forbidden, worded as kube does, unless RBAC allows the request (system:masters always may). */
export function authorizeOrThrow(attributes: RequestAttributes, rbac: RbacSource): void {
  if (attributes.user.groups.includes('system:masters')) return;
  const decision = authorize(attributes, rbac);
  if (!decision.allowed) {
    const status = forbiddenStatus(attributes, decision);
    throw new ApiError('Forbidden', status.message, status.details);
  }
}

/** Authentication results of connections identified by their client certificate only. */
const certificateUsers = new WeakMap<object, AuthenticationResult>();

type PeerIdentity = { commonName: string; organizations: string[] } | undefined;

/** Peer identities per TLS connection: reading the certificate is costly and it never changes. */
const peerIdentities = new WeakMap<object, PeerIdentity>();

function peerCertificate(req: ApiRequest): PeerIdentity {
  const { connection } = req;
  if (peerIdentities.has(connection)) return peerIdentities.get(connection);
  const identity = readPeerCertificate(req.tlsSocket);
  peerIdentities.set(connection, identity);
  return identity;
}

function readPeerCertificate(socket: TLSSocket): PeerIdentity {
  if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
  const certificate = socket.getPeerCertificate();
  if (!certificate || !certificate.subject) return undefined;
  const subject = certificate.subject as unknown as Record<string, string | string[] | undefined>;
  const cn = subject['CN'];
  const o = subject['O'];
  return {
    commonName: Array.isArray(cn) ? (cn[0] ?? '') : (cn ?? ''),
    organizations: Array.isArray(o) ? o : o !== undefined ? [o] : [],
  };
}

/**
 * Authenticates a request. A connection authenticated by its client certificate alone (no
 * token, no impersonation) keeps its identity, so only such results are reused.
 */
export function authenticateRequest(
  req: ApiRequest,
  context: () => AuthenticationContext,
): AuthenticationResult {
  let plain = req.headers['authorization'] === undefined;
  for (const header in req.headers) if (header.startsWith('impersonate-')) plain = false;
  if (plain) {
    const cached = certificateUsers.get(req.connection);
    if (cached) return cached;
  }
  const outcome = authenticate(
    {
      clientCertificate: peerCertificate(req),
      authorizationHeader: req.headers['authorization'],
      headers: req.distinctHeaders(),
    },
    context(),
  );
  if (plain && outcome.ok) certificateUsers.set(req.connection, outcome);
  return outcome;
}
