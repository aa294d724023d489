// ServiceAccount tokens: JWTs shaped like those of TokenRequest (bound tokens), signed with the
// cluster's signing key and checked the way kube's ServiceAccount authenticator checks them.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  sign,
  verify,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { serviceAccountGroups, serviceAccountUsername } from './identity.js';
import type { IssuedToken, UserInfo } from './types.js';
import { kubeTime } from '../../shared/kube/time.js';

/** Issuer and audience of every token the devcluster issues (kube's default in-cluster issuer). */
export const serviceAccountIssuer = 'https://kubernetes.default.svc.cluster.local';

/** Clock skew kube tolerates on exp/nbf/iat (go-jose's default leeway). */
const leewaySeconds = 60;

/** The signing key PEM cannot be read as a private key. */
export class InvalidSigningKeyError extends Error {
  /** Stable code of this failure. */
  readonly code = 'InvalidSigningKey';
  constructor(options?: ErrorOptions) {
    super('service account signing key is not a PEM private key', options);
    this.name = 'InvalidSigningKeyError';
  }
}

/** The signing key cannot sign JWTs (only EC P-256 → ES256 and RSA → RS256 are supported). */
export class UnsupportedSigningKeyError extends Error {
  /** Stable code of this failure. */
  readonly code = 'UnsupportedSigningKey';
  constructor(keyType: string) {
    super(`service account signing key of type ${keyType} is not supported (use EC P-256 or RSA)`);
    this.name = 'UnsupportedSigningKeyError';
  }
}

type Algorithm = 'ES256' | 'RS256';

interface SigningKey {
  algorithm: Algorithm;
  privateKey: KeyObject;
  publicKey: KeyObject;
  keyId: string;
}

// Parsing a PEM key costs far more than verifying a signature: keep the last few.
const signingKeys = new Map<string, SigningKey>();

function signingKeyOf(pem: string): SigningKey {
  const cached = signingKeys.get(pem);
  if (cached !== undefined) return cached;
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw new InvalidSigningKeyError({ cause: error });
  }
  const publicKey = createPublicKey(privateKey);
  let algorithm: Algorithm;
  if (privateKey.asymmetricKeyType === 'rsa') algorithm = 'RS256';
  else if (
    privateKey.asymmetricKeyType === 'ec' &&
    privateKey.asymmetricKeyDetails?.namedCurve === 'prime256v1'
  ) {
    algorithm = 'ES256';
  } else {
    throw new UnsupportedSigningKeyError(privateKey.asymmetricKeyType ?? 'unknown');
  }
  // kube derives the key id from the public key: base64url(sha256(DER of SubjectPublicKeyInfo)).
  const keyId = createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
  const key = { algorithm, privateKey, publicKey, keyId };
  if (signingKeys.size >= 8) signingKeys.clear();
  signingKeys.set(pem, key);
  return key;
}

function base64UrlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** RFC 3339 without fractional seconds, as metav1.Time serializes. */
function rfc3339(seconds: number): string {
  return kubeTime(new Date(seconds * 1000));
}

/** Issues a ServiceAccount token (TokenRequest), verifiable by `authenticate`. */
export function issueServiceAccountToken(
  signingKeyPem: string,
  serviceAccount: { namespace: string; name: string; uid: string },
  expirationSeconds: number,
  now: Date,
): { token: string; expirationTimestamp: string } {
  const key = signingKeyOf(signingKeyPem);
  const issuedAt = Math.floor(now.getTime() / 1000);
  const expiresAt = issuedAt + Math.floor(expirationSeconds);
  const header = { alg: key.algorithm, kid: key.keyId };
  // Claim names and nesting as real clusters issue them (keys in go-jose's sorted order).
  const claims = {
    aud: [serviceAccountIssuer],
    exp: expiresAt,
    iat: issuedAt,
    iss: serviceAccountIssuer,
    jti: randomUUID(),
    'kubernetes.io': {
      namespace: serviceAccount.namespace,
      serviceaccount: { name: serviceAccount.name, uid: serviceAccount.uid },
    },
    nbf: issuedAt,
    sub: serviceAccountUsername(serviceAccount.namespace, serviceAccount.name),
  };
  const signingInput = `${base64UrlJson(header)}.${base64UrlJson(claims)}`;
  const signature = sign('sha256', Buffer.from(signingInput), {
    key: key.privateKey,
    dsaEncoding: 'ieee-p1363',
  });
  return {
    token: `${signingInput}.${signature.toString('base64url')}`,
    expirationTimestamp: rfc3339(expiresAt),
  };
}

/** Why a bearer token was refused (logged by the server, never shown to the client). */
export type TokenRejection =
  | 'malformed'
  | 'not-a-service-account-token'
  | 'bad-signature'
  | 'expired'
  | 'not-yet-valid'
  | 'service-account-deleted'
  | 'revoked';

/** Outcome of checking a ServiceAccount token. */
export type TokenVerification =
  { ok: true; user: UserInfo } | { ok: false; rejection: TokenRejection };

function parseJsonSegment(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function audienceIncludes(aud: unknown, expected: string): boolean {
  return aud === expected || (Array.isArray(aud) && aud.includes(expected));
}

/**
 * Checks a token issued by {@link issueServiceAccountToken}: signature, issuer, audience, time
 * window (with kube's 60 s leeway) and that the ServiceAccount still exists with the same uid.
 */
export function verifyServiceAccountToken(
  token: string,
  signingKeyPem: string,
  serviceAccountUid: (namespace: string, name: string) => string | undefined,
  now: Date,
  revoked?: (token: IssuedToken) => boolean,
): TokenVerification {
  const segments = token.split('.');
  if (segments.length !== 3) return { ok: false, rejection: 'malformed' };
  const [headerSegment = '', claimsSegment = '', signatureSegment = ''] = segments;
  const header = parseJsonSegment(headerSegment);
  const claims = parseJsonSegment(claimsSegment);
  if (header === undefined || claims === undefined) return { ok: false, rejection: 'malformed' };
  if (claims['iss'] !== serviceAccountIssuer) {
    return { ok: false, rejection: 'not-a-service-account-token' };
  }
  const key = signingKeyOf(signingKeyPem);
  const signatureValid =
    header['alg'] === key.algorithm &&
    verify(
      'sha256',
      Buffer.from(`${headerSegment}.${claimsSegment}`),
      { key: key.publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signatureSegment, 'base64url'),
    );
  if (!signatureValid) return { ok: false, rejection: 'bad-signature' };
  if (!audienceIncludes(claims['aud'], serviceAccountIssuer)) {
    return { ok: false, rejection: 'not-a-service-account-token' };
  }
  const seconds = now.getTime() / 1000;
  const { exp, nbf, iat } = claims;
  if (typeof exp !== 'number' || seconds > exp + leewaySeconds)
    return { ok: false, rejection: 'expired' };
  if (typeof nbf === 'number' && seconds < nbf - leewaySeconds)
    return { ok: false, rejection: 'not-yet-valid' };
  if (typeof iat === 'number' && seconds < iat - leewaySeconds)
    return { ok: false, rejection: 'not-yet-valid' };
  const kube = record(claims['kubernetes.io']);
  const account = record(kube?.['serviceaccount']);
  const namespace = kube?.['namespace'];
  const name = account?.['name'];
  const uid = account?.['uid'];
  if (typeof namespace !== 'string' || typeof name !== 'string' || typeof uid !== 'string') {
    return { ok: false, rejection: 'malformed' };
  }
  if (claims['sub'] !== serviceAccountUsername(namespace, name))
    return { ok: false, rejection: 'malformed' };
  // A token outlives nothing: deleting (or re-creating) the ServiceAccount revokes it.
  if (serviceAccountUid(namespace, name) !== uid) {
    return { ok: false, rejection: 'service-account-deleted' };
  }
  const jti = claims['jti'];
  if (revoked?.({ namespace, name, issuedAt: typeof iat === 'number' ? iat : 0, jti: String(jti) }))
    return { ok: false, rejection: 'revoked' };
  const user: UserInfo = {
    username: serviceAccountUsername(namespace, name),
    uid,
    groups: serviceAccountGroups(namespace),
    ...(typeof jti === 'string'
      ? { extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${jti}`] } }
      : {}),
  };
  return { ok: true, user };
}

/** A fresh ES256 signing key (PKCS#8 PEM) for ServiceAccount tokens. */
export function createServiceAccountSigningKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}
