// Test fixture: a token server of the distribution token-auth spec, for a docker-registry
// configured with `auth.token`. It issues RS256 JWTs (signed with a key made by openssl, the
// certificate in the x5c header and in the registry's rootcertbundle) for Basic credentials or
// an identity token (the OAuth2 refresh-token grant); a user named `denied` gets 403.
import { spawnSync } from 'node:child_process';
import { randomBytes, sign, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** A running token server. */
export interface TokenServer {
  realm: string;
  service: string;
  issuer: string;
  /** The certificate file the registry trusts (rootcertbundle). */
  certificateFile: string;
  /** Accepted Basic credentials and identity token. */
  username: string;
  password: string;
  identityToken: string;
  /** A token for `scope` (e.g. repository:x:pull,push) for the test's own pushes. */
  tokenFor(scope: string): string;
  stop(): Promise<void>;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** Starts a token server whose key and certificate are written into `dir`. */
export async function startTokenServer(dir: string): Promise<TokenServer> {
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'token.key',
      '-out',
      'token.crt',
      '-days',
      '2',
      '-subj',
      '/CN=olmq test token issuer',
    ],
    { cwd: dir, encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl could not make the token key: ${made.stderr}`);
  const key = readFileSync(join(dir, 'token.key'), 'utf8');
  const certificate = new X509Certificate(readFileSync(join(dir, 'token.crt')));
  const service = 'olmq-test-registry';
  const issuer = 'olmq-test-issuer';
  const username = 'olmq-token-user';
  const password = randomBytes(9).toString('base64url');
  const identityToken = randomBytes(12).toString('base64url');

  const tokenFor = (scope: string, subject = username): string => {
    const access = scope
      .split(' ')
      .filter((s) => s !== '')
      .map((s) => {
        const [type = '', name = '', actions = ''] = s.split(':');
        return { type, name, actions: actions.split(',') };
      });
    const now = Math.floor(Date.now() / 1000);
    const header = { typ: 'JWT', alg: 'RS256', x5c: [certificate.raw.toString('base64')] };
    const claims = {
      iss: issuer,
      sub: subject,
      aud: service,
      exp: now + 300,
      nbf: now - 10,
      iat: now,
      jti: randomBytes(8).toString('hex'),
      access,
    };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    return `${input}.${b64url(sign('sha256', Buffer.from(input), key))}`;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://token');
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const scope = url.searchParams.get('scope') ?? form.get('scope') ?? '';
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'POST') {
        if (
          form.get('grant_type') !== 'refresh_token' ||
          form.get('refresh_token') !== identityToken
        )
          return answer(401, { error: 'invalid refresh token' });
        return answer(200, { access_token: tokenFor(scope), expires_in: 300 });
      }
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (basic === undefined) return answer(401, { error: 'credentials required' });
      const [user, pass] = Buffer.from(basic, 'base64').toString('utf8').split(':');
      if (user === 'denied') return answer(403, { error: 'access denied' });
      if (user !== username || pass !== password) return answer(401, { error: 'bad credentials' });
      return answer(200, { token: tokenFor(scope), expires_in: 300 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    realm: `http://127.0.0.1:${port}/token`,
    service,
    issuer,
    certificateFile: join(dir, 'token.crt'),
    username,
    password,
    identityToken,
    tokenFor: (scope) => tokenFor(scope),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
