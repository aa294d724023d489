// Requests to one repository of one registry: the scheme (HTTPS; plain HTTP only for
// loopback), the auth challenge answered once (Basic, or a Bearer token from the token
// endpoint, cached until it expires) and registry error answers mapped to typed errors.
import { z } from 'zod';
import { basicAuthorization, parseChallenge, tokenFromAnswer, type Challenge } from './auth.js';
import { OciError } from './errors.js';
import { exchange, isPlainHttpAnswer, type HttpAnswer } from './http.js';
import { isLoopbackRegistry, type ImageReference } from './reference.js';
import type { RegistryCredential } from './types.js';

/** What the client shares across sessions: settings, the scheme and token caches. */
export interface SessionContext {
  ca: string[] | undefined;
  timeoutMs: number;
  userAgent: string;
  /** Scheme that worked per registry host. */
  schemes: Map<string, 'https' | 'http'>;
  /** Bearer tokens by realm/service/scope/identity, with their expiry. */
  tokens: Map<string, { authorization: string; expiresAt: number }>;
}

/** A request inside a repository (`path` after /v2/<repository>/). */
export interface RepositoryRequest {
  method: 'GET' | 'HEAD';
  path: string;
  accept?: string;
  maxBytes: number;
  what: string;
}

const registryErrorsSchema = z.object({
  errors: z.array(z.object({ code: z.string(), message: z.string().optional() })),
});

/** A session with one repository; cheap, made per pull. */
export class RepositorySession {
  private authorization: string | undefined;

  constructor(
    private readonly context: SessionContext,
    readonly ref: ImageReference,
    private readonly credential: RegistryCredential | undefined,
  ) {}

  /** The host requests go to (Docker Hub's API host for docker.io). */
  private get host(): string {
    return this.ref.registry === 'docker.io' ? 'registry-1.docker.io' : this.ref.registry;
  }

  /** Sends a request; answers other than 2xx become typed errors. */
  async send(request: RepositoryRequest): Promise<HttpAnswer> {
    let answer = await this.attempt(request);
    if (answer.status === 401 && this.authorization === undefined) {
      this.authorization = await this.authorize(answer, request.what);
      answer = await this.attempt(request);
    }
    if (answer.status >= 200 && answer.status < 300) return answer;
    throw this.failure(answer, request.what);
  }

  private async attempt(request: RepositoryRequest): Promise<HttpAnswer> {
    const headers: Record<string, string> = { 'user-agent': this.context.userAgent };
    if (request.accept !== undefined) headers.accept = request.accept;
    if (this.authorization !== undefined) headers.authorization = this.authorization;
    const path = `/v2/${this.ref.repository}/${request.path}`;
    const known = this.context.schemes.get(this.host);
    const scheme = known ?? 'https';
    try {
      const answer = await exchange({
        method: request.method,
        url: `${scheme}://${this.host}${path}`,
        headers,
        maxBytes: request.maxBytes,
        what: request.what,
        timeoutMs: this.context.timeoutMs,
        ca: this.context.ca,
      });
      this.context.schemes.set(this.host, scheme);
      return answer;
    } catch (error) {
      if (known !== undefined || !isPlainHttpAnswer(error)) throw error;
      if (!isLoopbackRegistry(this.host))
        throw new OciError(
          'InsecureRegistry',
          `${request.what}: registry ${this.host} speaks plain HTTP; olmq uses plain HTTP only for loopback registries`,
          { cause: error },
        );
      this.context.schemes.set(this.host, 'http');
      return this.attempt(request);
    }
  }

  /** Answers a 401's challenge: the Authorization header to retry with. */
  private async authorize(answer: HttpAnswer, what: string): Promise<string> {
    const challenge = parseChallenge(headerOf(answer, 'www-authenticate'));
    if (challenge === undefined) throw this.failure(answer, what);
    if (challenge.scheme === 'basic') {
      if (this.credential?.kind !== 'basic')
        throw new OciError(
          'Unauthorized',
          `${what}: registry ${this.ref.registry} requires credentials (401) and none were given for it`,
          { status: 401 },
        );
      return basicAuthorization(this.credential.username, this.credential.password);
    }
    return this.bearer(challenge, what);
  }

  private async bearer(challenge: Challenge, what: string): Promise<string> {
    const realm = challenge.params.realm;
    if (realm === undefined || !/^https?:\/\//.test(realm))
      throw new OciError(
        'BadResponse',
        `${what}: registry ${this.ref.registry} sent a Bearer challenge without a usable realm`,
      );
    const scope = challenge.params.scope ?? `repository:${this.ref.repository}:pull`;
    const service = challenge.params.service ?? '';
    const identity =
      this.credential === undefined
        ? 'anonymous'
        : this.credential.kind === 'basic'
          ? `basic:${this.credential.username}`
          : 'identity-token';
    const key = `${realm}|${service}|${scope}|${identity}`;
    const cached = this.context.tokens.get(key);
    if (cached !== undefined && cached.expiresAt > Date.now()) return cached.authorization;
    const url = new URL(realm);
    const headers: Record<string, string> = { 'user-agent': this.context.userAgent };
    let method: 'GET' | 'POST' = 'GET';
    let body: string | undefined;
    if (this.credential?.kind === 'identityToken') {
      // An identity token is exchanged with the OAuth2 refresh-token grant.
      method = 'POST';
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: this.credential.token,
        service,
        scope,
        client_id: 'olmq',
      }).toString();
    } else {
      if (service !== '') url.searchParams.set('service', service);
      url.searchParams.set('scope', scope);
      if (this.credential?.kind === 'basic')
        headers.authorization = basicAuthorization(
          this.credential.username,
          this.credential.password,
        );
    }
    const tokenWhat = `token for ${this.ref.registry}/${this.ref.repository}`;
    const answer = await exchange({
      method,
      url: url.href,
      headers,
      ...(body === undefined ? {} : { body }),
      maxBytes: 1024 * 1024,
      what: tokenWhat,
      timeoutMs: this.context.timeoutMs,
      ca: this.context.ca,
    });
    if (answer.status === 401)
      throw new OciError(
        'Unauthorized',
        `${what}: the token endpoint of ${this.ref.registry} refused the credentials (401)`,
        { status: 401 },
      );
    if (answer.status === 403)
      throw new OciError(
        'Denied',
        `${what}: the token endpoint of ${this.ref.registry} denied access (403)`,
        { status: 403 },
      );
    if (answer.status !== 200)
      throw new OciError(
        'BadResponse',
        `${what}: the token endpoint of ${this.ref.registry} answered HTTP ${answer.status}`,
        { status: answer.status },
      );
    const token = tokenFromAnswer(answer.body, realm);
    const expiresIn = Number(
      (JSON.parse(answer.body.toString('utf8')) as { expires_in?: unknown }).expires_in ?? 60,
    );
    const authorization = `Bearer ${token}`;
    this.context.tokens.set(key, {
      authorization,
      expiresAt:
        Date.now() + Math.max(10, (Number.isFinite(expiresIn) ? expiresIn : 60) - 10) * 1000,
    });
    return authorization;
  }

  /** The typed error of a non-2xx answer, with the registry's error code when it sent one. */
  private failure(answer: HttpAnswer, what: string): OciError {
    const status = answer.status;
    const parsed = registryErrorsSchema.safeParse(safeJson(answer.body));
    const first = parsed.success ? parsed.data.errors[0] : undefined;
    const detail =
      first === undefined
        ? `HTTP ${status}`
        : `${first.code}${first.message === undefined || first.message === '' ? '' : `: ${first.message}`}`;
    const where = `${this.ref.registry}/${this.ref.repository}`;
    if (status === 401)
      return new OciError(
        'Unauthorized',
        `${what}: registry ${this.ref.registry} refused the credentials for ${this.ref.repository} (401 ${detail})`,
        { status },
      );
    if (status === 403)
      return new OciError('Denied', `${what}: access to ${where} denied (403 ${detail})`, {
        status,
      });
    if (status === 404)
      return new OciError(
        'NotFound',
        `${what}: not found in ${where} (${first === undefined ? '404' : detail})`,
        { status },
      );
    return new OciError(
      'BadResponse',
      `${what}: registry ${this.ref.registry} answered ${detail}`,
      { status },
    );
  }
}

function headerOf(answer: HttpAnswer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function safeJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
