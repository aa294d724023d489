// ServiceAccount tokens: issued as real clusters issue them, refused when they should be.
import { generateKeyPairSync, sign } from 'node:crypto';
import t from 'tap';
import {
  createServiceAccountSigningKey,
  InvalidSigningKeyError,
  issueServiceAccountToken,
  serviceAccountIssuer,
  UnsupportedSigningKeyError,
  verifyServiceAccountToken,
} from '../../devcluster/auth/index.js';

const signingKey = createServiceAccountSigningKey();
const account = { namespace: 'ns1', name: 'builder', uid: '6a1f0c1e-0000-4000-8000-000000000001' };
const issuedAt = new Date('2026-01-01T00:00:00Z');
const existing = (namespace: string, name: string) =>
  namespace === account.namespace && name === account.name ? account.uid : undefined;

function decodeSegment(token: string, index: number): Record<string, unknown> {
  const segment = token.split('.')[index] ?? '';
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
}

function secondsAfter(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}

void t.test('service account token - header names the algorithm and a key id', (t) => {
  const { token } = issueServiceAccountToken(signingKey, account, 3600, issuedAt);
  const header = decodeSegment(token, 0);
  t.equal(header['alg'], 'ES256');
  t.match(header['kid'], /^[A-Za-z0-9_-]{43}$/);
  t.end();
});

void t.test('service account token - claims are those of a TokenRequest token', (t) => {
  const { token, expirationTimestamp } = issueServiceAccountToken(
    signingKey,
    account,
    3600,
    issuedAt,
  );
  const claims = decodeSegment(token, 1);
  const iat = issuedAt.getTime() / 1000;
  t.match(claims, {
    aud: [serviceAccountIssuer],
    exp: iat + 3600,
    iat,
    nbf: iat,
    iss: serviceAccountIssuer,
    sub: 'system:serviceaccount:ns1:builder',
    'kubernetes.io': { namespace: 'ns1', serviceaccount: { name: 'builder', uid: account.uid } },
  });
  t.type(claims['jti'], 'string');
  t.equal(expirationTimestamp, '2026-01-01T01:00:00Z');
  t.end();
});

void t.test('service account token - a valid token yields the ServiceAccount identity', (t) => {
  const { token } = issueServiceAccountToken(signingKey, account, 3600, issuedAt);
  const result = verifyServiceAccountToken(token, signingKey, existing, secondsAfter(issuedAt, 10));
  t.ok(result.ok);
  if (result.ok) {
    t.equal(result.user.username, 'system:serviceaccount:ns1:builder');
    t.equal(result.user.uid, account.uid);
    t.same(result.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:ns1']);
    t.match(result.user.extra?.['authentication.kubernetes.io/credential-id'], [/^JTI=/]);
  }
  t.end();
});

void t.test('service account token - refused once expired beyond the 60 s leeway', (t) => {
  const { token } = issueServiceAccountToken(signingKey, account, 600, issuedAt);
  t.same(
    verifyServiceAccountToken(token, signingKey, existing, secondsAfter(issuedAt, 600 + 59)).ok,
    true,
  );
  t.same(verifyServiceAccountToken(token, signingKey, existing, secondsAfter(issuedAt, 600 + 61)), {
    ok: false,
    rejection: 'expired',
  });
  t.end();
});

void t.test('service account token - refused before it is valid', (t) => {
  const { token } = issueServiceAccountToken(signingKey, account, 600, issuedAt);
  t.same(verifyServiceAccountToken(token, signingKey, existing, secondsAfter(issuedAt, -120)), {
    ok: false,
    rejection: 'not-yet-valid',
  });
  t.end();
});

void t.test('service account token - signed by another key is refused', (t) => {
  const { token } = issueServiceAccountToken(
    createServiceAccountSigningKey(),
    account,
    600,
    issuedAt,
  );
  t.same(verifyServiceAccountToken(token, signingKey, existing, issuedAt), {
    ok: false,
    rejection: 'bad-signature',
  });
  t.end();
});

void t.test('service account token - altered claims break the signature', (t) => {
  const { token } = issueServiceAccountToken(signingKey, account, 600, issuedAt);
  const [header, claims, signature] = token.split('.');
  const altered = JSON.parse(Buffer.from(claims ?? '', 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
  altered['exp'] = 4_000_000_000;
  const forged = `${header}.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`;
  t.same(verifyServiceAccountToken(forged, signingKey, existing, issuedAt), {
    ok: false,
    rejection: 'bad-signature',
  });
  t.end();
});

void t.test('service account token - alg none is refused', (t) => {
  const { token } = issueServiceAccountToken(signingKey, account, 600, issuedAt);
  const claims = token.split('.')[1] ?? '';
  const header = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
  t.same(verifyServiceAccountToken(`${header}.${claims}.`, signingKey, existing, issuedAt), {
    ok: false,
    rejection: 'bad-signature',
  });
  t.end();
});

void t.test('service account token - refused once the ServiceAccount is deleted', (t) => {
  const { token } = issueServiceAccountToken(signingKey, account, 600, issuedAt);
  t.same(
    verifyServiceAccountToken(token, signingKey, () => undefined, issuedAt),
    {
      ok: false,
      rejection: 'service-account-deleted',
    },
  );
  t.end();
});

void t.test(
  'service account token - refused when the ServiceAccount was re-created with a new uid',
  (t) => {
    const { token } = issueServiceAccountToken(signingKey, account, 600, issuedAt);
    t.same(
      verifyServiceAccountToken(token, signingKey, () => 'another-uid', issuedAt),
      {
        ok: false,
        rejection: 'service-account-deleted',
      },
    );
    t.end();
  },
);

void t.test('service account token - garbage is malformed', (t) => {
  t.same(verifyServiceAccountToken('not-a-jwt', signingKey, existing, issuedAt), {
    ok: false,
    rejection: 'malformed',
  });
  t.same(verifyServiceAccountToken('a.b.c', signingKey, existing, issuedAt), {
    ok: false,
    rejection: 'malformed',
  });
  t.end();
});

void t.test('service account token - a JWT of another issuer is not ours', (t) => {
  const header = Buffer.from(JSON.stringify({ alg: 'ES256' })).toString('base64url');
  const claims = Buffer.from(JSON.stringify({ iss: 'https://example.com', sub: 'x' })).toString(
    'base64url',
  );
  const signature = sign('sha256', Buffer.from(`${header}.${claims}`), {
    key: signingKey,
    dsaEncoding: 'ieee-p1363',
  }).toString('base64url');
  t.same(
    verifyServiceAccountToken(`${header}.${claims}.${signature}`, signingKey, existing, issuedAt),
    {
      ok: false,
      rejection: 'not-a-service-account-token',
    },
  );
  t.end();
});

void t.test('service account token - RSA signing keys sign RS256 tokens', (t) => {
  const rsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const { token } = issueServiceAccountToken(rsaKey, account, 600, issuedAt);
  t.equal(decodeSegment(token, 0)['alg'], 'RS256');
  t.equal(verifyServiceAccountToken(token, rsaKey, existing, issuedAt).ok, true);
  t.end();
});

void t.test('service account token - unsupported key types are a typed error', (t) => {
  const edKey = generateKeyPairSync('ed25519')
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  t.throws(
    () => issueServiceAccountToken(edKey, account, 600, issuedAt),
    UnsupportedSigningKeyError,
  );
  t.end();
});

void t.test(
  'service account token - an unreadable signing key is a typed error keeping the cause',
  (t) => {
    const error = t.throws(() => issueServiceAccountToken('not a pem', account, 600, issuedAt));
    t.type(error, InvalidSigningKeyError);
    t.ok(error instanceof Error && error.cause !== undefined, 'cause kept');
    t.end();
  },
);
